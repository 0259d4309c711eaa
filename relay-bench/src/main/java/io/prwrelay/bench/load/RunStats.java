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
 * progress printer and the summary. An attempt belongs to the warm-up or to the measured phase by
 * the time it was sent, and to the requests with or without the bad tenant by its body. Answers and
 * transport errors are counted over the whole run, warm-up included, because every request must be
 * accounted for in the per-tenant check.
 *
 * <p>Per tenant, a request's series count as <em>sent</em> (they must arrive exactly once) when it
 * was finally accepted (2xx), and, for a request carrying the bad tenant that the relay answered
 * 429 or 5xx, for every tenant but the bad one: their downstream never fails, so the relay must
 * have delivered them, once, whatever the retries. Every other series of a request that was not
 * accepted counts as <em>unconfirmed</em> (the relay may have delivered it).
 */
final class RunStats {
  /** Latencies in nanoseconds, recorded by any thread, to 3 significant digits. */
  static final class Latency {
    private final Recorder recorder = new Recorder(3);
    private final Histogram all = new Histogram(3);
    private Histogram interval;

    void record(long nanos) {
      recorder.recordValue(Math.max(0, nanos));
    }

    /**
     * Every latency recorded so far. Call from one thread only (the progress printer, then the
     * summary); the result changes with the next call.
     */
    Histogram histogram() {
      interval = recorder.getIntervalHistogram(interval);
      all.add(interval);
      return all;
    }
  }

  /** Counters of one phase; throughput counts accepted (2xx) attempts only. */
  static final class Phase {
    final LongAdder accepted = new LongAdder();
    final LongAdder series = new LongAdder();
    final LongAdder compressedBytes = new LongAdder();
    final LongAdder uncompressedBytes = new LongAdder();
    final LongAdder failed = new LongAdder();

    /** Attempts of requests without the bad tenant (all attempts when there is none). */
    final Latency plain = new Latency();

    /** Attempts of requests that carry the bad tenant. */
    final Latency bad = new Latency();
  }

  final long startNanos;
  final long measureStartNanos;
  final long stopNanos;
  private final long maxMeasured;
  private final int badTenant;
  final Phase warmup = new Phase();
  final Phase measured = new Phase();
  private final AtomicLong measuredClaimed = new AtomicLong();
  private final AtomicLong lastMeasuredAnswer = new AtomicLong();
  private final Map<Integer, LongAdder> statusesPlain = new ConcurrentHashMap<>();
  private final Map<Integer, LongAdder> statusesBad = new ConcurrentHashMap<>();
  private final Map<Integer, LongAdder> retried = new ConcurrentHashMap<>();
  private final LongAdder givenUp = new LongAdder();
  private final LongAdder abandoned = new LongAdder();
  private final Map<String, LongAdder> transportErrors = new ConcurrentHashMap<>();
  private final Map<String, String> errorSamples = new ConcurrentHashMap<>();
  private final AtomicLongArray sentSeries;
  private final AtomicLongArray unconfirmedSeries;
  private final CountDownLatch connectionsLeft;
  private volatile boolean stopRequested;

