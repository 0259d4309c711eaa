package io.prwrelay.server.lane;

import io.netty.util.concurrent.EventExecutor;
import io.prwrelay.core.encode.SeriesCounts;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Collects the outcomes of one sender request's fragments, from whichever event loops their lanes
 * live on, and reports them all once the last one is known, on the request's own event loop. Each
 * request is answered only from the outcomes of its own fragments, even when a lane carried them
 * downstream together with other requests'.
 *
 * <p>Outcomes are written into slots taken with an atomic counter and the last outcome hands the
 * whole list to the request's loop in one task: a request of 1,000 tenants spread over several
 * loops crosses between loops once, not once per tenant.
 */
public final class SenderRequest implements Fragment.Listener {
  /** One tenant's part of the request and how it ended. */
  public record Result(String tenant, SeriesCounts counts, FragmentOutcome outcome) {}

  private final EventExecutor loop;
  private final Result[] results;
  private final Consumer<List<Result>> done;
  private final AtomicInteger taken = new AtomicInteger();

  /** Outcomes still to come; the thread that takes it to zero sees every slot written before. */
  private final AtomicInteger waiting;

  /**
   * @param loop the request's event loop; {@code done} runs there
   * @param fragments how many fragments will report
   * @param done receives every result once all fragments have reported
   */
  public SenderRequest(EventExecutor loop, int fragments, Consumer<List<Result>> done) {
    this.loop = loop;
    this.results = new Result[fragments];
    this.waiting = new AtomicInteger(fragments);
    this.done = done;
  }

  /** Records an outcome known without sending (for example, delivered by an earlier attempt). */
  public void settled(String tenant, SeriesCounts counts, FragmentOutcome outcome) {
    record(new Result(tenant, counts, outcome));
  }

  @Override
  public void done(Fragment fragment, FragmentOutcome outcome) {
    record(new Result(fragment.tenant(), fragment.counts(), outcome));
  }

  private void record(Result r) {
    results[taken.getAndIncrement()] = r;
    if (waiting.decrementAndGet() != 0) {
      return;
    }
    List<Result> all = Arrays.asList(results);
    if (loop.inEventLoop()) {
      done.accept(all);
    } else {
      loop.execute(() -> done.accept(all));
    }
  }
}
