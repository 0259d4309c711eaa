package io.prwrelay.bench.load;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.bench.LabelWalk;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.codec.ZstdCodec;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.remotewrite.LabelSetHasher;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantRouter;
import io.prwrelay.core.route.TenantRules;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.locks.LockSupport;

/**
 * The codec floor of a run: the CPU time the relay cannot avoid for the generated requests, timed
 * in the generator's own process on the same data before the run starts. For each request body it
 * decompresses the body (snappy, or zstd for {@code --encoding zstd}) as the relay calls {@link
 * SnappyCodec} or {@link ZstdCodec}, with the relay's pooled allocator; walks its labels up to each
 * series' tenant label with the checks the relay's reader makes ({@link LabelWalk#walkValidated});
 * hashes each series' whole label set as the tenant insight does ({@link LabelSetHasher#hash}, over
 * ranges found beforehand); and snappy-compresses each of its tenant batches, which {@link
 * TenantRouter} made once beforehand, untimed. A snappy body that the relay forwards as it came
 * (one tenant, nothing to change: {@link RouteResult#whole()}) has no batch to compress.
 *
 * <p>Two figures: back to back (the bodies in a tight loop, the code and data hot in the caches),
 * and paced at the run's offered rate (one body every {@code 1 / rate} seconds, the thread parked
 * in between, as the relay meets them), which is the one a run at a fixed rate is compared with.
 * Each is this thread's CPU time per million series, so it compares with the relay's CPU per
 * million series in the same run and on the same machine.
 *
 * @param series series handled in the timed back-to-back passes
 * @param cpuSeconds CPU time of those passes (this thread only)
 * @param bodies bodies used
 * @param batches tenant batches of those bodies that are compressed
 * @param whole bodies forwarded as they came, with no batch to compress
 * @param rate the offered rate of the paced pass, requests per second; 0 when there was none
 * @param pacedSeries series handled in the paced pass
 * @param pacedCpuSeconds CPU time of the paced pass (this thread only, its parking included)
 */
