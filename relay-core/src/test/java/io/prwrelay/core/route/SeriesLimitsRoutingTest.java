package io.prwrelay.core.route;

import static io.prwrelay.testing.RequestBuffers.MAX_OUTPUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The routers with a per-tenant series gate ({@link SeriesLimits}): a series its tenant's gate
 * refuses is left out of that tenant's batch and recorded in {@link RouteResult#limited()}; every
 * other series, of that tenant and of the others, is routed as without a gate; the gate is given
 * the same label set hash the insight's digest records, computed once.
 */
class SeriesLimitsRoutingTest {
  private static final TenantRules RULES = TenantRules.builder().labels("service_id").build();

  /** Admits the first {@code max} distinct hashes it is asked about, and the same ones again. */
  private static final class FirstN implements SeriesLimits.Gate {
    final int max;
    final Set<Long> admitted = new HashSet<>();
    final List<Long> asked = new ArrayList<>();

    FirstN(int max) {
      this.max = max;
    }

    @Override
    public boolean admit(long hash) {
      asked.add(hash);
      if (admitted.contains(hash)) {
        return true;
      }
      if (admitted.size() < max) {
        admitted.add(hash);
        return true;
      }
      return false;
    }
  }

  private static WriteRequest request(int perTenantA, int perTenantB) {
    WriteRequest.Builder w = WriteRequest.newBuilder();
    for (int i = 0; i < Math.max(perTenantA, perTenantB); i++) {
      if (i < perTenantA) {
        w.addTimeseries(series("http_requests_total", "a", i));
      }
      if (i < perTenantB) {
        w.addTimeseries(series("up", "b", i));
      }
    }
    return w.build();
  }

  private static TimeSeries series(String name, String tenant, int pod) {
    return TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addLabels(Label.newBuilder().setName("pod").setValue("p-" + pod))
        .addLabels(Label.newBuilder().setName("service_id").setValue(tenant))
        .addSamples(Sample.newBuilder().setValue(pod).setTimestamp(1000 + pod))
        .build();
  }

  /** The series of each tenant's batch, decoded with the generated classes. */
  private static Map<String, List<TimeSeries>> route(
      AbstractTenantRouter router, byte[] bytes, boolean v2, RouteResultCheck check)
      throws Exception {
    ByteBuf in = Unpooled.wrappedBuffer(bytes);
    RouteResult result = router.route(in, PooledByteBufAllocator.DEFAULT);
    try {
      assertNull(result.error());
      Map<String, List<TimeSeries>> out = new LinkedHashMap<>();
      for (TenantBatch b : result.batches()) {
        byte[] content = ByteBufUtil.getBytes(b.content());
        List<TimeSeries> series = new ArrayList<>();
        if (v2) {
          Request r = Request.parseFrom(content);
          for (io.prwrelay.oracle.v2.TimeSeries t : r.getTimeseriesList()) {
            TimeSeries.Builder s = TimeSeries.newBuilder();
            for (int i = 0; i < t.getLabelsRefsCount(); i += 2) {
              s.addLabels(
                  Label.newBuilder()
                      .setName(r.getSymbols(t.getLabelsRefs(i)))
                      .setValue(r.getSymbols(t.getLabelsRefs(i + 1))));
            }
            series.add(s.build());
          }
        } else {
          series.addAll(WriteRequest.parseFrom(content).getTimeseriesList());
        }
        assertEquals(series.size(), b.series(), b.tenant());
        out.put(b.tenant(), series);
      }
      check.accept(result);
      return out;
    } finally {
      result.clear();
      in.release();
    }
  }

  interface RouteResultCheck {
    void accept(RouteResult r) throws Exception;
  }

  private static String pod(TimeSeries t) {
    return t.getLabelsList().stream()
        .filter(l -> l.getName().equals("pod"))
        .findFirst()
        .orElseThrow()
        .getValue();
  }

  @Test
  void seriesOverTheGateAreLeftOutOfTheirTenantsBatchOnly() throws Exception {
    TenantRouter router = new TenantRouter(RULES, false);
    FirstN gateA = new FirstN(30);
    router.limitSeries(tenant -> tenant.equals("a") ? gateA : null);
    Map<String, List<TimeSeries>> batches =
        route(
            router,
            request(100, 40).toByteArray(),
            false,
            r -> {
              assertEquals(70, r.limitedSeries(0), "tenant a's slot");
              assertEquals(0, r.limitedSeries(1), "tenant b's slot");
              assertFalse(r.whole());
            });
    assertEquals(30, batches.get("a").size());
    for (int i = 0; i < 30; i++) {
      assertEquals("p-" + i, pod(batches.get("a").get(i)), "the first 30 of a, in order");
    }
    assertEquals(40, batches.get("b").size(), "tenant b has no gate: every series");
    assertEquals(100, gateA.asked.size(), "one question per series of a");

    // The same request again: the 30 admitted series still pass, the 70 others still do not.
    Map<String, List<TimeSeries>> again =
        route(router, request(100, 40).toByteArray(), false, r -> {});
    assertEquals(batches.get("a"), again.get("a"));
  }

