package io.prwrelay.server.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

/** The request memory budget: its total, each client's share, and release exactly once. */
class InflightBudgetTest {
  private static final SenderKey A = SenderKey.of(InetAddress.getLoopbackAddress(), 0);
  private static final SenderKey B;

  static {
    try {
      B = SenderKey.of(InetAddress.getByAddress(new byte[] {127, 0, 0, 2}), 0);
    } catch (java.net.UnknownHostException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void admitsUpToTheLimitAndRefusesBeyond() {
    InflightBudget budget = new InflightBudget(100, 100);
    InflightBudget.Admission first = budget.admit(A, 60);
    assertNotNull(first.reservation());
    InflightBudget.Admission second = budget.admit(B, 41);
    assertNull(second.reservation());
    assertEquals(InflightBudget.Refusal.TOTAL, second.refusal());
    assertNotNull(budget.admit(B, 40).reservation());
    assertEquals(100, budget.inUse());
  }

  @Test
  void oneClientHoldsAtMostItsShare() {
    InflightBudget budget = new InflightBudget(100, 50);
    assertNotNull(budget.admit(B, 30).reservation());
    InflightBudget.Admission refused = budget.admit(B, 30);
    assertEquals(InflightBudget.Refusal.CLIENT, refused.refusal());
    assertNotNull(budget.admit(A, 50).reservation(), "another client still gets its share");
  }

  @Test
  void aReservationIsReleasedOnceHoweverOftenItIsReleased() {
    InflightBudget budget = new InflightBudget(100, 50);
    InflightBudget.Reservation r = budget.admit(A, 40).reservation();
    InflightBudget.Reservation other = budget.admit(B, 10).reservation();
    r.release();
    r.release();
    assertEquals(10, budget.inUse());
    assertNotNull(budget.admit(A, 50).reservation(), "A's share is whole again");
    other.release();
    assertEquals(50, budget.inUse());
  }

  @Test
  void anUnknownClientIsBoundOnlyByTheTotal() {
    InflightBudget budget = new InflightBudget(100, 10);
    assertNotNull(budget.admit(null, 100).reservation());
  }
}
