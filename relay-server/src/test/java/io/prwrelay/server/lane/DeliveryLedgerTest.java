package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class DeliveryLedgerTest {
  private final AtomicLong clock = new AtomicLong(1_000);

  @Test
  void remembersDeliveredTenantsOfABodyUntilTheyExpire() {
    DeliveryLedger ledger = new DeliveryLedger(100, 500, clock::get);
    assertTrue(ledger.isEmpty());
    ledger.record(new LedgerKey(42, 10), "a");
    assertTrue(ledger.delivered(new LedgerKey(42, 10), "a"));
    assertFalse(ledger.delivered(new LedgerKey(42, 10), "b"), "another tenant of the same body");
    assertFalse(ledger.delivered(new LedgerKey(42, 11), "a"), "another body length");
    assertFalse(ledger.delivered(new LedgerKey(43, 10), "a"), "another body hash");
    clock.addAndGet(499);
    assertTrue(ledger.delivered(new LedgerKey(42, 10), "a"));
    clock.addAndGet(1);
    assertFalse(ledger.delivered(new LedgerKey(42, 10), "a"));
    assertTrue(ledger.isEmpty());
  }

  @Test
  void forgetsTheOldestBeyondItsSize() {
    DeliveryLedger ledger = new DeliveryLedger(3, 1_000_000, clock::get);
    for (int i = 0; i < 5; i++) {
      ledger.record(new LedgerKey(i, 1), "t");
      clock.incrementAndGet();
    }
    assertEquals(3, ledger.size());
    assertFalse(ledger.delivered(new LedgerKey(0, 1), "t"));
    assertFalse(ledger.delivered(new LedgerKey(1, 1), "t"));
    assertTrue(ledger.delivered(new LedgerKey(2, 1), "t"));
    assertTrue(ledger.delivered(new LedgerKey(4, 1), "t"));
  }

  @Test
  void sizeZeroDisablesIt() {
    DeliveryLedger ledger = new DeliveryLedger(0, 1_000, clock::get);
    ledger.record(new LedgerKey(1, 1), "t");
    assertTrue(ledger.isEmpty());
    assertFalse(ledger.delivered(new LedgerKey(1, 1), "t"));
  }
}
