package io.prwrelay.core.route;

import static io.prwrelay.testing.RequestBuffers.MAX_OUTPUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.remotewrite.LabelSetHasher;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.TimeSeries;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * What a digesting router records per series: one entry per routed series in its tenant's slot, a
 * label set hash that is the same whenever the same labels are sent (whatever the samples, the
 * other series or the symbols table around them) and different for different label sets, and the
 * series' metric name.
 */
class SeriesDigestsTest {
  private static final TenantRules RULES = TenantRules.builder().labels("service_id").build();

  /** A series as the test sees it: its labels (sorted by name) and a sample value. */
  private record Series(TreeMap<String, String> labels, double value) {}

  private static Series series(double value, String... pairs) {
    TreeMap<String, String> labels = new TreeMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      labels.put(pairs[i], pairs[i + 1]);
    }
    return new Series(labels, value);
  }

  private static byte[] v1(List<Series> series) {
    WriteRequest.Builder w = WriteRequest.newBuilder();
    for (Series s : series) {
      io.prwrelay.oracle.v1.TimeSeries.Builder t = io.prwrelay.oracle.v1.TimeSeries.newBuilder();
      s.labels().forEach((n, v) -> t.addLabels(Label.newBuilder().setName(n).setValue(v)));
      t.addSamples(Sample.newBuilder().setValue(s.value()).setTimestamp((long) s.value()));
      w.addTimeseries(t);
    }
    return w.build().toByteArray();
  }

  /** A PRW 2.0 request whose symbols table lists the strings in the order {@code shuffle} says. */
  private static byte[] v2(List<Series> series, Random shuffle) {
    List<String> strings = new ArrayList<>();
    for (Series s : series) {
      s.labels()
          .forEach(
              (n, v) -> {
                strings.add(n);
                strings.add(v);
              });
    }
    List<String> distinct = new ArrayList<>(new java.util.LinkedHashSet<>(strings));
    Collections.shuffle(distinct, shuffle);
    distinct.remove("");
    distinct.add(0, "");
    Map<String, Integer> refs = new HashMap<>();
    for (int i = 0; i < distinct.size(); i++) {
      refs.put(distinct.get(i), i);
    }
    Request.Builder r = Request.newBuilder().addAllSymbols(distinct);
    for (Series s : series) {
      TimeSeries.Builder t = TimeSeries.newBuilder();
      s.labels()
          .forEach(
              (n, v) -> {
                t.addLabelsRefs(refs.get(n));
                t.addLabelsRefs(refs.get(v));
              });
      t.addSamples(
          io.prwrelay.oracle.v2.Sample.newBuilder()
              .setValue(s.value())
              .setTimestamp((long) s.value()));
      r.addTimeseries(t);
    }
    return r.build().toByteArray();
  }

  /** {@link Digest#name()} of a series whose name was not sampled. */
  private static final String NOT_SAMPLED = "(not sampled)";

  /** One digest as read back: tenant, label set hash and metric name (null for none). */
  private record Digest(String tenant, long hash, String name) {}

  private static List<Digest> digests(AbstractTenantRouter router, byte[] request) {
    ByteBuf in = Unpooled.wrappedBuffer(request);
    RouteResult result = router.route(in, PooledByteBufAllocator.DEFAULT);
    try {
      assertNull(result.error(), () -> String.valueOf(result.error()));
      SeriesDigests d = result.digests();
      List<Digest> out = new ArrayList<>();
      for (int slot = 0; slot < result.batches().size(); slot++) {
        String tenant = result.batches().get(slot).tenant();
        int n = 0;
        for (int e = d.first(slot); e != SeriesDigests.END; e = d.next(e)) {
          int name = d.name(e);
          out.add(
              new Digest(
                  tenant,
                  d.hash(e),
                  name == SeriesDigests.NO_NAME
                      ? null
                      : name == SeriesDigests.NOT_SAMPLED
                          ? NOT_SAMPLED
                          : new String(
                              d.nameBytes(),
                              d.nameOffset(name),
                              d.nameLength(name),
                              StandardCharsets.UTF_8)));
          n++;
        }
        assertEquals(result.batches().get(slot).series(), n, "entries of " + tenant);
      }
      assertEquals(out.size(), d.count());
      return out;
    } finally {
      result.clear();
      in.release();
    }
  }

  private static Map<String, List<Digest>> byTenant(List<Digest> digests) {
    Map<String, List<Digest>> out = new LinkedHashMap<>();
    for (Digest d : digests) {
      out.computeIfAbsent(d.tenant(), t -> new ArrayList<>()).add(d);
    }
    return out;
  }

  @Test
  void recordsEverySeriesInItsTenantsSlotWithItsMetricName() {
    List<Series> request =
        List.of(
            series(1, "__name__", "up", "service_id", "a", "job", "x"),
            series(2, "__name__", "http_requests_total", "service_id", "b", "code", "200"),
            series(3, "service_id", "a", "job", "no-name"),
            series(4, "__name__", "up", "service_id", "b", "job", "x"));
    Map<String, List<Digest>> v1 = byTenant(digests(new TenantRouter(RULES, true), v1(request)));
    assertEquals(List.of("a", "b"), List.copyOf(v1.keySet()));
    assertName("up", v1.get("a").get(0));
    assertName(null, v1.get("a").get(1));
    assertName("http_requests_total", v1.get("b").get(0));
    assertName("up", v1.get("b").get(1));
    for (V2BatchEncoder.Format format : V2BatchEncoder.Format.values()) {
      Map<String, List<Digest>> v2 =
          byTenant(
              digests(
                  new V2TenantRouter(RULES, format, MAX_OUTPUT, true), v2(request, new Random(1))));
      assertEquals(List.of("a", "b"), List.copyOf(v2.keySet()));
      assertName("up", v2.get("a").get(0));
      assertName(null, v2.get("a").get(1));
      assertName("http_requests_total", v2.get("b").get(0));
    }
  }

  /**
   * A digest carries {@code expected} (null: no name) when its series is one whose name is sampled,
   * and says it was not sampled otherwise.
   */
  private static void assertName(String expected, Digest d) {
    if (SeriesDigests.samplesName(d.hash())) {
      assertEquals(expected, d.name());
    } else {
      assertEquals(NOT_SAMPLED, d.name());
    }
  }

  @Test
  void oneSeriesInEightHasItsNameSampled() {
    List<Series> request = new ArrayList<>();
    for (int i = 0; i < 8000; i++) {
      request.add(series(i, "__name__", "m" + i % 3, "service_id", "a", "i", "" + i));
    }
    List<Digest> d = digests(new TenantRouter(RULES, true), v1(request));
    long sampled = d.stream().filter(x -> !x.name().equals(NOT_SAMPLED)).count();
    assertEquals(1000, sampled, 100);
    d.forEach(x -> assertName(x.name().equals(NOT_SAMPLED) ? "?" : x.name(), x));
  }

  @Test
  void aRouterThatDoesNotDigestRecordsNothing() {
    List<Series> request = List.of(series(1, "__name__", "up", "service_id", "a"));
    assertEquals(0, recorded(new TenantRouter(RULES), v1(request)));
    assertEquals(
        0,
        recorded(
            new V2TenantRouter(RULES, V2BatchEncoder.Format.V2, MAX_OUTPUT),
            v2(request, new Random(1))));
  }

  private static int recorded(AbstractTenantRouter router, byte[] request) {
    ByteBuf in = Unpooled.wrappedBuffer(request);
    RouteResult result = router.route(in, PooledByteBufAllocator.DEFAULT);
    try {
      assertEquals(1, result.batches().size());
      assertEquals(SeriesDigests.END, result.digests().first(0));
      return result.digests().count();
    } finally {
      result.clear();
      in.release();
    }
  }

  @Test
  void sameLabelsHashAlikeAcrossRequestsAndDistinctLabelsApart() {
    Random random = new Random(7);
    List<Series> sets = new ArrayList<>();
    Set<TreeMap<String, String>> seen = new HashSet<>();
    while (sets.size() < 20_000) {
      List<String> pairs = new ArrayList<>(List.of("__name__", "metric_" + random.nextInt(30)));
      pairs.addAll(List.of("service_id", "t" + random.nextInt(3)));
      int extra = random.nextInt(8);
      for (int i = 0; i < extra; i++) {
        pairs.add("label_" + random.nextInt(12));
        pairs.add(random.nextInt(4) == 0 ? "" : "v" + random.nextInt(1000));
      }
      Series s = series(0, pairs.toArray(String[]::new));
      if (seen.add(s.labels())) {
        sets.add(s);
      }
    }
    TenantRouter v1Router = new TenantRouter(RULES, true);
    V2TenantRouter v2Router = new V2TenantRouter(RULES, V2BatchEncoder.Format.V2, MAX_OUTPUT, true);
    Map<TreeMap<String, String>, Long> v1Hashes = new HashMap<>();
    Map<TreeMap<String, String>, Long> v2Hashes = new HashMap<>();
    // The same label sets sent three times, in requests of different sizes, orders and samples.
    for (int round = 0; round < 3; round++) {
      List<Series> all = new ArrayList<>();
      for (Series s : sets) {
        all.add(new Series(s.labels(), round * 1000 + random.nextInt(1000)));
      }
      Collections.shuffle(all, random);
      int size = 500 + round * 700;
      for (int from = 0; from < all.size(); from += size) {
        List<Series> part = all.subList(from, Math.min(all.size(), from + size));
        check(v1Hashes, part, digests(v1Router, v1(part)));
        check(v2Hashes, part, digests(v2Router, v2(part, random)));
      }
    }
    assertEquals(sets.size(), new HashSet<>(v1Hashes.values()).size(), "distinct v1 hashes");
    assertEquals(sets.size(), new HashSet<>(v2Hashes.values()).size(), "distinct v2 hashes");
  }

  /** Each series' hash is the one its labels had before; digests come in request order by slot. */
  private static void check(
      Map<TreeMap<String, String>, Long> hashes, List<Series> request, List<Digest> digests) {
    Map<String, List<Series>> bySlot = new LinkedHashMap<>();
    for (Series s : request) {
      bySlot.computeIfAbsent(s.labels().get("service_id"), t -> new ArrayList<>()).add(s);
    }
    List<Series> ordered = new ArrayList<>();
    bySlot.values().forEach(ordered::addAll);
    assertEquals(ordered.size(), digests.size());
    for (int i = 0; i < ordered.size(); i++) {
      Series s = ordered.get(i);
      Digest d = digests.get(i);
      assertName(s.labels().get("__name__"), d);
      Long before = hashes.putIfAbsent(s.labels(), d.hash());
      if (before != null) {
        assertEquals(before.longValue(), d.hash(), () -> "hash of " + s.labels());
      }
    }
  }

  /** The bytes of a series' label fields as protobuf-java writes them: what a v1 digest hashes. */
  private static byte[] labelFields(Series s) {
    io.prwrelay.oracle.v1.TimeSeries.Builder t = io.prwrelay.oracle.v1.TimeSeries.newBuilder();
    s.labels().forEach((n, v) -> t.addLabels(Label.newBuilder().setName(n).setValue(v)));
    return t.build().toByteArray();
  }

  @Test
  void aV1DigestHashesExactlyTheLabelFieldsWhereverTheTenantLabelIs() {
    String longValue = "v".repeat(300); // a two-byte length: read by the reader's slow path
    List<Series> request =
        List.of(
            series(1, "__name__", "up", "service_id", "a"),
            series(2, "__name__", "up", "a_first", "x", "service_id", "a", "z_last", "y"),
            series(3, "__name__", "up", "service_id", "a", "zz", longValue),
            series(4, "__name__", "up", "a", longValue, "service_id", "a"),
            series(5, "__name__", "up", "job", "no-tenant"),
            series(6, "Upper", "sorts-first", "__name__", "up", "service_id", "a"));
    List<Digest> digests = digests(new TenantRouter(RULES, true), v1(request));
    List<Series> inSlotOrder =
        List.of(
            request.get(0),
            request.get(1),
            request.get(2),
            request.get(3),
            request.get(5),
            request.get(4));
    for (int i = 0; i < inSlotOrder.size(); i++) {
      byte[] fields = labelFields(inSlotOrder.get(i));
      assertEquals(
          LabelSetHasher.hash(fields, 0, fields.length),
          digests.get(i).hash(),
          "series " + inSlotOrder.get(i).labels());
      assertName("up", digests.get(i));
    }
  }

  @Test
  void aLabelValueThatDiffersInOneByteChangesTheHash() {
    TenantRouter router = new TenantRouter(RULES, true);
    List<Digest> d =
        digests(
            router,
            v1(
                List.of(
                    series(1, "__name__", "up", "service_id", "a", "pod", "p-0001"),
                    series(1, "__name__", "up", "service_id", "a", "pod", "p-0002"))));
    assertNotEquals(d.get(0).hash(), d.get(1).hash());
  }
}
