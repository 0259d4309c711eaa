package io.prwrelay.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantProblem;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.DeliveryObserver;
import io.prwrelay.server.downstream.TenantSend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The relay's metrics, all named {@code relay_*}, served by {@code GET /metrics} in the Prometheus
 * text format.
 *
 * <p>Per-tenant series carry a {@code tenant} label bounded by {@code relay.metrics.max-tenants}:
 * once per ranking interval (a minute by default) the tenants are ranked by the series routed to
 * them during the last interval, and only the top that many keep their own series; a tenant that
 * falls out of the top loses its series. Until the first ranking, the first tenants seen are
 * admitted. Every other tenant is counted under {@code tenant="other"}, so a tenant cardinality
 * explosion cannot become a metrics cardinality explosion.
 */
public final class RelayMetrics implements DeliveryObserver {
  /** Distinct tenants tracked per ranking interval, as a multiple of {@code max-tenants}. */
  private static final int WINDOW_LIMIT = 10;

  /** Tag value for tenants beyond {@code relay.metrics.max-tenants}. */
  public static final String OTHER_TENANT = "other";

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

  /** How often the admitted tenants are re-ranked by volume. */
  public static final Duration DEFAULT_RERANK_INTERVAL = Duration.ofMinutes(1);

  private final int maxTenants;
  private final long rerankNanos;
  private final Map<String, TenantMeters> tenants = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> window = new ConcurrentHashMap<>();
  private final AtomicLong nextRerank;
  private volatile Set<String> admitted = ConcurrentHashMap.newKeySet();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final Timer downstreamLatency;
  private final Counter receivedBytes;

  public RelayMetrics(int maxTenants, ByteBufAllocator allocator) {
    this(maxTenants, allocator, DEFAULT_RERANK_INTERVAL);
  }

