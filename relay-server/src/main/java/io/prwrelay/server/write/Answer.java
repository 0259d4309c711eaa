package io.prwrelay.server.write;

import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.protocol.WrittenCounts;

/**
 * An HTTP answer to a sender: status, plain-text message, {@code Retry-After} seconds (-1 for
 * none), whether the connection must be closed after it, and for a Remote Write 2.0 sender what was
 * written ({@code X-Prometheus-Remote-Write-*-Written}; {@code null} for a 1.0 sender).
 *
 * <p>What the write pipeline gives the ingress for every request ({@link WriteProcessor#process}),
 * and what the ingress's own checks answer with; a value, holding no buffer. The ingress turns it
 * into the response it writes ({@code ingress.AnswerWriter}).
 */
public record Answer(
    int status, String message, long retryAfterSeconds, boolean close, WrittenCounts written) {
  /** An answer without {@code *-Written} counts. */
  public Answer(int status, String message, long retryAfterSeconds, boolean close) {
    this(status, message, retryAfterSeconds, close, null);
  }

  /** This answer with the {@code *-Written} headers of {@code counts}. */
  public Answer withWritten(WrittenCounts counts) {
    return new Answer(status, message, retryAfterSeconds, close, counts);
  }

  /**
   * This answer as a sender of {@code protocol} gets it: a PRW 2.0 sender learns from every answer
   * what was written, so one that says nothing says zero.
   */
  public Answer forSenderOf(Protocol protocol) {
    return protocol == Protocol.V2 && written == null ? withWritten(WrittenCounts.ZERO) : this;
  }

  /** An answer that keeps the connection open, without {@code Retry-After}. */
  public static Answer of(int status, String message) {
    return new Answer(status, message, -1, false);
  }

  /** An answer that closes the connection, without {@code Retry-After}. */
  public static Answer closing(int status, String message) {
    return new Answer(status, message, -1, true);
  }
}
