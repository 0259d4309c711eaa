package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.protocol.WrittenCounts;
import io.prwrelay.server.write.Answer;
import io.prwrelay.server.write.BodyEncoding;
import org.junit.jupiter.api.Test;

/** What the head of a write request decides, before any body is read. */
class WriteRequestCheckTest {
  private final WriteRequestCheck check = new WriteRequestCheck(1000, null);

  private static HttpRequest head(String... headers) {
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/api/v1/write");
    for (int i = 0; i < headers.length; i += 2) {
      r.headers().set(headers[i], headers[i + 1]);
    }
    return r;
  }

  /** A head with {@code Content-Encoding}, {@code Content-Type} and then {@code more} headers. */
  private static HttpRequest typed(String encoding, String contentType, String... more) {
    HttpRequest r = head(more);
    r.headers().set("Content-Encoding", encoding).set("Content-Type", contentType);
    return r;
  }

  private static WriteRequestCheck.Accepted accepted(WriteRequestCheck.Result result) {
    return assertInstanceOf(WriteRequestCheck.Accepted.class, result);
  }

  private static Answer rejected(WriteRequestCheck.Result result) {
    Answer a = assertInstanceOf(WriteRequestCheck.Rejected.class, result).answer();
    assertTrue(a.close(), "an unread body closes the connection");
    return a;
  }

  @Test
  void snappyAndZstdAreAcceptedInAnyCase() {
    assertEquals(
        BodyEncoding.SNAPPY, accepted(check.check(head("Content-Encoding", "snappy"))).encoding());
    assertEquals(
        BodyEncoding.ZSTD, accepted(check.check(head("Content-Encoding", "ZSTD"))).encoding());
  }

  @Test
  void missingOrUnknownEncodingIs415() {
    Answer missing = rejected(check.check(head()));
    assertEquals(415, missing.status());
    assertEquals("Content-Encoding is required: snappy (or zstd)", missing.message());
    Answer gzip = rejected(check.check(head("Content-Encoding", "gzip")));
    assertEquals(415, gzip.status());
    assertEquals("unsupported Content-Encoding 'gzip': use snappy (or zstd)", gzip.message());
  }

  @Test
  void theContentTypeChoosesTheProtocol() {
    assertEquals(Protocol.V1, accepted(check.check(head("Content-Encoding", "snappy"))).protocol());
    assertEquals(
        Protocol.V1,
        accepted(
                check.check(
                    typed("snappy", "application/x-protobuf; proto=prometheus.WriteRequest")))
            .protocol());
    assertEquals(
        Protocol.V1, accepted(check.check(typed("snappy", "application/x-protobuf"))).protocol());
    assertEquals(
        Protocol.V2,
        accepted(
                check.check(
                    typed("zstd", "application/x-protobuf;proto=io.prometheus.write.v2.Request")))
            .protocol());
    Answer json = rejected(check.check(typed("snappy", "application/json")));
    assertEquals(415, json.status());
    assertEquals(
        "unsupported Content-Type 'application/json': use application/x-protobuf", json.message());
    Answer other =
        rejected(
            check.check(
                typed("snappy", "application/x-protobuf;proto=io.prometheus.write.v3.Request")));
    assertEquals(415, other.status());
    assertEquals(
        "unsupported Content-Type 'application/x-protobuf;proto=io.prometheus.write.v3.Request':"
            + " proto= must be prometheus.WriteRequest (Remote Write 1.0) or"
            + " io.prometheus.write.v2.Request (Remote Write 2.0)",
        other.message());
  }

  @Test
  void contentTypeOfOnlySeparatorsIs415() {
    for (String type : new String[] {";", ";;", "; proto=x"}) {
      Answer a = rejected(check.check(head("Content-Encoding", "snappy", "Content-Type", type)));
      assertEquals(415, a.status(), type);
      assertTrue(a.message().contains("use application/x-protobuf"), a.message());
    }
  }

  @Test
  void declaredLengthOverTheLimitIs413() {
    Answer a = rejected(check.check(head("Content-Encoding", "snappy", "Content-Length", "1001")));
    assertEquals(413, a.status());
    assertEquals(
        "request body of 1001 bytes exceeds relay.server.max-request-bytes=1000", a.message());
    assertEquals(
        1000,
        accepted(check.check(head("Content-Encoding", "snappy", "Content-Length", "1000")))
            .contentLength());
    assertEquals(-1, accepted(check.check(head("Content-Encoding", "snappy"))).contentLength());
  }

  @Test
  void remoteWrite2SenderOfATooLargeBodyLearnsNothingWasWritten() {
    Answer v2 =
        rejected(
            check.check(
                typed(
                    "snappy",
                    "application/x-protobuf;proto=io.prometheus.write.v2.Request",
                    "Content-Length",
                    "1001")));
    assertEquals(413, v2.status());
    assertEquals(WrittenCounts.ZERO, v2.written());
    Answer v1 = rejected(check.check(head("Content-Encoding", "snappy", "Content-Length", "1001")));
    assertNull(v1.written(), "a PRW 1.0 sender gets no Written headers");
  }

  @Test
  void tenantHeaderIsReadOnlyWhenTrusted() {
    HttpRequest h = head("Content-Encoding", "snappy", "X-Scope-OrgID", "team");
    assertNull(accepted(check.check(h)).incomingTenant());
    assertEquals(
        "team", accepted(new WriteRequestCheck(1000, "X-Scope-OrgID").check(h)).incomingTenant());
  }
}