  RelayMetrics(int maxTenants, ByteBufAllocator allocator, Duration rerankInterval) {
    this.maxTenants = maxTenants;
    this.rerankNanos = rerankInterval.toNanos();
    this.nextRerank = new AtomicLong(System.nanoTime() + rerankNanos);
    Gauge.builder("relay.inflight.requests", inFlight, AtomicInteger::get)
        .description("sender requests being received, routed or delivered")
        .register(registry);
    if (allocator instanceof ByteBufAllocatorMetricProvider) {
      ByteBufAllocatorMetric m = ((ByteBufAllocatorMetricProvider) allocator).metric();
      Gauge.builder("relay.pooled.memory", m, ByteBufAllocatorMetric::usedDirectMemory)
          .tag("kind", "direct")
          .baseUnit("bytes")
          .description("memory held by the buffer allocator")
          .register(registry);
      Gauge.builder("relay.pooled.memory", m, ByteBufAllocatorMetric::usedHeapMemory)
          .tag("kind", "heap")
          .baseUnit("bytes")
          .description("memory held by the buffer allocator")
          .register(registry);
    }
    downstreamLatency =
        Timer.builder("relay.downstream.duration")
            .description("time of one downstream attempt")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofMillis(1))
            .maximumExpectedValue(Duration.ofSeconds(30))
            .register(registry);
    receivedBytes =
        Counter.builder("relay.received.bytes")
            .description("compressed request bytes received")
            .register(registry);
  }

  /** Registry for tests and for serving. */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** The Prometheus text exposition of every metric. */
  public String scrape() {
    return registry.scrape();
  }

  /** Sender write requests started and not yet answered. */
  public int inFlight() {
    return inFlight.get();
  }

  public void requestStarted() {
    inFlight.incrementAndGet();
  }

  /** A sender request was answered with {@code status} after {@code nanos} since its first byte. */
  public void requestFinished(int status, long nanos) {
    inFlight.decrementAndGet();
    registry.counter("relay.requests", "status", Integer.toString(status)).increment();
    Timer.builder("relay.request.duration")
        .description("time from a request's headers to its answer")
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofSeconds(60))
        .register(registry)
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /** Answer to a non-write endpoint (no in-flight accounting). */
  public void otherRequest(String endpoint, int status) {
    registry
        .counter("relay.http.requests", "endpoint", endpoint, "status", Integer.toString(status))
        .increment();
  }

  public void received(int compressedBytes) {
    receivedBytes.increment(compressedBytes);
  }

  /** Counts what routing found: series without a valid tenant, by reason and fate. */
  public void routed(RouteResult result) {
    for (TenantProblem p : TenantProblem.values()) {
      int dropped = result.dropped(p);
      if (dropped > 0) {
        registry.counter("relay.series.dropped", "reason", p.tag()).increment(dropped);
      }
      int defaulted = result.defaulted(p);
      if (defaulted > 0) {
        registry.counter("relay.series.defaulted", "reason", p.tag()).increment(defaulted);
      }
    }
  }

  /** Series of a request that was rejected as a whole (400), by reason. */
  public void rejectedSeries(String reason, int series) {
    registry.counter("relay.series.rejected", "reason", reason).increment(series);
  }

  /** A tenant batch was formed and is about to be sent. */
  public void tenantIn(TenantSend send) {
    maybeRerank();
    if (window.size() < WINDOW_LIMIT * Math.max(1, maxTenants)
        || window.containsKey(send.tenant())) {
      window.computeIfAbsent(send.tenant(), t -> new LongAdder()).add(send.counts().series());
    }
    TenantMeters m = meters(send.tenant());
    m.seriesIn.increment(send.counts().series());
    m.samplesIn.increment(send.counts().samples());
    m.bytesIn.increment(send.uncompressedBytes());
  }

  @Override
  public void attempt(TenantSend send, AttemptOutcome outcome, long nanos) {
    registry.counter("relay.downstream.responses", "code", outcome.code()).increment();
    downstreamLatency.record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void retry(TenantSend send, AttemptOutcome outcome, long delayNanos) {
    registry.counter("relay.downstream.retries", "code", outcome.code()).increment();
  }

  @Override
  public void finished(TenantSend send) {
    TenantMeters m = meters(send.tenant());
    if (send.last() != null && send.last().success()) {
      m.seriesOut.increment(send.counts().series());
      m.samplesOut.increment(send.counts().samples());
      m.bytesOut.increment(send.uncompressedBytes());
    } else {
      m.seriesFailed.increment(send.counts().series());
    }
  }

  private TenantMeters meters(String tenant) {
    Set<String> a = admitted;
    if (!a.contains(tenant)) {
      synchronized (this) {
        a = admitted;
        if (!a.contains(tenant)) {
          if (a.size() >= maxTenants) {
            return tenants.computeIfAbsent(OTHER_TENANT, t -> new TenantMeters(registry, t));
          }
          a.add(tenant);
        }
      }
    }
    return tenants.computeIfAbsent(tenant, t -> new TenantMeters(registry, t));
  }

  /** Re-ranks the admitted tenants by the volume of the last interval, once per interval. */
  private void maybeRerank() {
    long now = System.nanoTime();
    long due = nextRerank.get();
    if (now - due < 0 || !nextRerank.compareAndSet(due, now + rerankNanos)) {
      return;
    }
    synchronized (this) {
      List<Map.Entry<String, LongAdder>> ranked = new ArrayList<>(window.entrySet());
      ranked.sort((x, y) -> Long.compare(y.getValue().sum(), x.getValue().sum()));
      Set<String> next = ConcurrentHashMap.newKeySet();
      for (int i = 0; i < ranked.size() && next.size() < maxTenants; i++) {
        next.add(ranked.get(i).getKey());
      }
      for (String old : admitted) {
        if (!next.contains(old)) {
          TenantMeters m = tenants.remove(old);
          if (m != null) {
            m.remove(registry);
          }
        }
      }
      admitted = next;
      window.clear();
    }
  }

  /** Counters of one tenant label value. */
  private static final class TenantMeters {
    final Counter seriesIn;
    final Counter samplesIn;
    final Counter bytesIn;
    final Counter seriesOut;
    final Counter samplesOut;
    final Counter bytesOut;
    final Counter seriesFailed;

    TenantMeters(PrometheusMeterRegistry r, String tenant) {
      seriesIn = counter(r, "relay.tenant.series.in", tenant, "series routed to the tenant");
      samplesIn = counter(r, "relay.tenant.samples.in", tenant, "samples routed to the tenant");
      bytesIn = counter(r, "relay.tenant.bytes.in", tenant, "uncompressed batch bytes routed");
      seriesOut = counter(r, "relay.tenant.series.out", tenant, "series accepted downstream");
      samplesOut = counter(r, "relay.tenant.samples.out", tenant, "samples accepted downstream");
      bytesOut =
          counter(r, "relay.tenant.bytes.out", tenant, "uncompressed bytes accepted downstream");
      seriesFailed =
          counter(r, "relay.tenant.series.failed", tenant, "series whose batch was not accepted");
    }

    void remove(PrometheusMeterRegistry r) {
      for (Counter c :
          List.of(seriesIn, samplesIn, bytesIn, seriesOut, samplesOut, bytesOut, seriesFailed)) {
        r.remove(c);
      }
    }

    private static Counter counter(
        PrometheusMeterRegistry r, String name, String tenant, String description) {
      return Counter.builder(name).tag("tenant", tenant).description(description).register(r);
    }
  }
}
