package io.prwrelay.server.lane;

import io.netty.util.concurrent.EventExecutor;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;

/**
 * Collects the outcomes of one sender request's fragments, from whichever event loops their lanes
 * live on, and reports them all once the last one is known, on the request's own event loop. Each
 * request is answered only from the outcomes of its own fragments, even when a lane carried them
 * downstream together with other requests'.
 *
 * <p>A finished fragment keeps its outcome ({@link Fragment#outcome()}), so the request counts the
 * outcomes still to come and, when the last one is known, reports its list of fragments, in the
 * request's order, in one task: a request of 1,000 tenants spread over several loops crosses
 * between loops once, not once per tenant, and a tenant batch costs no object here.
 */
public final class SenderRequest implements Fragment.Listener, Runnable {
  private static final AtomicIntegerFieldUpdater<SenderRequest> WAITING =
      AtomicIntegerFieldUpdater.newUpdater(SenderRequest.class, "waiting");

  private static final AtomicIntegerFieldUpdater<SenderRequest> NEW_QUEUES =
      AtomicIntegerFieldUpdater.newUpdater(SenderRequest.class, "newQueues");

  private final EventExecutor loop;
  private final List<Fragment> fragments;
  private final Consumer<List<? extends BatchResult>> done;
  private final Object sender;

  /**
   * Outcomes still to come ({@link #WAITING}); the thread that takes it to zero sees every outcome
   * set before.
   */
  @SuppressWarnings("unused")
  private volatile int waiting;

  /** Queue mode: tenant queues this request's fragments were let make ({@link NewQueueGate}). */
  @SuppressWarnings("unused")
  private volatile int newQueues;

  /**
   * @param loop the request's event loop; {@code done} runs there
   * @param fragments every fragment of the request, each {@link Fragment#bind bound} to this
   *     request; read, never changed, here and by whoever else holds it
   * @param done receives {@code fragments} once all have reported
   */
  public SenderRequest(
      EventExecutor loop, List<Fragment> fragments, Consumer<List<? extends BatchResult>> done) {
    this(loop, fragments, done, null);
  }

  /**
   * A request of {@code sender}, charged for the new lanes its fragments cause ({@link
   * NewLaneBudget}).
   *
   * @param sender the sender's identity, or {@code null} for no one to charge
   */
  public SenderRequest(
      EventExecutor loop,
      List<Fragment> fragments,
      Consumer<List<? extends BatchResult>> done,
      Object sender) {
    this.loop = loop;
    this.fragments = fragments;
    this.done = done;
    this.sender = sender;
    WAITING.set(this, fragments.size());
  }

  @Override
  public Object sender() {
    return sender;
  }

  /**
   * Records an outcome known without sending (for example, delivered by an earlier attempt): the
   * fragment's body is released and it reports {@code outcome} to this request.
   *
   * @param fragment one of this request's, never handed to a lane
   */
  public void settled(Fragment fragment, FragmentOutcome outcome) {
    fragment.complete(outcome);
  }

  /**
   * Counts one more tenant queue made for this request, unless {@code max} were: from any loop.
   *
   * @return false when {@code max} were counted already
   */
  boolean takeNewQueue(int max) {
    for (int n = newQueues; n < max; n = newQueues) {
      if (NEW_QUEUES.compareAndSet(this, n, n + 1)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void done(Fragment fragment, FragmentOutcome outcome) {
    if (WAITING.decrementAndGet(this) != 0) {
      return;
    }
    if (loop.inEventLoop()) {
      run();
    } else {
      loop.execute(this);
    }
  }

  /** Reports every fragment: on the request's loop, once all reported. */
  @Override
  public void run() {
    done.accept(fragments);
  }
}
