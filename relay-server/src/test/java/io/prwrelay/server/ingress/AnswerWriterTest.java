package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.prwrelay.server.protocol.WrittenCounts;
import io.prwrelay.server.write.Answer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The response the ingress writes for an {@link Answer} of the write pipeline or its own checks.
 */
class AnswerWriterTest {
  @Test
  void responseCarriesTheMessageRetryAfterAndWrittenCounts() {
    Answer a = new Answer(503, "busy", 5, false).withWritten(new WrittenCounts(31, 3, 6));
    FullHttpResponse r = AnswerWriter.toResponse(a);
    try {
      assertEquals(503, r.status().code());
      assertEquals("busy\n", r.content().toString(StandardCharsets.UTF_8));
      assertEquals("5", r.headers().get(HttpHeaderNames.RETRY_AFTER));
      assertEquals("5", r.headers().get(HttpHeaderNames.CONTENT_LENGTH));
      assertEquals("31", r.headers().get("X-Prometheus-Remote-Write-Samples-Written"));
      assertEquals("3", r.headers().get("X-Prometheus-Remote-Write-Histograms-Written"));
      assertEquals("6", r.headers().get("X-Prometheus-Remote-Write-Exemplars-Written"));
    } finally {
      r.release();
    }
  }

  @Test
  void onlyA204WithNothingToTellIsThePlainSharedResponse() {
    assertTrue(AnswerWriter.isPlainNoContent(Answer.of(204, "")));
    assertFalse(AnswerWriter.isPlainNoContent(Answer.closing(204, "")));
    assertFalse(AnswerWriter.isPlainNoContent(Answer.of(204, "").withWritten(WrittenCounts.ZERO)));
    assertEquals(0, AnswerWriter.NO_CONTENT_RESPONSE.headers().size());
  }
}
