package io.prwrelay.server.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.testing.LogCapture;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The startup check of the downstream: one empty push as the default tenant, whose answer is logged
 * with what it means, while the relay is ready whatever the answer.
 */
class DownstreamCheckTest {
  @RegisterExtension final LogCapture log = new LogCapture("io.prwrelay.downstream");

  /** Runs the check against a downstream answering the default tenant with {@code reply}. */
  private String check(Reply reply, String tenant, Map<String, String> settings) throws Exception {
    Map<String, String> props = new java.util.HashMap<>(settings);
    // The first request of a new relay on a busy machine: more time than the fixture's 1 s.
    props.put("relay.downstream.attempt-timeout", "5s");
    props.put("relay.downstream.timeout", "10s");
    try (RelayFixture f = new RelayFixture(props, d -> d.rule(tenant, () -> reply))) {
      AttemptOutcome o = f.relay.checkDownstream().get(10, TimeUnit.SECONDS);
      assertEquals(reply.status(), o.status(), o.message());
      assertEquals(200, f.get("/-/ready").statusCode(), "ready whatever the downstream answered");
      Received r = f.downstream.received().get(0);
      assertEquals(tenant, r.tenant());
      assertEquals("snappy", r.header("Content-Encoding"));
      assertEquals(0, r.body().length, "an empty WriteRequest");
      return onlyLine();
    }
  }

  private String onlyLine() {
    List<LogRecord> records = log.records();
    assertEquals(1, records.size(), records.toString());
    return records.get(0).getLevel() + " " + records.get(0).getMessage();
  }

  @Test
  void aWrongPathIsNamed() throws Exception {
    String line = check(Reply.status(404, "404 page not found"), "anonymous", Map.of());
    assertTrue(
        line.startsWith("WARNING downstream check: an empty push to http://127.0.0.1:"), line);
    assertTrue(
        line.endsWith(
            "/api/v1/push as tenant anonymous answered 404 (404 page not found): nothing takes"
                + " remote writes at the path /api/v1/push. Check relay.downstream.url (Cortex and"
                + " Mimir take /api/v1/push); until then every batch fails"),
        line);
  }

  @Test
  void refusedCredentialsAreNamed() throws Exception {
    String line = check(Reply.status(401, "no org id"), "anonymous", Map.of());
    assertTrue(
        line.endsWith(
            "answered 401 (no org id): the downstream refuses the relay's credentials (auth none)."
                + " Check relay.downstream.basic-auth.* or relay.downstream.bearer-token; until then"
                + " every batch fails"),
        line);
  }

  @Test
  void aWorkingDownstreamIsSaidToTakeWrites() throws Exception {
    String line = check(Reply.status(200), "p-anonymous", Map.of("relay.tenant.prefix", "p-"));
    assertTrue(line.startsWith("INFO downstream check:"), line);
    assertTrue(
        line.endsWith("as tenant p-anonymous answered 200: the downstream takes writes"), line);
  }

  @Test
  void anUnreachableDownstreamIsNamedWithoutBlockingOrFailingReadiness() throws Exception {
    // Port 1 on loopback: nothing listens there (a port freed just now could be taken again by the
    // fixture's own downstream).
    try (RelayFixture f =
        new RelayFixture(Map.of("relay.downstream.url", "http://127.0.0.1:1/api/v1/push"))) {
      var check = f.relay.checkDownstream();
      assertEquals(200, f.get("/-/ready").statusCode());
      AttemptOutcome o = check.get(10, TimeUnit.SECONDS);
      assertEquals(AttemptOutcome.TRANSPORT_FAILURE, o.status());
      String line = onlyLine();
      assertTrue(line.startsWith("WARNING downstream check:"), line);
      assertTrue(
          line.contains(
              "an empty push to http://127.0.0.1:1/api/v1/push as tenant anonymous got no answer:"
                  + " cannot connect to the downstream: connection refused"),
          line);
      assertTrue(
          line.endsWith(
              "The relay is ready anyway; batches are answered 503 until the downstream can be"
                  + " reached"),
          line);
    }
  }

  @Test
  void inQueueModeAnUnreachableDownstreamIsSaidToMeanBatchesAreQueued(@TempDir Path queue)
      throws Exception {
    try (RelayFixture f =
        new RelayFixture(
            Map.of(
                "relay.downstream.url", "http://127.0.0.1:1/api/v1/push",
                "relay.delivery.mode", "queue",
                "relay.delivery.queue.dir", queue.toString()))) {
      AttemptOutcome o = f.relay.checkDownstream().get(10, TimeUnit.SECONDS);
      assertEquals(AttemptOutcome.TRANSPORT_FAILURE, o.status());
      String line = onlyLine();
      assertTrue(
          line.endsWith(
              "The relay is ready anyway; batches are queued on disk (answered 2xx once written)"
                  + " and sent once the downstream can be reached"),
          line);
      assertEquals(
          204,
          f.write(
                  new io.prwrelay.testkit.WriteRequestEncoder()
                      .beginSeries()
                      .label("__name__", "up")
                      .sample(1, System.currentTimeMillis())
                      .endSeries()
                      .toByteArray())
              .statusCode(),
          "what the line says: the batch was queued and answered 2xx");
    }
  }
}
