package io.prwrelay.server.lane;

import static io.prwrelay.server.lane.LaneTesting.settings;
import static io.prwrelay.server.lane.LaneTesting.statesInto;
import static io.prwrelay.server.lane.LaneTesting.textFragment;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * A tenant whose every batch the downstream refuses (a non-retriable 4xx, as Mimir's per-tenant
 * series limit answers) makes its lane REJECTING at the third rejection in a row, wherever the
 * sends went from, and the next 2xx makes it healthy again; a merged send rejected as a whole and
 * sent again in halves counts only the rejections of its halves. On simulated loops: tenant {@link
 * #A} lives on the second loop, the first routes.
 */
@Timeout(value = 30, threadMode = ThreadMode.SEPARATE_THREAD)
class RejectingLaneTest {
  private static final String A = LaneTesting.tenantOnLoop("a", 1, 2);
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
  private static final String LARGE = "L".repeat(FragmentCompression.IN_LANE_BELOW);
  private static final String LIMIT =
      "send data to ingesters: failed pushing to ingester: user=a: per-user series limit of 5"
          + " exceeded (err-mimir-max-series-per-user)";

  private final SimulatedLoop routing = new SimulatedLoop();
  private final SimulatedLoop home = new SimulatedLoop(routing);
  private final ScriptedSender downstream = new ScriptedSender();
  private final Map<String, FragmentOutcome> outcomes = new LinkedHashMap<>();
  private final List<String> events = new ArrayList<>();
  private Lanes lanes;

  private void lanes() {
    lanes =
        new Lanes(
            List.of(routing.loop(), home.loop()),
            settings(4, 1 << 20, 1 << 20, 5),
            downstream,
            ALLOC,
            statesInto(events),
            null);
  }

  private Fragment fragment(String id, String text) {
    return textFragment(id, A, text, routing.now() + 10 * SECOND, outcomes);
  }

  private void submit(Fragment... fragments) {
    lanes.submit(List.of(fragments));
    SimulatedLoop.runDue(routing, home);
  }

  /** Which loop sent each downstream request of tenant {@link #A}: "R" routing, "H" home. */
  private String sentFrom() {
    return LaneTesting.sentFrom(downstream, A, routing, home);
  }

  @AfterEach
  void close() {
    LaneTesting.settleAndClose(lanes, routing, home);
  }

  @Test
  void threeRejectionsInARowMakeTheLaneRejectingAndTheNext2xxHealthy() {
    lanes();
    downstream.script(
        A, Reply.status(400, LIMIT), Reply.status(400, LIMIT), Reply.status(400, LIMIT));
    submit(fragment("a1", "small 1"));
    submit(fragment("a2", "small 2"));
    assertEquals(List.of(), events, "two rejections: still healthy");
    submit(fragment("a3", "small 3"));
    assertEquals(List.of(A + " REJECTING"), events);

    submit(fragment("a4", "small 4"));

    assertEquals(Kind.DELIVERED, outcomes.get("a4").kind(), "sent as ever, not held back");
    assertEquals(1, outcomes.get("a4").attempts());
    assertEquals(List.of(A + " REJECTING", A + " HEALTHY"), events);
    for (String id : List.of("a1", "a2", "a3")) {
      assertEquals(Kind.REJECTED, outcomes.get(id).kind(), id);
      assertEquals(1, outcomes.get(id).attempts(), id);
    }
  }

  @Test
  void aFailureBetweenRejectionsStartsTheCountAgain() {
    lanes();
    downstream.script(
        A,
        Reply.status(400, LIMIT),
        Reply.status(400, LIMIT),
        Reply.status(503),
        Reply.status(400, LIMIT),
        Reply.status(400, LIMIT));
    submit(fragment("a1", "small 1"));
    submit(fragment("a2", "small 2"));
    submit(fragment("a3", "small 3"));
    routing.advance(Duration.ofSeconds(1)); // the backoff ends, a3 is sent again and rejected
    SimulatedLoop.runDue(routing, home);
    submit(fragment("a4", "small 4"));
    assertEquals(Kind.REJECTED, outcomes.get("a4").kind());
    assertEquals(List.of(A + " BACKING_OFF"), events, "two rejections since the 503");
  }

  /**
   * Two bad batches sent as one request are rejected three times (the request, then each half
   * alone); only the two rejections that answered batches count.
   */
  @Test
  void aMergedSendRejectedAndSentAgainInHalvesCountsOnlyTheRejectionsOfItsBatches() {
    lanes();
    downstream.whenBodyContains(A, "BAD", Reply.status(400, "out of order sample"));
    // b0 keeps the lane busy, so that the two bad batches wait and travel together.
    downstream.script(A, Reply.status(200).after(Duration.ofMillis(50)));
    submit(fragment("b0", "good"));
    submit(fragment("b1", "BAD 1"), fragment("b2", "BAD 2"));
    SimulatedLoop.advance(Duration.ofMillis(50), routing, home);
    assertEquals(List.of("good", "BAD 1BAD 2", "BAD 1", "BAD 2"), bodies());
    assertEquals(Kind.REJECTED, outcomes.get("b1").kind());
    assertEquals(Kind.REJECTED, outcomes.get("b2").kind());
    assertEquals(List.of(), events, "two rejections: still healthy");
  }

  /**
   * Large batches sent from the routing loop on the lane's behalf and rejected there count in the
   * lane; once rejecting, the lane takes its sends back, and the first 2xx makes it healthy.
   */
  @Test
  void rejectionsOfSendsFromAnotherLoopCountInTheLane() {
    lanes();
    submit(fragment("a0", "a0" + LARGE)); // through the lane, which lets the routing loop send
    downstream.script(
        A, Reply.status(400, LIMIT), Reply.status(400, LIMIT), Reply.status(400, LIMIT));
    for (int i = 1; i <= 3; i++) {
      submit(fragment("a" + i, "a" + i + LARGE));
    }
    assertEquals("HRRR", sentFrom());
    assertEquals(List.of(A + " REJECTING"), events);

    submit(fragment("a4", "a4" + LARGE));

    assertEquals("HRRRH", sentFrom(), "a lane that is not healthy sends for itself");
    assertEquals(Kind.DELIVERED, outcomes.get("a4").kind());
    assertEquals(List.of(A + " REJECTING", A + " HEALTHY"), events);
  }

  /** A 2xx of a send from the routing loop after one of its rejections starts the count again. */
  @Test
  void aSendFromAnotherLoopAcceptedBetweenRejectionsStartsTheCountAgain() {
    lanes();
    submit(fragment("a0", "a0" + LARGE));
    downstream.script(
        A,
        Reply.status(400, LIMIT),
        Reply.status(400, LIMIT),
        Reply.status(200),
        Reply.status(400, LIMIT),
        Reply.status(400, LIMIT));
    for (int i = 1; i <= 5; i++) {
      submit(fragment("a" + i, "a" + i + LARGE));
    }
    assertEquals("HRRRRR", sentFrom());
    assertEquals(List.of(), events);
  }

  private List<String> bodies() {
    List<String> bodies = new ArrayList<>();
    for (ScriptedSender.Call c : downstream.callsTo(A)) {
      bodies.add(c.text());
    }
    return bodies;
  }
}