public record CodecFloor(
    long series,
    double cpuSeconds,
    int bodies,
    int batches,
    int whole,
    double rate,
    long pacedSeries,
    double pacedCpuSeconds) {
  /** Bodies used at most: enough to vary the data, few enough to stay in memory. */
  static final int MAX_BODIES = 16;

  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private static final int NO_CAP = Integer.MAX_VALUE - 8;

  /** CPU seconds per million series, back to back. */
  public double cpuSecondsPerMillionSeries() {
    return series == 0 ? 0 : cpuSeconds / (series / 1e6);
  }

  /** CPU seconds per million series at the run's offered rate; empty at max rate. */
  public OptionalDouble pacedCpuSecondsPerMillionSeries() {
    return pacedSeries == 0
        ? OptionalDouble.empty()
        : OptionalDouble.of(pacedCpuSeconds / (pacedSeries / 1e6));
  }

  /** The figure the run compares with: paced at the run's rate when it has one. */
  public double referenceCpuSecondsPerMillionSeries() {
    return pacedCpuSecondsPerMillionSeries().orElse(cpuSecondsPerMillionSeries());
  }

  /**
   * Times the floor over the first {@link #MAX_BODIES} bodies of {@code pool}: back to back in
   * passes (one untimed pass and passes for {@code time / 4}, then passes for {@code time}, timed),
   * then, when {@code rate > 0}, one body after the other at {@code rate} per second for {@code
   * time}, timed.
   *
   * @param tenantLabel the label the relay routes by
   * @param rate the run's offered rate in requests per second; 0 for max rate (no paced pass)
   * @throws IllegalStateException when a generated body does not decode or walk (a generator bug)
   */
  public static CodecFloor measure(
      RequestPool pool, Options.Encoding encoding, String tenantLabel, Duration time, double rate) {
    int n = Math.min(MAX_BODIES, pool.plainBodies());
    ByteBuf[] bodies = new ByteBuf[n];
    List<List<ByteBuf>> batches = new ArrayList<>();
    int[] seriesPerBody = new int[n];
    int[][] ranges = new int[n][];
    TenantRouter router = new TenantRouter(TenantRules.builder().labels(tenantLabel).build());
    LabelWalk walk = new LabelWalk(tenantLabel);
    int batchCount = 0;
    int whole = 0;
    try (ZstdCodec zstd = new ZstdCodec()) {
      for (int b = 0; b < n; b++) {
        ByteBuf content = pool.body(b).content(b);
        bodies[b] = ALLOC.directBuffer(content.readableBytes()).writeBytes(content);
        content.release();
        seriesPerBody[b] = pool.body(b).series();
        List<ByteBuf> own = new ArrayList<>();
        batches.add(own);
        ByteBuf plain = decode(bodies[b], encoding, zstd);
        try {
          byte[] bytes = ByteBufUtil.getBytes(plain);
          ranges[b] = LabelWalk.labelRanges(bytes);
          if (walk.walkValidated(bytes, 0, bytes.length) < 0
              || ranges[b].length != 2 * seriesPerBody[b]) {
            throw new IllegalStateException("a generated body does not walk: body " + b);
          }
          RouteResult routed = router.route(plain, ALLOC);
          if (routed.whole() && encoding == Options.Encoding.SNAPPY) {
            whole++;
          } else {
            for (TenantBatch batch : routed.batches()) {
              own.add(batch.takeContent());
            }
            batchCount += own.size();
          }
          routed.clear();
        } finally {
          plain.release();
        }
      }
      Work work = new Work(bodies, batches, seriesPerBody, ranges, walk, encoding, zstd);
      work.pass();
      work.repeatFor(time.dividedBy(4));
      ThreadMXBean threads = ManagementFactory.getThreadMXBean();
      long cpuStart = threads.getCurrentThreadCpuTime();
      long series = work.repeatFor(time);
      long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
      long pacedSeries = 0;
      long pacedCpu = 0;
      if (rate > 0) {
        cpuStart = threads.getCurrentThreadCpuTime();
        pacedSeries = work.paced(rate, time);
        pacedCpu = threads.getCurrentThreadCpuTime() - cpuStart;
      }
      return new CodecFloor(
          series, cpu / 1e9, n, batchCount, whole, rate, pacedSeries, pacedCpu / 1e9);
    } catch (CodecException e) {
      throw new IllegalStateException("a generated body does not decode", e);
    } finally {
      for (ByteBuf body : bodies) {
        if (body != null) {
          body.release();
        }
      }
      batches.forEach(list -> list.forEach(ByteBuf::release));
    }
  }

  /** The timed work for each body. */
  private record Work(
      ByteBuf[] bodies,
      List<List<ByteBuf>> batches,
      int[] seriesPerBody,
      int[][] ranges,
      LabelWalk walk,
      Options.Encoding encoding,
      ZstdCodec zstd) {
    /** Decodes, walks and hashes body {@code b} and encodes its batches; returns its series. */
    long body(int b) throws CodecException {
      ByteBuf plain = decode(bodies[b], encoding, zstd);
      try {
        byte[] a = plain.array();
        int offset = plain.arrayOffset() + plain.readerIndex();
        blackhole ^=
            walk.walkValidated(a, offset, plain.readableBytes())
                + LabelWalk.hashLabelSets(a, offset, ranges[b]);
      } finally {
        plain.release();
      }
      for (ByteBuf batch : batches.get(b)) {
        SnappyCodec.encode(batch, ALLOC).release();
      }
      return seriesPerBody[b];
    }

    /** Every body once; returns the series. */
    long pass() throws CodecException {
      long series = 0;
      for (int b = 0; b < bodies.length; b++) {
        series += body(b);
      }
      return series;
    }

    /** Runs whole passes until {@code time} has passed; returns the series. */
    long repeatFor(Duration time) throws CodecException {
      long until = System.nanoTime() + time.toNanos();
      long series = 0;
      do {
        series += pass();
      } while (System.nanoTime() - until < 0);
      return series;
    }

    /** One body every {@code 1 / rate} seconds for {@code time}; returns the series. */
    long paced(double rate, Duration time) throws CodecException {
      long period = Math.max(1, (long) (1e9 / rate));
      long next = System.nanoTime();
      long until = next + time.toNanos();
      long series = 0;
      int b = 0;
      while (next - until < 0) {
        long wait = next - System.nanoTime();
        if (wait > 0) {
          LockSupport.parkNanos(wait);
        }
        series += body(b);
        b = (b + 1) % bodies.length;
        next += period;
      }
      return series;
    }
  }

  /** Where the walk's and the hashes' results go, so that neither is optimised away. */
  static volatile long blackhole;

  /**
   * @param body borrowed
   * @return the decompressed request (a heap buffer), which the caller releases
   */
  private static ByteBuf decode(ByteBuf body, Options.Encoding encoding, ZstdCodec zstd)
      throws CodecException {
    ByteBuf plain =
        encoding == Options.Encoding.ZSTD
            ? zstd.decode(body, ALLOC, NO_CAP)
            : SnappyCodec.decode(body, ALLOC, NO_CAP);
    if (!plain.hasArray()) {
      plain.release();
      throw new IllegalStateException("the decoder returned a direct buffer");
    }
    return plain;
  }

  /** One line for the summary. */
  String describe() {
    OptionalDouble perMillion = pacedCpuSecondsPerMillionSeries();
    String paced =
        perMillion.isEmpty()
            ? ""
            : String.format(
                "%.3f CPU-s per million series paced at %s requests/s (%.2f s of CPU); ",
                perMillion.getAsDouble(), Summary.plain(rate), pacedCpuSeconds);
    return String.format(
        "%s%.3f back to back (%.1f s of CPU): decode, validated label walk and label-set hash of"
            + " %d bodies, snappy encode of their %,d tenant batches%s; one thread of this JVM,"
            + " before the run",
        paced,
        cpuSecondsPerMillionSeries(),
        cpuSeconds,
        bodies,
        batches,
        whole == 0 ? "" : " (" + whole + " forwarded as they came, no batch)");
  }
}
