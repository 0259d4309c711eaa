package io.prwrelay.bench.load;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * What the sender saw during one run, updated by the connections' event loops and read by the
 * progress printer and the summary. A request belongs to the warm-up or to the measured phase by
 * the time it was sent. Answers and transport errors are counted over the whole run, warm-up
 * included, because every request must be accounted for in the per-tenant check.
 */
final class RunStats {
  /** Counters of one phase; throughput counts accepted (2xx) requests only. */
  static final class Phase {
    final LongAdder accepted = new LongAdder();
    final LongAdder series = new LongAdder();
    final LongAdder compressedBytes = new LongAdder();
    final LongAdder uncompressedBytes = new LongAdder();
    final LongAdder failed = new LongAdder();

    /** Latencies in nanoseconds, recorded by any thread, to 3 significant digits. */
    private final Recorder recorder = new Recorder(3);

    private final Histogram latency = new Histogram(3);
    private Histogram interval;

    /**
     * Every latency recorded so far. Call from one thread only (the progress printer, then the
     * summary); the result changes with the next call.
     */
    Histogram latency() {
      interval = recorder.getIntervalHistogram(interval);
      latency.add(interval);
      return latency;
    }
  }

  final long startNanos;
  final long measureStartNanos;
  final long stopNanos;
  private final long maxMeasured;
  final Phase warmup = new Phase();
  final Phase measured = new Phase();
  private final AtomicLong measuredClaimed = new AtomicLong();
  private final AtomicLong lastMeasuredAnswer = new AtomicLong();
  private final Map<Integer, LongAdder> statuses = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> transportErrors = new ConcurrentHashMap<>();
  private final Map<String, String> errorSamples = new ConcurrentHashMap<>();
  private final AtomicLongArray acceptedSeries;
  private final AtomicLongArray unconfirmedSeries;
  private final CountDownLatch connectionsLeft;
  private volatile boolean stopRequested;

  RunStats(Options options, int tenants, long startNanos) {
    this.startNanos = startNanos;
    this.measureStartNanos = startNanos + options.warmup().toNanos();
    this.stopNanos = measureStartNanos + options.duration().toNanos();
    this.maxMeasured = options.requests() == 0 ? Long.MAX_VALUE : options.requests();
    this.acceptedSeries = new AtomicLongArray(tenants);
    this.unconfirmedSeries = new AtomicLongArray(tenants);
    this.connectionsLeft = new CountDownLatch(options.connections());
  }

  /** Whether no new request may be sent at {@code now}. */
  boolean stopping(long now) {
    return stopRequested || now - stopNanos >= 0;
  }

  /** Stops sending new requests; those in flight still complete. */
  void requestStop() {
    stopRequested = true;
  }

  /** Takes one of the measured requests {@code --requests} allows; false when none is left. */
  boolean claimMeasured() {
    if (measuredClaimed.incrementAndGet() <= maxMeasured) {
      return true;
    }
    stopRequested = true;
    return false;
  }

  boolean isMeasured(long sentNanos) {
    return sentNanos - measureStartNanos >= 0;
  }

  /** An HTTP answer; 2xx means the relay delivered every tenant's series. */
  void answered(RequestPool.Body body, boolean measuredRequest, int status, long latencyNanos) {
    statuses.computeIfAbsent(status, s -> new LongAdder()).increment();
    Phase phase = measuredRequest ? measured : warmup;
    phase.recorder.recordValue(Math.max(0, latencyNanos));
    boolean ok = status / 100 == 2;
    if (ok) {
      phase.accepted.increment();
      phase.series.add(body.series());
      phase.compressedBytes.add(body.compressedBytes());
      phase.uncompressedBytes.add(body.uncompressedBytes());
    } else {
      phase.failed.increment();
    }
    addSeries(ok ? acceptedSeries : unconfirmedSeries, body);
    if (measuredRequest) {
      lastMeasuredAnswer.accumulateAndGet(System.nanoTime(), Math::max);
    }
  }

  /** Keeps the first body of an error answer per status, for the summary. */
  void errorSample(int status, String text) {
    errorSamples.putIfAbsent(Integer.toString(status), text);
  }

  /** A request that got no HTTP answer (connect or write failure, closed connection, timeout). */
  void transportError(RequestPool.Body body, boolean measuredRequest, String kind, String detail) {
    transportErrors.computeIfAbsent(kind, k -> new LongAdder()).increment();
    errorSamples.putIfAbsent(kind, detail);
    (measuredRequest ? measured : warmup).failed.increment();
    addSeries(unconfirmedSeries, body);
    if (measuredRequest) {
      lastMeasuredAnswer.accumulateAndGet(System.nanoTime(), Math::max);
    }
  }

  private static void addSeries(AtomicLongArray counts, RequestPool.Body body) {
    int[] tenants = body.tenantIndexes();
    int[] series = body.tenantSeries();
    for (int i = 0; i < tenants.length; i++) {
      counts.addAndGet(tenants[i], series[i]);
    }
  }

  void connectionFinished() {
    connectionsLeft.countDown();
  }

  /** Waits up to {@code nanos} for every connection to finish; true when they have. */
  boolean awaitConnections(long nanos) throws InterruptedException {
    return connectionsLeft.await(nanos, TimeUnit.NANOSECONDS);
  }

  /** Accepted and failed requests so far, both phases. */
  long acceptedRequests() {
    return warmup.accepted.sum() + measured.accepted.sum();
  }

  long acceptedSeriesTotal() {
    return warmup.series.sum() + measured.series.sum();
  }

  long failedRequests() {
    return warmup.failed.sum() + measured.failed.sum();
  }

  /** When the last measured request was answered or failed; 0 when none was. */
  long lastMeasuredAnswerNanos() {
    return lastMeasuredAnswer.get();
  }

  Map<Integer, Long> statuses() {
    Map<Integer, Long> m = new TreeMap<>();
    statuses.forEach((k, v) -> m.put(k, v.sum()));
    return m;
  }

  Map<String, Long> transportErrors() {
    Map<String, Long> m = new TreeMap<>();
    transportErrors.forEach((k, v) -> m.put(k, v.sum()));
    return m;
  }

  Map<String, String> errorSamples() {
    return new TreeMap<>(errorSamples);
  }

  long acceptedSeries(int tenant) {
    return acceptedSeries.get(tenant);
  }

  long unconfirmedSeries(int tenant) {
    return unconfirmedSeries.get(tenant);
  }
}
