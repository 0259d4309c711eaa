package io.prwrelay.core.remotewrite;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.security.SecureRandom;

/**
 * A 64-bit hash of bytes a client chose, keyed by secrets drawn once per process, for every table
 * and choice indexed by them: the route step's tenant value cache, the metric family keys and the
 * family learner's filter, metric name hashes, the PRW 2.0 → 1.0 metadata table and the loop a
 * tenant's lane lives on.
 *
 * <p>Why keyed: an unkeyed hash lets a sender compute, offline, thousands of values that land in
 * one slot ({@code 31·h + b} needs no search at all: the blocks {@code Aa} and {@code BB} collide,
 * so every string of n such blocks shares one hash); linear probing then costs each new value a
 * walk over all the earlier ones, quadratic time on the event loop every sender shares. With the
 * secrets unknown to the sender, which values meet is chance.
 *
 * <p>The construction is wyhash's: each 16-byte block is folded into the state with one 64×64 →
 * 128-bit multiplication of (word ⊕ secret) by (word ⊕ state) whose two halves are xor-ed ({@link
 * #mum}). Unlike a {@code (h ^ word) * odd} step, whose top-bit differences pass through the
 * multiplication unchanged (two inputs that differ in the top bits of two words then collide for
 * every seed), the high half makes every input bit reach every output bit through the secret. One
 * multiplication per 16 bytes: tenant IDs and metric names (tens of bytes) hash in a few
 * nanoseconds, measured in {@code RouteBenchmark}. Not a MAC: for spreading keys, not for
 * authenticating them.
 */
public final class SeededHash {
  private static final VarHandle LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private static final long S0;
  private static final long S1;
  private static final long S2;

  static {
    SecureRandom random = new SecureRandom();
    // Odd secrets: a secret never zeroes a product on its own.
    S0 = random.nextLong() | 1;
    S1 = random.nextLong() | 1;
    S2 = random.nextLong() | 1;
  }

  private SeededHash() {}

  /**
   * The hash of {@code a[offset, offset + length)}.
   *
   * @param a borrowed
   */
  public static long hash(byte[] a, int offset, int length) {
    long state = S0 ^ mum(length ^ S1, S2);
    int i = offset;
    int end = offset + length;
    for (; i + 16 <= end; i += 16) {
      state = mum((long) LONG.get(a, i) ^ S1, (long) LONG.get(a, i + 8) ^ state);
    }
    long w0;
    long w1;
    int rest = end - i;
    if (rest == 0) {
      w0 = 0;
      w1 = 0;
    } else if (rest >= 8) {
      w0 = (long) LONG.get(a, i);
      // The last 8 bytes, overlapping w0 when fewer than 16 remain; the length tells them apart.
      w1 = (long) LONG.get(a, end - 8);
    } else if (length >= 8) {
      // The last 8 bytes of the input, shifted so that only the rest's bytes remain.
      w0 = (long) LONG.get(a, end - 8) >>> (64 - 8 * rest);
      w1 = 0;
    } else {
      w0 = 0;
      for (int shift = 0; i < end; i++, shift += 8) {
        w0 |= (a[i] & 0xFFL) << shift;
      }
      w1 = 0;
    }
    state = mum(w0 ^ S1, w1 ^ state);
    return mum(state ^ S2, length ^ S0);
  }

  /**
   * The hash of {@code s}'s characters (a tenant ID), four 16-bit characters a word; allocates
   * nothing.
   */
  public static long hash(String s) {
    int length = s.length();
    long state = S0 ^ mum(length ^ S2, S1);
    int i = 0;
    for (; i + 8 <= length; i += 8) {
      state = mum(chars(s, i) ^ S1, chars(s, i + 4) ^ state);
    }
    long w0 = 0;
    long w1 = 0;
    for (int shift = 0; i < length; i++, shift += 16) {
      if (shift < 64) {
        w0 |= (long) s.charAt(i) << shift;
      } else {
        w1 |= (long) s.charAt(i) << (shift - 64);
      }
    }
    state = mum(w0 ^ S1, w1 ^ state);
    return mum(state ^ S2, length ^ S0);
  }

  /**
   * The hash of two words (small keys such as symbol references, which a client chooses as freely
   * as bytes).
   */
  public static long hash(long a, long b) {
    return mum(mum(a ^ S1, b ^ S2) ^ S0, S1);
  }

  /** The hash folded to 32 bits for a table index, every bit of it used. */
  public static int fold(long hash) {
    return (int) (hash ^ (hash >>> 32));
  }

  private static long chars(String s, int i) {
    return s.charAt(i)
        | (long) s.charAt(i + 1) << 16
        | (long) s.charAt(i + 2) << 32
        | (long) s.charAt(i + 3) << 48;
  }

  /** The 128-bit product of {@code a} and {@code b}, its halves xor-ed. */
  private static long mum(long a, long b) {
    return Math.multiplyHigh(a, b) ^ (a * b);
  }
}
