package io.prwrelay.server.lane;

import io.netty.util.concurrent.EventExecutor;
import io.prwrelay.core.encode.SeriesCounts;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Collects the outcomes of one sender request's fragments, on the request's own event loop, and
 * reports them all once the last one is known. Each request is answered only from the outcomes of
 * its own fragments, even when a lane carried them downstream together with other requests'.
 */
public final class SenderRequest implements Fragment.Listener {
  /** One tenant's part of the request and how it ended. */
  public record Result(String tenant, SeriesCounts counts, FragmentOutcome outcome) {}

  private final EventExecutor loop;
  private final List<Result> results;
  private final Consumer<List<Result>> done;
  private int waiting;

  /**
   * @param loop the request's event loop; {@code done} runs there
   * @param fragments how many fragments will report
   * @param done receives every result once all fragments have reported
   */
  public SenderRequest(EventExecutor loop, int fragments, Consumer<List<Result>> done) {
    this.loop = loop;
    this.results = new ArrayList<>(fragments);
    this.waiting = fragments;
    this.done = done;
  }

  /** Records an outcome known without sending (for example, delivered by an earlier attempt). */
  public void settled(String tenant, SeriesCounts counts, FragmentOutcome outcome) {
    record(new Result(tenant, counts, outcome));
  }

  @Override
  public void done(Fragment fragment, FragmentOutcome outcome) {
    Result r = new Result(fragment.tenant(), fragment.counts(), outcome);
    if (loop.inEventLoop()) {
      record(r);
    } else {
      loop.execute(() -> record(r));
    }
  }

  private void record(Result r) {
    results.add(r);
    if (--waiting == 0) {
      done.accept(results);
    }
  }
}
