package io.prwrelay.core.remotewrite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link SeededHash} spreads values a sender built to collide: strings of {@code Aa}/{@code BB}
 * blocks (one {@code String.hashCode} for all) and pairs of inputs that differ in the top bits of
 * two words (one hash for every seed under a {@code (h ^ word) * odd} step).
 */
class SeededHashTest {
  /** The {@code 2^blocks} strings of {@code blocks} blocks, each {@code Aa} or {@code BB}. */
  static String[] collidingStrings(int blocks) {
    String[] out = new String[1 << blocks];
    for (int v = 0; v < out.length; v++) {
      StringBuilder b = new StringBuilder(blocks * 2);
      for (int k = 0; k < blocks; k++) {
        b.append((v >>> k & 1) == 0 ? "Aa" : "BB");
      }
      out[v] = b.toString();
    }
    return out;
  }

  @Test
  void stringsSharingOneStringHashCodeGetDistinctHashesSpreadOverEveryBucket() {
    String[] values = collidingStrings(14);
    Set<Integer> javaHashes = new HashSet<>();
    Set<Long> bytesHashes = new HashSet<>();
    Set<Long> charsHashes = new HashSet<>();
    int[] buckets = new int[4096];
    for (String v : values) {
      javaHashes.add(v.hashCode());
      byte[] b = v.getBytes(StandardCharsets.US_ASCII);
      long h = SeededHash.hash(b, 0, b.length);
      bytesHashes.add(h);
      charsHashes.add(SeededHash.hash(v));
      buckets[SeededHash.fold(h) & 4095]++;
    }
    assertEquals(1, javaHashes.size(), "the input collides under String.hashCode");
    assertEquals(values.length, bytesHashes.size());
    assertEquals(values.length, charsHashes.size());
    int fullest = 0;
    for (int n : buckets) {
      fullest = Math.max(fullest, n);
    }
    // 4 values a bucket on average; a uniform hash puts at most ≈ 15 in the fullest of 4,096.
    assertTrue(fullest <= 24, "fullest bucket " + fullest);
  }

  @Test
  void inputsDifferingInTopBitsOfTwoWordsDoNotCollide() {
    for (int length : new int[] {40, 48, 64, 100}) {
      byte[] a = new byte[length];
      for (int i = 0; i < length; i++) {
        a[i] = (byte) ('a' + i % 26);
      }
      for (int w1 = 0; w1 + 8 <= length; w1 += 8) {
        for (int w2 = w1 + 8; w2 + 8 <= length; w2 += 8) {
          byte[] b = a.clone();
          b[w1 + 7] ^= (byte) 0x80;
          b[w2 + 7] ^= (byte) 0x80;
          assertNotEquals(
              SeededHash.hash(a, 0, length),
              SeededHash.hash(b, 0, length),
              "words " + w1 / 8 + " and " + w2 / 8 + " of " + length);
        }
      }
    }
  }

  @Test
  void hashDependsOnEveryByteAndTheLengthNotOnTheOffset() {
    byte[] a = "xxhttp_requests_total".getBytes(StandardCharsets.US_ASCII);
    byte[] b = "http_requests_total".getBytes(StandardCharsets.US_ASCII);
    assertEquals(SeededHash.hash(a, 2, b.length), SeededHash.hash(b, 0, b.length));
    Set<Long> seen = new HashSet<>();
    for (int length = 0; length <= 40; length++) {
      byte[] z = new byte[length];
      assertTrue(seen.add(SeededHash.hash(z, 0, length)), "zeros of length " + length);
      for (int i = 0; i < length; i++) {
        byte[] c = z.clone();
        c[i] = 1;
        assertTrue(seen.add(SeededHash.hash(c, 0, length)), "byte " + i + " of " + length);
      }
    }
  }

  @Test
  void pairsWithOnePolynomialValueGetDistinctHashes() {
    Set<Long> seen = new HashSet<>();
    for (int help = 0; help < 10_000; help++) {
      long unit = 1_000_000 - 31L * help; // help * 31 + unit is the same for all
      assertTrue(seen.add(SeededHash.hash(help, unit)));
    }
  }
}
