package io.prwrelay.server.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.testing.LogCapture;
import io.prwrelay.testing.RawProto;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.xerial.snappy.Snappy;

/**
 * Requests that fail inside the relay are each answered and counted, but their stack traces reach
 * the log at most once a minute, the next line saying how many were left out; a sender that can
 * make its requests fail cannot flood the log, and other senders' requests keep being delivered.
 */
class InternalErrorLogTest {
  @RegisterExtension final LogCapture logged = new LogCapture("io.prwrelay.server");

  private final ScriptedSender sender = new ScriptedSender();
  private final RelayMetrics metrics = new RelayMetrics(10, ByteBufAllocator.DEFAULT);
  private WriteFixture fixture;

  @BeforeEach
  void setUp() throws Exception {
    fixture =
        new WriteFixture(
            WriteFixture.config(Map.of("relay.tenant.missing", "drop"), Map.of()), sender, metrics);
  }

  @AfterEach
  void tearDown() {
    fixture.lanes.close();
    assertEquals(0, fixture.budget.inUse(), "every reservation returned");
    assertFalse(fixture.channel.finishAndReleaseAll());
  }

  private Answer process(byte[] snappy, ByteBufAllocator alloc) {
    ByteBuf body = Unpooled.copiedBuffer(snappy);
    InflightBudget budget = fixture.budget;
    InflightBudget.Reservation reservation = budget.admit(null, body.readableBytes()).reservation();
    List<Answer> answers = new ArrayList<>();
    fixture.processor.process(
        new WriteInput(
            fixture.sim.loop(),
            alloc,
            body,
            reservation,
            new WriteHead(BodyEncoding.SNAPPY, Protocol.V1, null, 0),
            TenantAllowList.ANY,
            SenderKey.UNKNOWN,
            fixture.sim.now()),
        a -> {
          answers.add(a);
          reservation.release();
        });
    fixture.sim.advance(Duration.ZERO);
    assertEquals(1, answers.size());
    return answers.get(0);
  }

  private static byte[] request(String tenant) throws Exception {
    return Snappy.compress(
        RawProto.series(RawProto.label("service_id", tenant), RawProto.sample(1, 1)));
  }

  private List<LogRecord> failures() {
    return logged.records().stream()
        .filter(r -> r.getMessage().startsWith("write request failed inside the relay"))
        .toList();
  }

  @Test
  void oneStackTraceAMinuteCountingTheOnesLeftOutWhileEveryRequestIsAnswered() throws Exception {
    sender.always("b", Reply.status(200, ""));
    for (int i = 0; i < 50; i++) {
      TrackingAllocator failing =
          new TrackingAllocator().failingWith(new IllegalStateException("injected " + i));
      assertEquals(500, process(request("a"), failing).status());
      failing.assertAllReleased();
    }
    assertEquals(204, process(request("b"), ByteBufAllocator.DEFAULT).status());
    assertEquals(1, sender.callsTo("b").size(), "another sender's request is delivered");
    assertEquals(1, failures().size(), logged.messages().toString());
    assertEquals("injected 0", failures().get(0).getThrown().getMessage());
    assertTrue(
        metrics.scrape().contains("relay_internal_errors_total{kind=\"exception\"} 50.0"),
        metrics.scrape());
    fixture.sim.advance(Duration.ofSeconds(61));
    assertEquals(
        500,
        process(
                request("a"),
                new TrackingAllocator().failingWith(new IllegalStateException("injected later")))
            .status());
    assertEquals(2, failures().size());
    assertEquals(
        "write request failed inside the relay (and 49 more since the last such line, not logged)",
        failures().get(1).getMessage());
    assertEquals("injected later", failures().get(1).getThrown().getMessage());
  }
}
