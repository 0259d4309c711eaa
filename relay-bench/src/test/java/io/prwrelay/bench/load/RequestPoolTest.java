package io.prwrelay.bench.load;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
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
      assertEquals(first.body.uncompressedBytes(), plainA.length);
      WriteRequest requestA = WriteRequest.parseFrom(plainA);
      WriteRequest requestB = WriteRequest.parseFrom(Snappy.uncompress(b));
      assertTrue(requestA.getUnknownFields().asMap().isEmpty(), "nothing but series");
      assertEquals(first.body.series(), requestA.getTimeseriesCount());
      // The request's number is the first series' sample value; every other byte is shared.
      assertEquals(0.0, requestA.getTimeseries(0).getSamples(0).getValue());
      assertEquals(1.0, requestB.getTimeseries(0).getSamples(0).getValue());
      assertEquals(
          requestA.getTimeseries(0).getLabelsList(), requestB.getTimeseries(0).getLabelsList());
      assertEquals(
          requestA.getTimeseriesList().subList(1, requestA.getTimeseriesCount()),
          requestB.getTimeseriesList().subList(1, requestB.getTimeseriesCount()));
    }
  }

  /** Tenants of the series of the body of {@code w}, in order. */
  private static List<String> tenants(Write w) throws Exception {
    WriteRequest r = WriteRequest.parseFrom(Snappy.uncompress(bytes(w)));
    List<String> out = new ArrayList<>();
    for (TimeSeries s : r.getTimeseriesList()) {
      for (Label l : s.getLabelsList()) {
        if (l.getName().equals("service_id")) {
          out.add(l.getValue());
        }
      }
    }
    return out;
  }

  /** A pool of 10 bodies of 60 series of 3 tenants in {@code shape}. */
  private static RequestPool shapedPool(String shape) throws Exception {
    return RequestPool.generate(
        Options.parse(
            URL, "--pool", "10", "--tenants", "3", "--series-per-request", "60", "--shape", shape));
  }

  @Test
  void singleShapeGivesEachRequestOneTenantInTurnAndMixInterleavesOneInFive() throws Exception {
    try (RequestPool pool = shapedPool("single")) {
      for (int i = 0; i < 10; i++) {
        List<String> tenants = tenants(pool.next());
        assertEquals(60, tenants.size());
        assertEquals(Set.of("tenant-" + i % 3), Set.copyOf(tenants));
      }
    }
    try (RequestPool pool = shapedPool("mix")) {
      for (int i = 0; i < 10; i++) {
        int distinct = Set.copyOf(tenants(pool.next())).size();
        assertEquals(i % 5 == 4 ? 3 : 1, distinct, "body " + i);
      }
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
