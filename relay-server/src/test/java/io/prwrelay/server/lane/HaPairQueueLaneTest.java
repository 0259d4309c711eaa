package io.prwrelay.server.lane;

import static io.prwrelay.server.lane.HaPairs.requests;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Queue mode: the drain merges the records at the head of a tenant's queue only while the
 * downstream judges them as the first ({@code cluster} and {@code __replica__} of each record's
 * first series); records are acknowledged in order, so a merged request ends at the first record
 * judged otherwise. Every fragment through the queue, in simulated time.
 */
class HaPairQueueLaneTest extends SimulatedQueueLanesFixture {
  private Fragment ha(String id, String replica) {
    return HaPairs.fragment(id, "a", "prod", replica, sim.now() + 10 * SECOND, outcomes);
  }

  private Fragment forwarded(String id, String replica) {
    return HaPairs.forwarded(id, "a", "prod", replica, sim.now() + 10 * SECOND, outcomes);
  }

  @Test
  void aDrainedRequestCarriesRecordsOfOneReplicaOnly() {
    open(Duration.ZERO);
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(50)));
    submit(ha("p0", "r1"));
    submit(ha("p1", "r1"));
    submit(forwarded("p2", "r1"));
    submit(ha("s1", "r2"));
    submit(forwarded("s2", "r2"));
    submit(ha("p3", "r1"));
    submit(ha("p4", "r1"));
    advanceUntil("queue drained", () -> queue("a").isEmpty() && drained.size() == 4);
    assertEquals(
        List.of(
            List.of("r1:p0"),
            List.of("r1:p1", "r1:p2"),
            List.of("r2:s1", "r2:s2"),
            List.of("r1:p3", "r1:p4")),
        requests(downstream, "a"));
    assertEquals(List.of("a:1:200", "a:2:200", "a:2:200", "a:2:200"), drained);
    assertEquals(7, outcomes.size());
    outcomes.forEach((id, o) -> assertEquals(Kind.QUEUED, o.kind(), id));
  }

  @Test
  void recordsWithoutTheLabelsAreJudgedApartFromAReplicasRecords() {
    open(Duration.ZERO);
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(50)));
    submit(ha("p0", "r1"));
    submit(HaPairs.fragment("n1", "a", null, null, sim.now() + 10 * SECOND, outcomes));
    submit(HaPairs.fragment("n2", "a", null, null, sim.now() + 10 * SECOND, outcomes));
    submit(ha("s1", "r2"));
    advanceUntil("queue drained", () -> queue("a").isEmpty() && drained.size() == 3);
    assertEquals(
        List.of(List.of("r1:p0"), List.of("-:n1", "-:n2"), List.of("r2:s1")),
        requests(downstream, "a"));
  }
}
