package io.prwrelay.server.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.prwrelay.server.protocol.Protocol;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The per-request parts of a request head: lengths and tenants in every placeholder. */
class RequestHeadTest {
  @Test
  void lengthIsWrittenAsIntegerToStringWrites() {
    ByteBuf buf = Unpooled.buffer(1);
    try {
      for (int n : new int[] {0, 7, 9, 10, 99, 100, 65_535, 1_000_000, Integer.MAX_VALUE}) {
        buf.clear();
        RequestHead.writeDecimal(buf, n);
        assertEquals(Integer.toString(n), buf.toString(StandardCharsets.US_ASCII));
      }
    } finally {
      buf.release();
    }
  }

  @Test
  void everyTenantPlaceholderOfThePathIsReplaced() {
    RequestHead head =
        new RequestHead("/%7Btenant%7D/push?org=%7Btenant%7D", "h", "ua", "X-Scope-OrgID", null);
    ByteBuf buf = head.encode(UnpooledByteBufAllocator.DEFAULT, "t-1", Protocol.V1, 0, 3);
    try {
      String text = buf.toString(StandardCharsets.US_ASCII);
      assertEquals(
          "POST /t-1/push?org=t-1 HTTP/1.1\r\n", text.substring(0, text.indexOf('\n') + 1));
      assertEquals(
          "X-Scope-OrgID: t-1\r\ncontent-length: 3\r\nconnection: keep-alive\r\n\r\n",
          text.substring(text.indexOf("X-Scope-OrgID")));
    } finally {
      buf.release();
    }
  }

  @Test
  void aRetryCarriesRetryAttemptAndAFirstSendDoesNot() {
    RequestHead head = new RequestHead("/api/v1/push", "h", "ua", "X-Scope-OrgID", "Basic x");
    for (int n : new int[] {0, 1, 12, Integer.MAX_VALUE}) {
      ByteBuf buf =
          head.encode(
              UnpooledByteBufAllocator.DEFAULT, "tenant-with-a-long-name", Protocol.V2, n, 123);
      try {
        String text = buf.toString(StandardCharsets.US_ASCII);
        assertEquals(
            "X-Scope-OrgID: tenant-with-a-long-name\r\ncontent-length: 123\r\n"
                + (n > 0 ? "retry-attempt: " + n + "\r\n" : "")
                + "connection: keep-alive\r\nauthorization: Basic x\r\n\r\n",
            text.substring(text.indexOf("X-Scope-OrgID")));
      } finally {
        buf.release();
      }
    }
  }
}
