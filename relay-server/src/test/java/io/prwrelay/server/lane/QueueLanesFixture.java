package io.prwrelay.server.lane;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.queue.QueueLimits;
import io.prwrelay.server.queue.QueueListener;
import io.prwrelay.server.queue.QueueStore;
import io.prwrelay.server.testing.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the queue-mode lane tests on the real disk share ({@link QueueLaneOnDiskTest}): lanes over a
 * real on-disk queue in the test's temporary directory and one real event loop, a scripted
 * downstream, the outcome of every fragment by its id and every drained send as {@code
 * tenant:records:status}. The queue's I/O thread answers on its own time here, so a test that needs
 * one interleaving of the loop and that thread chooses it with {@link #withLoopHeld}; the tests of
 * lane decisions run in simulated time instead ({@link SimulatedQueueLanesFixture}).
 */
abstract class QueueLanesFixture {
  static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  static final LaneSettings SETTINGS =
      LaneTesting.settings(
          4,
          1 << 20,
          1 << 20,
          5,
          Duration.ofMillis(20),
          Duration.ofMillis(100),
          Duration.ofSeconds(1));

  @TempDir Path dir;
  final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  final ScriptedSender downstream = new ScriptedSender();
  final Map<String, FragmentOutcome> outcomes = new ConcurrentHashMap<>();
  final List<String> drained = new CopyOnWriteArrayList<>();

  /** Every send a 429 kept queued, as {@code tenant:series:status}. */
  final List<String> throttled = new CopyOnWriteArrayList<>();

  QueueStore store;
  Lanes lanes;

  /**
   * Opens the queue under {@code dir/queue} and lanes over it.
   *
   * @param directTimeout {@code relay.delivery.queue.direct-timeout}; zero sends every fragment
   *     through the queue
   */
  Lanes open(Duration directTimeout) throws Exception {
    store = QueueStore.open(dir.resolve("queue"), QueueLimits.DEFAULTS, QueueListener.NONE);
    lanes =
        new Lanes(
            group,
            SETTINGS,
            downstream,
            ALLOC,
            LaneTesting.recording(drained, throttled, null),
            new Lanes.Queues(store, System::currentTimeMillis, 1 << 24, directTimeout));
    return lanes;
  }

  /** Closes the lanes and the queue, as a stopping relay does; {@link #open} starts them again. */
  void closeLanes() {
    lanes.close();
    store.close();
    lanes = null;
  }

  @AfterEach
  void closeEverything() throws Exception {
    if (lanes != null) {
      closeLanes();
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
  }

  /** A fragment of {@code tenant} whose bytes are {@code id}, answered once into the outcomes. */
  Fragment fragment(String id, String tenant) {
    return LaneTesting.textFragment(
        id, tenant, id, System.nanoTime() + TimeUnit.SECONDS.toNanos(10), outcomes);
  }

  /** The bodies the downstream got for {@code tenant}, in order. */
  List<String> bodiesOf(String tenant) {
    List<String> bodies = new ArrayList<>();
    for (ScriptedSender.Call c : downstream.callsTo(tenant)) {
      bodies.add(c.text());
    }
    return bodies;
  }

  /** Something a test does on its own thread that may throw. */
  interface Action {
    void run() throws Exception;
  }

  /**
   * Runs {@code action} while the lanes' event loop is held by a task of its own, so that the tasks
   * {@code action} hands the loop run in the order it handed them, before any answer that the
   * queue's I/O thread completes meanwhile.
   */
  void withLoopHeld(Action action) throws Exception {
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch released = new CountDownLatch(1);
    group
        .next()
        .execute(
            () -> {
              held.countDown();
              try {
                released.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    held.await();
    try {
      action.run();
    } finally {
      released.countDown();
    }
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    Await.until(what, Duration.ofSeconds(20), condition);
  }
}
