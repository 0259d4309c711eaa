package io.prwrelay.server.lane;

import io.netty.util.concurrent.EventExecutor;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;

/**
 * Collects the outcomes of one sender request's fragments, from whichever event loops their lanes
 * live on, and reports them all once the last one is known, on the request's own event loop. Each
 * request is answered only from the outcomes of its own fragments, even when a lane carried them
 * downstream together with other requests'.
 *
 * <p>Finished fragments are written into slots taken with an atomic counter and the last outcome
 * hands the whole list to the request's loop in one task: a request of 1,000 tenants spread over
 * several loops crosses between loops once, not once per tenant. A fragment is its own {@link
 * BatchResult} (it keeps its outcome), so a tenant batch costs no object of its own here.
 */
public final class SenderRequest implements Fragment.Listener, Runnable {
  private static final AtomicIntegerFieldUpdater<SenderRequest> TAKEN =
      AtomicIntegerFieldUpdater.newUpdater(SenderRequest.class, "taken");
  private static final AtomicIntegerFieldUpdater<SenderRequest> WAITING =
      AtomicIntegerFieldUpdater.newUpdater(SenderRequest.class, "waiting");

  private final EventExecutor loop;
  private final BatchResult[] results;
  private final Consumer<List<BatchResult>> done;

  @SuppressWarnings("unused") // through TAKEN
  private volatile int taken;

  /** Outcomes still to come; the thread that takes it to zero sees every slot written before. */
  @SuppressWarnings("unused") // through WAITING
  private volatile int waiting;

  /**
   * @param loop the request's event loop; {@code done} runs there
   * @param fragments how many fragments will report
   * @param done receives every result once all fragments have reported
   */
  public SenderRequest(EventExecutor loop, int fragments, Consumer<List<BatchResult>> done) {
    this.loop = loop;
    this.results = new BatchResult[fragments];
    this.done = done;
    WAITING.set(this, fragments);
  }

  /**
   * Records an outcome known without sending (for example, delivered by an earlier attempt): the
   * fragment's body is released and it reports {@code outcome} to this request.
   *
   * @param fragment bound to this request ({@link Fragment#bind}) and never handed to a lane
   */
  public void settled(Fragment fragment, FragmentOutcome outcome) {
    fragment.complete(outcome);
  }

  @Override
  public void done(Fragment fragment, FragmentOutcome outcome) {
    results[TAKEN.getAndIncrement(this)] = fragment;
    if (WAITING.decrementAndGet(this) != 0) {
      return;
    }
    if (loop.inEventLoop()) {
      run();
    } else {
      loop.execute(this);
    }
  }

  /** Reports every result: on the request's loop, once all fragments reported. */
  @Override
  public void run() {
    done.accept(Arrays.asList(results));
  }
}
