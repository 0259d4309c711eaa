package io.prwrelay.core.route;

import static io.prwrelay.testing.RequestBuffers.MAX_OUTPUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.remotewrite.SeededHash;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.TimeSeries;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/**
 * The bounds on the metric names a digesting router records ({@link DigestNames}): a name longer
 * than {@link SeriesDigests#MAX_NAME_BYTES} is recorded as its first bytes and {@code …}, a request
 * records at most {@link DigestNames#MAX_NAMES} names and {@link DigestNames#MAX_BYTES} bytes of
 * them, and series that cycle between long names never copy a name more than once per request.
 */
class DigestNamesTest {
  private static final TenantRules RULES = TenantRules.builder().labels("service_id").build();
  private static final String MARKER = "\u2026";

  /** A PRW 1.0 request of {@code n} series of tenant {@code t}, series i named {@code name(i)}. */
  private static byte[] v1(int n, IntFunction<String> name) {
    WriteRequest.Builder w = WriteRequest.newBuilder();
    for (int i = 0; i < n; i++) {
      w.addTimeseries(
          io.prwrelay.oracle.v1.TimeSeries.newBuilder()
              .addLabels(Label.newBuilder().setName("__name__").setValue(name.apply(i)))
              .addLabels(Label.newBuilder().setName("i").setValue(Integer.toString(i)))
              .addLabels(Label.newBuilder().setName("service_id").setValue("t"))
              .addSamples(Sample.newBuilder().setValue(i).setTimestamp(i)));
    }
    return w.build().toByteArray();
  }

  /**
   * A PRW 2.0 request of {@code n} series of tenant {@code t}, series i named {@code names[i %
   * names.length]}: each name is one symbol, however many series refer to it.
   */
  private static byte[] v2(int n, String... names) {
    Request.Builder r = Request.newBuilder().addSymbols("").addSymbols("__name__");
    for (String name : names) {
      r.addSymbols(name);
    }
    int base = r.getSymbolsCount();
    r.addSymbols("i").addSymbols("service_id").addSymbols("t");
    for (int i = 0; i < n; i++) {
      r.addSymbols(Integer.toString(i));
      r.addTimeseries(
          TimeSeries.newBuilder()
              .addLabelsRefs(1)
              .addLabelsRefs(2 + i % names.length)
              .addLabelsRefs(base)
              .addLabelsRefs(base + 3 + i)
              .addLabelsRefs(base + 1)
              .addLabelsRefs(base + 2)
              .addSamples(io.prwrelay.oracle.v2.Sample.newBuilder().setValue(i).setTimestamp(i)));
    }
    return r.build().toByteArray();
  }

  /** Routes {@code request} and hands its digests to {@code check} before they are cleared. */
  private static void route(
      AbstractTenantRouter router, byte[] request, Consumer<SeriesDigests> check) {
    ByteBuf in = Unpooled.wrappedBuffer(request);
    RouteResult result = router.route(in, PooledByteBufAllocator.DEFAULT);
    try {
      assertNull(result.error(), () -> String.valueOf(result.error()));
      check.accept(result.digests());
    } finally {
      result.clear();
      in.release();
    }
  }

  private static List<String> names(SeriesDigests d) {
    List<String> out = new ArrayList<>();
    for (int n = 0; n < d.nameCount(); n++) {
      out.add(new String(d.nameBytes(), d.nameOffset(n), d.nameLength(n), StandardCharsets.UTF_8));
    }
    return out;
  }

  /** Series whose name was sampled (by their label set hash), whether or not it was recorded. */
  private static int sampledSeries(SeriesDigests d) {
    int sampled = 0;
    for (int e = d.first(0); e != SeriesDigests.END; e = d.next(e)) {
      if (SeriesDigests.samplesName(d.hash(e))) {
        sampled++;
      }
    }
    return sampled;
  }

  private static int namedSeries(SeriesDigests d) {
    int named = 0;
    for (int e = d.first(0); e != SeriesDigests.END; e = d.next(e)) {
      if (d.name(e) >= 0) {
        named++;
      }
    }
    return named;
  }

  private static List<AbstractTenantRouter> routers() {
    return List.of(
        new TenantRouter(RULES, true),
        new V2TenantRouter(RULES, V2BatchEncoder.Format.V2, MAX_OUTPUT, true),
        new V2TenantRouter(RULES, V2BatchEncoder.Format.V1, MAX_OUTPUT, true));
  }

  private static byte[] request(AbstractTenantRouter router, int n, String... names) {
    return router instanceof TenantRouter ? v1(n, i -> names[i % names.length]) : v2(n, names);
  }

