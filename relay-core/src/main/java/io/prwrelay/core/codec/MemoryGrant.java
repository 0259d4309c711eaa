package io.prwrelay.core.codec;

/**
 * Asked by a decoder before it allocates its output, so that what a request decompresses to is
 * counted in the caller's memory budget before the memory is taken. Implementations are called on
 * the decoding thread.
 */
@FunctionalInterface
public interface MemoryGrant {
  /** Grants everything: for callers whose input is already accounted for (tests, benchmarks). */
  MemoryGrant UNLIMITED = bytes -> true;

  /**
   * Asks for an output buffer of {@code bytes}: grants it when the caller's budget can hold that
   * many bytes for this input in all (a later, larger request replaces an earlier one; it does not
   * add to it).
   *
   * @return whether the decoder may allocate {@code bytes}; when false it throws {@link
   *     CodecException.Problem#OVER_BUDGET} without allocating
   */
  boolean reserve(long bytes);
}