  /**
   * @param tenants tenants in the pool, the bad one included
   * @param badTenant index of the bad tenant, or -1
   */
  RunStats(Options options, int tenants, int badTenant, long startNanos) {
    this.startNanos = startNanos;
    this.measureStartNanos = startNanos + options.warmup().toNanos();
    this.stopNanos = measureStartNanos + options.duration().toNanos();
    this.maxMeasured = options.requests() == 0 ? Long.MAX_VALUE : options.requests();
    this.badTenant = badTenant;
    this.sentSeries = new AtomicLongArray(tenants);
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

  /**
   * An HTTP answer to one attempt of {@code write}; a 2xx means the relay delivered (or queued)
   * every tenant's series and ends the request.
   */
  void answered(Write write, boolean measuredAttempt, int status, long latencyNanos) {
    RequestPool.Body body = write.body;
    (body.carriesBad() ? statusesBad : statusesPlain)
        .computeIfAbsent(status, s -> new LongAdder())
        .increment();
    Phase phase = measuredAttempt ? measured : warmup;
    (body.carriesBad() ? phase.bad : phase.plain).record(latencyNanos);
    if (status / 100 == 2) {
      phase.accepted.increment();
      phase.series.add(body.series());
      phase.compressedBytes.add(body.compressedBytes());
      phase.uncompressedBytes.add(body.uncompressedBytes());
      addSeries(sentSeries, body, -1);
    } else {
      phase.failed.increment();
      if (status == 429 || status / 100 == 5) {
        write.answeredRetriable = true;
      }
    }
    if (measuredAttempt) {
      lastMeasuredAnswer.accumulateAndGet(System.nanoTime(), Math::max);
    }
  }

  /** {@code write} will be sent again after an answer with {@code status}. */
  void retrying(int status) {
    retried.computeIfAbsent(status, s -> new LongAdder()).increment();
  }

  /** {@code write} was not accepted and will not be sent again: its retries ran out or none fit. */
  void gaveUp(Write write) {
    givenUp.increment();
    unaccepted(write);
  }

  /** {@code write} was waiting for a retry when the run ended. */
  void abandoned(Write write) {
    abandoned.increment();
    unaccepted(write);
  }

  private void unaccepted(Write write) {
    if (write.answeredRetriable && write.body.carriesBad()) {
      addSeries(sentSeries, write.body, badTenant);
      addSeries(unconfirmedSeries, write.body, -2);
    } else {
      addSeries(unconfirmedSeries, write.body, -1);
    }
  }

  /** Keeps the first body of an error answer per status, for the summary. */
  void errorSample(int status, String text) {
    errorSamples.putIfAbsent(Integer.toString(status), text);
  }

  /**
   * An attempt that got no HTTP answer (connect or write failure, closed connection, timeout); the
   * request is not sent again.
   */
  void transportError(Write write, boolean measuredAttempt, String kind, String detail) {
    transportErrors.computeIfAbsent(kind, k -> new LongAdder()).increment();
    errorSamples.putIfAbsent(kind, detail);
    (measuredAttempt ? measured : warmup).failed.increment();
    unaccepted(write);
    if (measuredAttempt) {
      lastMeasuredAnswer.accumulateAndGet(System.nanoTime(), Math::max);
    }
  }

  /**
   * Adds the body's series per tenant: all of them ({@code which == -1}), all but tenant {@code
   * which}, or only the bad tenant's ({@code which == -2}).
   */
  private void addSeries(AtomicLongArray counts, RequestPool.Body body, int which) {
    int[] tenants = body.tenantIndexes();
    int[] series = body.tenantSeries();
    for (int i = 0; i < tenants.length; i++) {
      boolean add = which == -1 || (which == -2 ? tenants[i] == badTenant : tenants[i] != which);
      if (add) {
        counts.addAndGet(tenants[i], series[i]);
      }
    }
  }

  void connectionFinished() {
    connectionsLeft.countDown();
  }

  /** Waits up to {@code nanos} for every connection to finish; true when they have. */
  boolean awaitConnections(long nanos) throws InterruptedException {
    return connectionsLeft.await(nanos, TimeUnit.NANOSECONDS);
  }

  /** Accepted attempts so far, both phases. */
  long acceptedRequests() {
    return warmup.accepted.sum() + measured.accepted.sum();
  }

  long acceptedSeriesTotal() {
    return warmup.series.sum() + measured.series.sum();
  }

  /** Attempts answered non-2xx or not answered so far, both phases. */
  long failedRequests() {
    return warmup.failed.sum() + measured.failed.sum();
  }

  /** When the last measured request was answered or failed; 0 when none was. */
  long lastMeasuredAnswerNanos() {
    return lastMeasuredAnswer.get();
  }

  /** Answers by HTTP status to requests without the bad tenant (all requests without one). */
  Map<Integer, Long> statusesPlain() {
    return sums(statusesPlain);
  }

  /** Answers by HTTP status to requests that carry the bad tenant. */
  Map<Integer, Long> statusesBad() {
    return sums(statusesBad);
  }

  /** Retries scheduled, by the status that made them necessary. */
  Map<Integer, Long> retried() {
    return sums(retried);
  }

  long givenUp() {
    return givenUp.sum();
  }

  long abandoned() {
    return abandoned.sum();
  }

  Map<String, Long> transportErrors() {
    return sums(transportErrors);
  }

  Map<String, String> errorSamples() {
    return new TreeMap<>(errorSamples);
  }

  long sentSeries(int tenant) {
    return sentSeries.get(tenant);
  }

  long unconfirmedSeries(int tenant) {
    return unconfirmedSeries.get(tenant);
  }

  private static <K> Map<K, Long> sums(Map<K, LongAdder> adders) {
    Map<K, Long> m = new TreeMap<>();
    adders.forEach((k, v) -> m.put(k, v.sum()));
    return m;
  }
}
