package io.prwrelay.core.codec;

/**
 * A body that cannot be decompressed within the configured cap. Both problems are the sender's
 * fault and are answered with 400; neither ever allocates more than the cap.
 */
public final class CodecException extends Exception {
  private static final long serialVersionUID = 1L;

  /** What went wrong. */
  public enum Problem {
    /** The decompressed size (declared or reached) exceeds the cap. */
    TOO_LARGE,
    /** The bytes are not valid for the encoding. */
    CORRUPT
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
