package io.prwrelay.core.codec;

/**
 * A body that cannot be decompressed within the configured cap or the memory granted for it. {@link
 * Problem#TOO_LARGE} and {@link Problem#CORRUPT} are the sender's fault and are answered with 400;
 * {@link Problem#OVER_BUDGET} means the memory is in use now (503). None ever allocates more than
 * the cap or the grant.
 */
public final class CodecException extends Exception {
  private static final long serialVersionUID = 1L;

  /** What went wrong. */
  public enum Problem {
    /** The decompressed size (declared or reached) exceeds the cap. */
    TOO_LARGE,
    /** The bytes are not valid for the encoding. */
    CORRUPT,
    /** The {@link MemoryGrant} refused the decompressed size; nothing was allocated for it. */
    OVER_BUDGET
  }

  private final Problem problem;

  public CodecException(Problem problem, String message) {
    super(message, null, false, false);
    this.problem = problem;
  }

  public Problem problem() {
    return problem;
  }
}
