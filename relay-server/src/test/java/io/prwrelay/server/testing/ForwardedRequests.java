package io.prwrelay.server.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.prwrelay.server.config.RelayVersion;
import io.prwrelay.testkit.ScriptedDownstream.Received;

/** Checks of a request the relay forwarded, shared by the delivery and end-to-end tests. */
public final class ForwardedRequests {
  private ForwardedRequests() {}

  /**
   * Asserts a PRW 1.0 push as Cortex expects it: a POST to {@code /api/v1/push} with a
   * snappy-compressed protobuf body, the remote-write version header and the relay's user agent.
   */
  public static void assertPrw1Push(Received request) {
    assertEquals("POST", request.method());
    assertEquals("/api/v1/push", request.uri());
    assertEquals("snappy", request.header("Content-Encoding"));
    assertEquals("application/x-protobuf", request.header("Content-Type"));
    assertEquals("0.1.0", request.header("X-Prometheus-Remote-Write-Version"));
    assertEquals("prw-relay/" + RelayVersion.VERSION, request.header("User-Agent"));
  }
}