  @Test
  void theGateIsGivenTheHashTheDigestRecordsAndLimitedNamesAreSampledAsDigestsAre()
      throws Exception {
    TenantRouter router = new TenantRouter(RULES, true);
    FirstN gate = new FirstN(500);
    router.limitSeries(tenant -> gate);
    List<Long> digested = new ArrayList<>();
    List<Long> limited = new ArrayList<>();
    int[] limitedNames = new int[1];
    route(
        router,
        request(1000, 0).toByteArray(),
        false,
        r -> {
          SeriesDigests d = r.digests();
          for (int e = d.first(0); e != SeriesDigests.END; e = d.next(e)) {
            digested.add(d.hash(e));
          }
          SeriesDigests l = r.limited();
          for (int e = l.first(0); e != SeriesDigests.END; e = l.next(e)) {
            limited.add(l.hash(e));
            if (l.name(e) >= 0) {
              limitedNames[0]++;
              assertEquals(
                  "http_requests_total",
                  new String(
                      l.nameBytes(),
                      l.nameOffset(l.name(e)),
                      l.nameLength(l.name(e)),
                      StandardCharsets.UTF_8));
            }
          }
        });
    assertEquals(500, digested.size(), "only admitted series are digested for the insight");
    assertEquals(500, limited.size());
    List<Long> both = new ArrayList<>(digested);
    both.addAll(limited);
    assertEquals(new HashSet<>(gate.asked), new HashSet<>(both));
    assertEquals(1000, new HashSet<>(both).size(), "1000 label sets, 1000 hashes");
    int sampled = 0;
    for (long h : limited) {
      sampled += SeriesDigests.samplesName(h) ? 1 : 0;
    }
    assertEquals(sampled, limitedNames[0], "names of exactly the sampled limited series");
  }

  @Test
  void aTenantWhoseEverySeriesIsLimitedHasAnEmptyBatch() throws Exception {
    TenantRouter router = new TenantRouter(RULES, false);
    router.limitSeries(tenant -> tenant.equals("a") ? hash -> false : null);
    Map<String, List<TimeSeries>> batches =
        route(router, request(5, 3).toByteArray(), false, r -> assertEquals(5, r.limitedSeries(0)));
    assertEquals(List.of(), batches.get("a"));
    assertEquals(3, batches.get("b").size());
  }

  @Test
  void v2SeriesOverTheGateAreLeftOutAndTheRestKeepTheirLabels() throws Exception {
    for (V2BatchEncoder.Format format : V2BatchEncoder.Format.values()) {
      V2TenantRouter router = new V2TenantRouter(RULES, format, MAX_OUTPUT, false);
      FirstN gateA = new FirstN(10);
      router.limitSeries(tenant -> tenant.equals("a") ? gateA : null);
      WriteRequest v1 = request(25, 7);
      Map<String, List<TimeSeries>> batches =
          route(
              router,
              toV2(v1).toByteArray(),
              format == V2BatchEncoder.Format.V2,
              r -> assertEquals(15, r.limitedSeries(0)));
      assertEquals(10, batches.get("a").size(), format.name());
      for (int i = 0; i < 10; i++) {
        assertEquals(
            labels(series("http_requests_total", "a", i)),
            labels(batches.get("a").get(i)),
            format + " series " + i);
      }
      assertEquals(7, batches.get("b").size(), format.name());
    }
  }

  private static List<Label> labels(TimeSeries t) {
    return t.getLabelsList();
  }

  private static Request toV2(WriteRequest w) {
    Request.Builder r = Request.newBuilder().addSymbols("");
    Map<String, Integer> refs = new LinkedHashMap<>();
    for (TimeSeries t : w.getTimeseriesList()) {
      io.prwrelay.oracle.v2.TimeSeries.Builder s = io.prwrelay.oracle.v2.TimeSeries.newBuilder();
      for (Label l : t.getLabelsList()) {
        s.addLabelsRefs(ref(r, refs, l.getName())).addLabelsRefs(ref(r, refs, l.getValue()));
      }
      s.addSamples(
          io.prwrelay.oracle.v2.Sample.newBuilder()
              .setValue(t.getSamples(0).getValue())
              .setTimestamp(t.getSamples(0).getTimestamp()));
      r.addTimeseries(s);
    }
    return r.build();
  }

  private static int ref(Request.Builder r, Map<String, Integer> refs, String s) {
    return refs.computeIfAbsent(
        s,
        x -> {
          r.addSymbols(x);
          return r.getSymbolsCount() - 1;
        });
  }
}
