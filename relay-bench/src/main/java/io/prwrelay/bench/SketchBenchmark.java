package io.prwrelay.bench;

import io.prwrelay.server.insight.HyperLogLog;
import java.util.SplittableRandom;
import org.apache.datasketches.hll.HllSketch;
import org.apache.datasketches.hll.TgtHllType;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;

/**
 * One distinct-count update per series, as the tenant insight does per routed series: 2,000 label
 * set hashes (already mixed, as the router's digest makes them) counted again and again, the steady
 * state of a tenant sending the same series every request. The relay's own {@link HyperLogLog}
 * against Apache DataSketches' {@code HllSketch} at the same lgK ({@link HyperLogLog#P}), with
 * 4-bit registers (what the insight used) and 8-bit ones. Times are per update.
 */
public class SketchBenchmark extends RelayBenchmark {
  private static final int SERIES = 2000;

  private final long[] hashes = new long[SERIES];
  private final HllSketch hll4 = new HllSketch(HyperLogLog.P, TgtHllType.HLL_4);
  private final HllSketch hll8 = new HllSketch(HyperLogLog.P, TgtHllType.HLL_8);
  private final HyperLogLog own = new HyperLogLog();

  @Setup(Level.Trial)
  public void setUp() {
    SplittableRandom r = new SplittableRandom(24);
    for (int i = 0; i < SERIES; i++) {
      hashes[i] = r.nextLong();
      hll4.update(hashes[i]);
      hll8.update(hashes[i]);
      own.add(hashes[i]);
    }
  }

  @Benchmark
  @OperationsPerInvocation(SERIES)
  public HllSketch dataSketchesHll4() {
    for (long h : hashes) {
      hll4.update(h);
    }
    return hll4;
  }

  @Benchmark
  @OperationsPerInvocation(SERIES)
  public HllSketch dataSketchesHll8() {
    for (long h : hashes) {
      hll8.update(h);
    }
    return hll8;
  }

  @Benchmark
  @OperationsPerInvocation(SERIES)
  public HyperLogLog hyperLogLog() {
    for (long h : hashes) {
      own.add(h);
    }
    return own;
  }
}
