package io.prwrelay.core.wire;

import io.prwrelay.core.codec.MemoryGrant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The scratch arrays of one thread's readers, routers and encoders (series bounds, refs, symbol
 * offsets, per-symbol marks), which grow with the request being read, counted in one place so that
 * they cost the request that needs them and not the ones after it.
 *
 * <p>Every array starts at a small initial size. What the arrays grow beyond their initial sizes is
 * counted here ({@link #grownBytes()}): up to {@code retained} bytes ({@link #RETAINED_BYTES} by
 * default) of it is free and stays between requests, so that ordinary requests allocate nothing;
 * beyond that, each growth is asked of the request's {@link MemoryGrant} before the array is
 * allocated, and a refused growth throws {@link Refused} with nothing allocated. {@link #finish()}
 * ends the request: when the arrays hold more than {@code retained} bytes of growth, every
 * registered owner puts its arrays back to their initial sizes, so the thread never stays sized to
 * the largest request it has seen.
 *
 * <pre>
 *   grown:  0 ........ retained ........................ peak of one large request
 *           |  free, kept between requests  |  charged to that request's grant, dropped at finish()
 * </pre>
 *
 * A growth is counted as the bytes it adds ({@code (newLength - oldLength) * elementSize}); the
 * array it replaces is garbage from then on. Not thread-safe: one per thread, shared by everything
 * that thread reads and encodes with.
 */
public final class ScratchMemory {
  /** Default of the growth kept between requests uncharged: 4 MiB per thread. */
  public static final long RETAINED_BYTES = 4L << 20;

  private static final Refused REFUSED = new Refused();

  private final long retained;
  private final List<Runnable> trims = new ArrayList<>();
  private MemoryGrant grant = MemoryGrant.UNLIMITED;
  private long grown;

  /** Scratch memory keeping {@link #RETAINED_BYTES} of growth between requests. */
  public ScratchMemory() {
    this(RETAINED_BYTES);
  }

  /**
   * @param retained bytes of growth kept between requests, uncharged
   */
  public ScratchMemory(long retained) {
    if (retained < 0) {
      throw new IllegalArgumentException("retained bytes must not be negative: " + retained);
    }
    this.retained = retained;
  }

  /**
   * Registers an owner's way back to its initial sizes, run by {@link #finish()} between requests.
   */
  public void register(Runnable trim) {
    trims.add(trim);
  }

  /**
   * Starts a request: growth beyond the retained bytes is asked of {@code grant} until {@link
   * #finish()}.
   *
   * @param grant asked, as {@link MemoryGrant#reserve} says, for the total growth beyond the
   *     retained bytes
   */
  public void start(MemoryGrant grant) {
    this.grant = grant;
  }

  /**
   * Ends the request: forgets its grant and, when the arrays grew beyond the retained bytes, puts
   * every owner's arrays back to their initial sizes.
   */
  public void finish() {
    grant = MemoryGrant.UNLIMITED;
    if (grown > retained) {
      for (Runnable trim : trims) {
        trim.run();
      }
      grown = 0;
    }
  }

  /** Bytes the arrays hold beyond their initial sizes now. */
  public long grownBytes() {
    return grown;
  }

  /** {@code a} copied into an array of {@code length} ints, once the growth is granted. */
  public int[] grow(int[] a, int length) {
    charge(4L * (length - a.length));
    return Arrays.copyOf(a, length);
  }

  /** {@code a} copied into an array of {@code length} longs, once the growth is granted. */
  public long[] grow(long[] a, int length) {
    charge(8L * (length - a.length));
    return Arrays.copyOf(a, length);
  }

  /**
   * A zeroed array of {@code length} ints to replace {@code a}, whose contents are not kept, once
   * the growth is granted.
   */
  public int[] replace(int[] a, int length) {
    charge(4L * (length - a.length));
    return new int[length];
  }

  /**
   * Counts {@code bytes} more of growth, asking the grant for what passes the retained bytes;
   * before an owner grows several parallel arrays at once, so that they grow all or none.
   *
   * @throws Refused when the grant refused; nothing is counted
   */
  public void charge(long bytes) {
    long total = grown + bytes;
    if (total > retained && !grant.reserve(total - retained)) {
      throw REFUSED;
    }
    grown = total;
  }

  /**
   * A growth the request's grant refused; nothing was allocated. Whoever started the request
   * catches it and answers for the budget; it carries no stack trace (one shared instance).
   */
  public static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private Refused() {
      super("the request's memory grant refused scratch memory", null, false, false);
    }
  }
}
