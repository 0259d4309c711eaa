package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import io.prwrelay.server.protocol.Protocol;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Outcomes reported from several event loops make one answer, on the request's own loop. */
class SenderRequestTest {
  private final EventLoop requestLoop = new DefaultEventLoop();
  private final List<EventLoop> laneLoops = List.of(new DefaultEventLoop(), new DefaultEventLoop());

  @AfterEach
  void stop() {
    requestLoop.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
    for (EventLoop l : laneLoops) {
      l.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  @Test
  void outcomesFromOtherLoopsAreReportedOnceOnTheRequestsLoopWithEveryTenant() throws Exception {
    int tenants = 1000;
    AtomicInteger calls = new AtomicInteger();
    CountDownLatch answered = new CountDownLatch(1);
    List<BatchResult> seen = new ArrayList<>();
    boolean[] onRequestLoop = new boolean[1];
    List<Fragment> fragments = new ArrayList<>();
    fragments.add(Fragment.unbound("known", Protocol.V1, Unpooled.EMPTY_BUFFER, SeriesCounts.NONE));
    for (int i = 0; i < tenants; i++) {
      fragments.add(
          Fragment.unbound("t" + i, Protocol.V1, Unpooled.EMPTY_BUFFER, SeriesCounts.NONE));
    }
    SenderRequest request =
        new SenderRequest(
            requestLoop,
            fragments,
            results -> {
              calls.incrementAndGet();
              onRequestLoop[0] = requestLoop.inEventLoop();
              seen.addAll(results);
              answered.countDown();
            });
    for (Fragment f : fragments) {
      f.bind(0, request);
    }
    requestLoop
        .submit(
            () ->
                request.settled(
                    fragments.get(0),
                    new FragmentOutcome(Kind.DELIVERED, 200, "earlier attempt", -1, 0)))
        .sync();
    for (int i = 1; i <= tenants; i++) {
      Fragment f = fragments.get(i);
      laneLoops
          .get(i % 2)
          .execute(() -> f.complete(new FragmentOutcome(Kind.DELIVERED, 200, "", -1, 1)));
    }
    assertTrue(answered.await(10, TimeUnit.SECONDS));
    // Every task the lanes' loops were given has run, and then every task they handed the
    // request's loop: nothing can call the answer again.
    for (EventLoop l : laneLoops) {
      l.submit(() -> {}).sync();
    }
    requestLoop.submit(() -> {}).sync();
    assertEquals(1, calls.get(), "answered once");
    assertTrue(onRequestLoop[0], "answered on the request's loop");
    List<String> names = new ArrayList<>();
    for (BatchResult r : seen) {
      names.add(r.tenant());
      assertEquals(r.tenant().equals("known") ? 0 : 1, r.outcome().attempts(), r.tenant());
    }
    assertEquals(
        fragments.stream().map(Fragment::tenant).toList(),
        names,
        "every tenant's outcome, once, in the request's order");
  }
}
