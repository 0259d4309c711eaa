package io.prwrelay.bench.load;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

class RequestPoolTest {
  private static final String URL = "--relay-url=http://127.0.0.1:8080/api/v1/write";

  private static byte[] bytes(Write w) {
    ByteBuf content = w.content();
    try {
      assertEquals(w.body.compressedBytes(), content.readableBytes());
      return ByteBufUtil.getBytes(content);
    } finally {
      content.release();
    }
  }

  @Test
  void everyRequestIsADistinctBodyOfTheSameSeries() throws Exception {
    try (RequestPool pool = RequestPool.generate(Options.parse(URL, "--pool", "1"))) {
      Write first = pool.next();
      Write second = pool.next();
      assertTrue(first.body == second.body);
      byte[] a = bytes(first);
      byte[] b = bytes(second);
      assertFalse(Arrays.equals(a, b));
      assertArrayEquals(a, bytes(first), "a retry sends the same bytes");
      byte[] plainA = Snappy.uncompress(a);
      byte[] plainB = Snappy.uncompress(b);
      assertEquals(first.body.uncompressedBytes(), plainA.length);
      assertArrayEquals(new byte[] {0x7A, 8}, Arrays.copyOf(plainA, 2), "field 15, 8 bytes");
      assertArrayEquals(
          Arrays.copyOfRange(plainA, 10, plainA.length),
          Arrays.copyOfRange(plainB, 10, plainB.length));
      assertFalse(Arrays.equals(Arrays.copyOf(plainA, 10), Arrays.copyOf(plainB, 10)));
    }
  }

  @Test
  void theBadTenantIsInExactlyItsShareOfTheRequests() throws Exception {
    try (RequestPool pool =
        RequestPool.generate(
            Options.parse(
                URL,
                "--pool",
                "8",
                "--tenants",
                "4",
                "--series-per-request",
                "50",
                "--bad-tenant",
                "429",
                "--bad-share",
                "0.1"))) {
      assertEquals(4, pool.badTenantIndex());
      assertEquals(BadTenant.TENANT, pool.tenants().get(4));
      int carrying = 0;
      for (int i = 0; i < 1000; i++) {
        RequestPool.Body body = pool.next().body;
        if (body.carriesBad()) {
          carrying++;
          int at = Arrays.binarySearch(body.tenantIndexes(), 4);
          assertEquals(10, body.tenantSeries()[at], "50 series / (4 + 1) tenants");
        } else {
          assertFalse(Arrays.stream(body.tenantIndexes()).anyMatch(t -> t == 4));
        }
      }
      assertEquals(100, carrying);
    }
  }
}
