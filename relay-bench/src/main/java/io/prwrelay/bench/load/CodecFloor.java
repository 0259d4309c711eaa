package io.prwrelay.bench.load;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.codec.ZstdCodec;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.remotewrite.SeriesView;
import io.prwrelay.core.remotewrite.WriteRequestReader;
import io.prwrelay.core.remotewrite.WriteRequestVisitor;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantRouter;
import io.prwrelay.core.route.TenantRules;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The codec floor of a run: the CPU time the relay cannot avoid for the generated requests, timed
 * in the generator's own process on the same data before the run starts. It decompresses each
 * request body (snappy, or zstd for {@code --encoding zstd}) and snappy-compresses each of its
 * tenant batches, exactly as the relay calls {@link SnappyCodec} with the relay's pooled allocator;
 * the batches are made once beforehand by {@link TenantRouter}, untimed. A snappy body that the
 * relay forwards as it came (one tenant, nothing to change: {@link RouteResult#whole()}) has no
 * batch to compress: its floor is the decompression and the scan of its labels up to each series'
 * tenant ({@link WriteRequestReader}), which the relay needs to know that. The figure is this
 * thread's CPU time per million series, so it compares with the relay's CPU per million series in
 * the same run and on the same machine.
 *
 * @param series series decoded and encoded in the timed passes
 * @param cpuSeconds CPU time of the timed passes (this thread only)
 * @param bodies bodies used
 * @param batches tenant batches of those bodies that are compressed
 * @param scanned bodies forwarded as they came, scanned instead of having batches compressed
 */
public record CodecFloor(long series, double cpuSeconds, int bodies, int batches, int scanned) {
  /** Bodies used at most: enough to vary the data, few enough to stay in memory. */
  static final int MAX_BODIES = 16;

  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private static final int NO_CAP = Integer.MAX_VALUE - 8;

  /** CPU seconds per million series. */
  public double cpuSecondsPerMillionSeries() {
    return series == 0 ? 0 : cpuSeconds / (series / 1e6);
  }

  /**
   * Times decode + encode over the first {@link #MAX_BODIES} bodies of {@code pool} in passes: one
   * untimed pass and passes for {@code time / 4}, then passes for {@code time}, timed.
   *
   * @param tenantLabel the label the relay routes by
   * @throws IllegalStateException when a generated body does not decode (a generator bug)
   */
  public static CodecFloor measure(
      RequestPool pool, Options.Encoding encoding, String tenantLabel, Duration time) {
    List<ByteBuf> bodies = new ArrayList<>();
    List<ByteBuf> batches = new ArrayList<>();
    int[] seriesPerBody = new int[Math.min(MAX_BODIES, pool.plainBodies())];
    boolean[] scanOnly = new boolean[seriesPerBody.length];
    TenantRouter router = new TenantRouter(TenantRules.builder().labels(tenantLabel).build());
    WriteRequestReader reader = new WriteRequestReader(List.of(tenantLabel), false);
    try (ZstdCodec zstd = new ZstdCodec()) {
      for (int b = 0; b < seriesPerBody.length; b++) {
        ByteBuf content = pool.body(b).content(b);
        ByteBuf body = ALLOC.directBuffer(content.readableBytes()).writeBytes(content);
        content.release();
        bodies.add(body);
        seriesPerBody[b] = pool.body(b).series();
        ByteBuf plain = decode(body, encoding, zstd);
        try {
          RouteResult routed = router.route(plain, ALLOC);
          scanOnly[b] = routed.whole() && encoding == Options.Encoding.SNAPPY;
          if (!scanOnly[b]) {
            for (TenantBatch batch : routed.batches()) {
              batches.add(batch.takeContent());
            }
          }
          routed.clear();
        } finally {
          plain.release();
        }
      }
      Pass pass = new Pass(bodies, batches, seriesPerBody, scanOnly, reader, encoding, zstd);
      pass.run();
      pass.repeatFor(time.dividedBy(4));
      ThreadMXBean threads = ManagementFactory.getThreadMXBean();
      long cpuStart = threads.getCurrentThreadCpuTime();
      long series = pass.repeatFor(time);
      long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
      int scanned = 0;
      for (boolean scan : scanOnly) {
        scanned += scan ? 1 : 0;
      }
      return new CodecFloor(series, cpu / 1e9, bodies.size(), batches.size(), scanned);
    } catch (CodecException e) {
      throw new IllegalStateException("a generated body does not decode", e);
    } finally {
      bodies.forEach(ByteBuf::release);
      batches.forEach(ByteBuf::release);
    }
  }

  /** The timed work over every body and batch, repeated. */
  private record Pass(
      List<ByteBuf> bodies,
      List<ByteBuf> batches,
      int[] seriesPerBody,
      boolean[] scanOnly,
      WriteRequestReader reader,
      Options.Encoding encoding,
      ZstdCodec zstd) {
    /**
     * Decodes every body (and scans those forwarded as they came) and encodes every batch once;
     * returns the series.
     */
    long run() throws CodecException {
      long series = 0;
      for (int b = 0; b < bodies.size(); b++) {
        ByteBuf plain = decode(bodies.get(b), encoding, zstd);
        if (scanOnly[b]) {
          reader.read(
              plain.array(),
              plain.arrayOffset() + plain.readerIndex(),
              plain.readableBytes(),
              SCAN);
        }
        plain.release();
        series += seriesPerBody[b];
      }
      for (ByteBuf batch : batches) {
        SnappyCodec.encode(batch, ALLOC).release();
      }
      return series;
    }

    /** Runs whole passes until {@code time} has passed; returns the series. */
    long repeatFor(Duration time) throws CodecException {
      long until = System.nanoTime() + time.toNanos();
      long series = 0;
      do {
        series += run();
      } while (System.nanoTime() - until < 0);
      return series;
    }
  }

  /** A visitor that takes every series and nothing else: the scan's cost is the reader's. */
  private static final WriteRequestVisitor SCAN =
      new WriteRequestVisitor() {
        @Override
        public boolean onSeries(SeriesView series) {
          return true;
        }

        @Override
        public void onMetadata(int start, int end) {}
      };

  /**
   * @param body borrowed
   * @return the decompressed request (a heap buffer), which the caller releases
   */
  private static ByteBuf decode(ByteBuf body, Options.Encoding encoding, ZstdCodec zstd)
      throws CodecException {
    return encoding == Options.Encoding.ZSTD
        ? zstd.decode(body, ALLOC, NO_CAP)
        : SnappyCodec.decode(body, ALLOC, NO_CAP);
  }

  /** One line for the summary. */
  String describe() {
    return String.format(
        "%.3f CPU-s per million series (decode of %d bodies + snappy encode of their %,d tenant"
            + " batches%s, one thread of this JVM, %.1f s of CPU before the run)",
        cpuSecondsPerMillionSeries(),
        bodies,
        batches,
        scanned == 0 ? "" : "; label scan of the " + scanned + " forwarded as they came",
        cpuSeconds);
  }
}
