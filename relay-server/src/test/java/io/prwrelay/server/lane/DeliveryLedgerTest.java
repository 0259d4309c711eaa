package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.config.DeliveryConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class DeliveryLedgerTest {
  private final AtomicLong clock = new AtomicLong(1_000);

  @Test
  void remembersDeliveredTenantsOfABodyUntilTheyExpire() {
    DeliveryLedger ledger = new DeliveryLedger(100, 500, clock::get);
    assertTrue(ledger.isEmpty());
    ledger.record(new LedgerKey(1, 42, 10), List.of("a"), List.of("b"));
    assertTrue(ledger.delivered(new LedgerKey(1, 42, 10), "a"));
    assertFalse(ledger.delivered(new LedgerKey(1, 42, 10), "b"), "the tenant not delivered");
    assertFalse(ledger.delivered(new LedgerKey(1, 42, 11), "a"), "another body length");
    assertFalse(ledger.delivered(new LedgerKey(1, 43, 10), "a"), "another body hash");
    assertFalse(ledger.delivered(new LedgerKey(2, 42, 10), "a"), "another sender's same bytes");
    clock.addAndGet(499);
    assertTrue(ledger.delivered(new LedgerKey(1, 42, 10), "a"));
    clock.addAndGet(1);
    assertFalse(ledger.delivered(new LedgerKey(1, 42, 10), "a"));
    assertTrue(ledger.isEmpty());
  }

  @Test
  void aBodyOfManyTenantsWithOneNotDeliveredCostsOneName() {
    DeliveryLedger ledger = new DeliveryLedger(10, 1_000_000, clock::get);
    List<String> delivered = new ArrayList<>();
    for (int i = 0; i < 999; i++) {
      delivered.add("tenant-" + i);
    }
    for (int body = 0; body < 10; body++) {
      ledger.record(new LedgerKey(1, body, 1), delivered, List.of("throttled"));
    }
    assertEquals(10, ledger.size());
    for (int body = 0; body < 10; body++) {
      for (String t : delivered) {
        assertTrue(ledger.delivered(new LedgerKey(1, body, 1), t));
      }
      assertFalse(ledger.delivered(new LedgerKey(1, body, 1), "throttled"));
    }
  }

  @Test
  void aRetryThatFailsAgainReplacesWhatWasKnownOfTheBody() {
    DeliveryLedger ledger = new DeliveryLedger(100, 1_000_000, clock::get);
    LedgerKey body = new LedgerKey(1, 7, 3);
    ledger.record(body, List.of("a"), List.of("b", "c"));
    assertEquals(1, ledger.size());
    ledger.record(body, List.of("a", "b"), List.of("c"));
    assertEquals(1, ledger.size(), "now listed by the one tenant not delivered");
    assertTrue(ledger.delivered(body, "a"));
    assertTrue(ledger.delivered(body, "b"));
    assertFalse(ledger.delivered(body, "c"));
  }

  @Test
  void nothingIsWrittenWhenNoTenantWasDelivered() {
    DeliveryLedger ledger = new DeliveryLedger(100, 1_000_000, clock::get);
    ledger.record(new LedgerKey(1, 1, 1), List.of(), List.of("a", "b"));
    assertTrue(ledger.isEmpty());
    assertFalse(ledger.delivered(new LedgerKey(1, 1, 1), "a"));
  }

  @Test
  void forgetsTheOldestBeyondItsSize() {
    DeliveryLedger ledger = new DeliveryLedger(3, 1_000_000, clock::get);
    for (int i = 0; i < 5; i++) {
      ledger.record(new LedgerKey(1, i, 1), List.of("t"), List.of("u", "v"));
      clock.incrementAndGet();
    }
    assertEquals(3, ledger.size());
    assertFalse(ledger.delivered(new LedgerKey(1, 0, 1), "t"));
    assertFalse(ledger.delivered(new LedgerKey(1, 1, 1), "t"));
    assertTrue(ledger.delivered(new LedgerKey(1, 2, 1), "t"));
    assertTrue(ledger.delivered(new LedgerKey(1, 4, 1), "t"));
  }

  @Test
  void sizeIsCountedInTenantNames() {
    DeliveryLedger ledger = new DeliveryLedger(4, 1_000_000, clock::get);
    ledger.record(new LedgerKey(1, 1, 1), List.of("a", "b"), List.of("c", "d", "e"));
    ledger.record(new LedgerKey(1, 2, 1), List.of("a", "b"), List.of("c", "d", "e"));
    assertEquals(4, ledger.size());
    ledger.record(new LedgerKey(1, 3, 1), List.of("a"), List.of("c", "d", "e"));
    assertEquals(3, ledger.size(), "the oldest body forgotten to make room");
    assertFalse(ledger.delivered(new LedgerKey(1, 1, 1), "a"));
    assertTrue(ledger.delivered(new LedgerKey(1, 2, 1), "b"));
    assertTrue(ledger.delivered(new LedgerKey(1, 3, 1), "a"));
  }

  @Test
  void sizeZeroDisablesIt() {
    DeliveryLedger ledger = new DeliveryLedger(0, 1_000, clock::get);
    ledger.record(new LedgerKey(1, 1, 1), List.of("t"), List.of("u"));
    assertTrue(ledger.isEmpty());
    assertFalse(ledger.delivered(new LedgerKey(1, 1, 1), "t"));
  }

  @Test
  void anotherSendersIdenticalBodyIsCountedApartWhenThrottled() {
    DeliveryLedger ledger =
        new DeliveryLedger(
            100,
            1_000_000,
            clock::get,
            new DeliveryConfig.Throttled(false, 1, Duration.ofHours(1)));
    LedgerKey first = new LedgerKey(1, 42, 10);
    LedgerKey second = new LedgerKey(2, 42, 10);
    assertFalse(ledger.throttled(first).drop(), "the first sender's first 429");
    assertTrue(ledger.throttled(first).drop(), "its repeat: answered 400");
    DeliveryLedger.Throttling other = ledger.throttled(second);
    assertFalse(other.drop(), "the second sender's first 429 of the same bytes");
    assertEquals(0, other.answers());
  }
}