  @Test
  void aNameOverTheBoundIsRecordedAsItsFirstBytesAndAMarkerInBothVersions() {
    String ascii = "a".repeat(1000) + "_total";
    // Two-byte characters: the cut falls between characters, never inside one.
    String accented = "é".repeat(500);
    String whole = "b".repeat(SeriesDigests.MAX_NAME_BYTES);
    List<Long> hashes = new ArrayList<>();
    for (AbstractTenantRouter router : routers()) {
      route(
          router,
          request(router, 600, ascii, accented, whole),
          d -> {
            assertEquals(
                Set.of("a".repeat(253) + MARKER, "é".repeat(126) + MARKER, whole),
                Set.copyOf(names(d)));
            for (int n = 0; n < d.nameCount(); n++) {
              assertTrue(d.nameLength(n) <= SeriesDigests.MAX_NAME_BYTES, "name " + n);
              assertEquals(
                  SeededHash.hash(d.nameBytes(), d.nameOffset(n), d.nameLength(n)), d.nameHash(n));
              hashes.add(d.nameHash(n));
            }
          });
    }
    // The same names hash alike whichever version carried them.
    assertEquals(Set.copyOf(hashes.subList(0, 3)), Set.copyOf(hashes.subList(3, 6)));
    assertEquals(Set.copyOf(hashes.subList(0, 3)), Set.copyOf(hashes.subList(6, 9)));
  }

  @Test
  void aPrw1NameOfTwoHundredBytesIsFoundAndKeptWhole() {
    String name = "n".repeat(200);
    route(
        new TenantRouter(RULES, true),
        v1(400, i -> name),
        d -> {
          assertEquals(List.of(name), names(d));
          assertEquals(sampledSeries(d), namedSeries(d));
        });
  }

  @Test
  void seriesCyclingBetweenTwoLongNamesCopyEachOnceCut() {
    // (Converted to PRW 1.0, such a request is refused for its size: OutputBoundTest.)
    for (AbstractTenantRouter router :
        List.of(
            new TenantRouter(RULES, true),
            new V2TenantRouter(RULES, V2BatchEncoder.Format.V2, MAX_OUTPUT, true))) {
      // PRW 2.0: two symbols of a megabyte, each named by 2,000 series; PRW 1.0 carries the name in
      // every series, so 4 KiB each there.
      int length = router instanceof TenantRouter ? 4096 : 1 << 20;
      // Equal length and equal first and last bytes: the two names share a slot of the name cache.
      String x = "x" + "a".repeat(length - 2) + "x";
      String y = "x" + "b".repeat(length - 2) + "x";
      route(
          router,
          request(router, 4000, x, y),
          d -> {
            assertEquals(
                Set.of(x.substring(0, 253) + MARKER, y.substring(0, 253) + MARKER),
                Set.copyOf(names(d)));
            assertEquals(sampledSeries(d), namedSeries(d), "every sampled series is named");
            assertTrue(sampledSeries(d) > 400, "sampled: " + sampledSeries(d));
            // Two names of 256 bytes: the array never grew past its first size.
            assertEquals(1024, d.nameBytes().length);
          });
    }
  }

  @Test
  void aRequestRecordsAtMostItsBoundOfNames() {
    TenantRouter router = new TenantRouter(RULES, true);
    route(
        router,
        v1(48_000, i -> "m" + i),
        d -> {
          assertTrue(sampledSeries(d) > DigestNames.MAX_NAMES, "sampled: " + sampledSeries(d));
          assertEquals(DigestNames.MAX_NAMES, d.nameCount());
          assertEquals(DigestNames.MAX_NAMES, namedSeries(d), "the others are not sampled");
        });
    // The next request records its names again.
    route(router, v1(400, i -> "up"), d -> assertEquals(List.of("up"), names(d)));
  }

  @Test
  void aRequestRecordsAtMostItsBoundOfNameBytes() {
    String tail = "_".repeat(SeriesDigests.MAX_NAME_BYTES);
    for (AbstractTenantRouter router : routers()) {
      byte[] request;
      if (router instanceof TenantRouter) {
        request = v1(16_000, i -> i + tail);
      } else {
        String[] names = new String[16_000];
        for (int i = 0; i < names.length; i++) {
          names[i] = i + tail;
        }
        request = v2(names.length, names);
      }
      route(
          router,
          request,
          d -> {
            int most = DigestNames.MAX_BYTES / SeriesDigests.MAX_NAME_BYTES;
            assertTrue(sampledSeries(d) > most, "sampled: " + sampledSeries(d));
            assertEquals(most, d.nameCount());
            assertEquals(most, namedSeries(d));
            assertTrue(
                d.nameBytes().length <= DigestNames.MAX_BYTES + SeriesDigests.MAX_NAME_BYTES,
                "name bytes: " + d.nameBytes().length);
          });
    }
  }

  @Test
  void theDigestArraysOfALargeRequestAreGivenBackAfterIt() {
    TenantRouter router = new TenantRouter(RULES, true);
    route(
        router,
        v1(SeriesDigests.RETAINED_ENTRIES + 1, i -> "up"),
        d -> assertTrue(d.capacity() > SeriesDigests.RETAINED_ENTRIES));
    route(router, v1(10, i -> "up"), d -> assertEquals(256, d.capacity()));
    // Up to the bound the arrays are kept: no allocation per request.
    route(router, v1(SeriesDigests.RETAINED_ENTRIES, i -> "up"), d -> {});
    route(
        router, v1(10, i -> "up"), d -> assertEquals(SeriesDigests.RETAINED_ENTRIES, d.capacity()));
  }
}
