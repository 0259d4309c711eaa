package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.prwrelay.core.encode.SeriesCounts;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The fragments waiting in a lane keep their order, their bytes and their earliest deadline across
 * every way in and out, also when there are more than fit before the store grows and when the head
 * wraps around it.
 */
class PendingTest {
  private final Pending pending = new Pending();

  /** Fragment {@code id}: {@code id + 1} bytes, due at {@code deadline}. */
  private static Fragment fragment(int id, long deadline) {
    return new Fragment(
        "t" + id,
        Unpooled.wrappedBuffer(new byte[id + 1]),
        SeriesCounts.NONE,
        deadline,
        (f, o) -> {});
  }

  private static List<String> tenants(List<Fragment> fragments) {
    List<String> out = new ArrayList<>();
    for (Fragment f : fragments) {
      out.add(f.tenant());
      f.discard();
    }
    return out;
  }

  @Test
  void keepsOrderAndBytesWhileGrowingAndWithFragmentsPutBackAtTheHead() {
    List<String> expected = new ArrayList<>();
    long bytes = 0;
    for (int i = 0; i < 5; i++) {
      pending.add(fragment(i, 1_000));
      bytes += i + 1;
    }
    // The head moves forward, then fragments are put back in front of it and behind the rest,
    // past the first store's size.
    Fragment first = pending.poll();
    Fragment second = pending.poll();
    bytes -= first.size() + second.size();
    for (int i = 5; i < 25; i++) {
      pending.add(fragment(i, 1_000));
      bytes += i + 1;
    }
    pending.addFirst(second);
    pending.addFirst(first);
    bytes += first.size() + second.size();
    for (int i = 0; i < 25; i++) {
      expected.add("t" + i);
    }
    assertEquals(25, pending.size());
    assertEquals(bytes, pending.bytes());
    assertEquals("t0", pending.peek().tenant());
    assertEquals(expected, tenants(pending.takeAll()));
    assertTrue(pending.isEmpty());
    assertEquals(0, pending.bytes());
    assertNull(pending.poll());
    assertNull(pending.peek());
  }

  @Test
  void expiresOnlyWhatIsPastItsDeadlineAndKeepsTheRestInOrder() {
    for (int i = 0; i < 12; i++) {
      pending.add(fragment(i, i % 3 == 0 ? 100 : 200 + i));
    }
    assertEquals(0, pending.expire(50).size(), "nothing is due yet");
    assertEquals(100 - 50, pending.timeLeft(50));
    assertEquals(List.of("t0", "t3", "t6", "t9"), tenants(pending.expire(150)));
    assertEquals(8, pending.size());
    assertEquals((2 + 3) + (5 + 6) + (8 + 9) + (11 + 12), pending.bytes());
    assertEquals(201 - 150, pending.timeLeft(150));
    assertEquals(
        List.of("t1", "t2", "t4", "t5", "t7", "t8", "t10", "t11"), tenants(pending.takeAll()));
  }

  /** Fragment {@code id} of {@code bytes} bytes whose first series has HA key {@code key}. */
  private static Fragment keyed(String id, int bytes, long key) {
    Fragment f =
        new Fragment(
            id, Unpooled.wrappedBuffer(new byte[bytes]), SeriesCounts.NONE, 1_000, (x, o) -> {});
    f.judgedBy(key);
    return f;
  }

  @Test
  void joinsOnlyFragmentsJudgedAlikeAndKeepsTheOthersInOrderWithTheirBytes() {
    pending.add(keyed("a2", 2, 7));
    pending.add(keyed("b1", 3, 9));
    pending.add(keyed("a3", 4, 7));
    pending.add(keyed("n1", 5, io.prwrelay.core.remotewrite.HaLabels.NONE));
    pending.add(keyed("a4", 50, 7)); // too large to join: holds back a5 behind it
    pending.add(keyed("b2", 6, 9));
    pending.add(keyed("a5", 1, 7));
    List<Fragment> batch = new ArrayList<>(List.of(keyed("a1", 1, 7)));
    pending.joinTo(batch, 20);
    assertEquals(List.of("a1", "a2", "a3"), tenants(batch));
    assertEquals(3 + 5 + 50 + 6 + 1, pending.bytes());
    assertEquals(List.of("b1", "n1", "a4", "b2", "a5"), tenants(pending.takeAll()));
  }

  @Test
  void takesTheHeadsKeyAndLeavesTheRestInOrder() {
    pending.add(keyed("b1", 3, 9));
    pending.add(keyed("a1", 1, 7));
    pending.add(keyed("b2", 4, 9));
    pending.add(keyed("u1", 2, io.prwrelay.core.remotewrite.HaLabels.UNKNOWN));
    pending.add(keyed("u2", 2, io.prwrelay.core.remotewrite.HaLabels.UNKNOWN));
    pending.add(keyed("b3", 5, 9));
    assertEquals(List.of("b1", "b2", "b3"), tenants(pending.takeJudgedAlike(new ArrayList<>())));
    assertEquals(1 + 2 + 2, pending.bytes());
    assertEquals(List.of("a1"), tenants(pending.takeJudgedAlike(new ArrayList<>())));
    assertEquals(
        List.of("u1"), tenants(pending.takeJudgedAlike(new ArrayList<>())), "unknown: alone");
    assertEquals(List.of("u2"), tenants(pending.takeAll()));
  }
}
