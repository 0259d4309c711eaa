package io.prwrelay.server.http;

/**
 * An HTTP answer to a sender: status, plain-text message, optional {@code Retry-After} seconds (-1
 * for none), and whether the connection must be closed after it.
 */
record Answer(int status, String message, long retryAfterSeconds, boolean close) {
  static Answer of(int status, String message) {
    return new Answer(status, message, -1, false);
  }

  static Answer closing(int status, String message) {
    return new Answer(status, message, -1, true);
  }
}
