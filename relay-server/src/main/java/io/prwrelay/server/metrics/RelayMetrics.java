package io.prwrelay.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantProblem;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.downstream.Protocol;
import io.prwrelay.server.lane.Fragment;
import io.prwrelay.server.lane.FragmentOutcome;
import io.prwrelay.server.lane.Lane;
import io.prwrelay.server.lane.LaneObserver;
import io.prwrelay.server.queue.DropReason;
import io.prwrelay.server.queue.FileTenantQueue;
import io.prwrelay.server.queue.QueueListener;
import io.prwrelay.server.queue.QueueStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.ToDoubleFunction;

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
public final class RelayMetrics implements LaneObserver, QueueListener {
  /** Distinct tenants tracked per ranking interval, as a multiple of {@code max-tenants}. */
  private static final int WINDOW_LIMIT = 10;

  private static final String SERIES_DROPPED_HELP =
      "series without a valid tenant dropped (relay.tenant.missing=drop), by reason";
  private static final String SERIES_DEFAULTED_HELP =
      "series without a valid tenant sent to the default tenant, by reason";
  private static final String TLS_FAILURES_HELP =
      "TLS ingress connections that failed: handshake or plaintext";
  private static final String RESPONSES_HELP =
      "downstream attempts by status (error for no response)";

  /** Tag value for tenants beyond {@code relay.metrics.max-tenants}. */
  public static final String OTHER_TENANT = "other";

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

  /** How often the admitted tenants are re-ranked by volume. */
  public static final Duration DEFAULT_RERANK_INTERVAL = Duration.ofMinutes(1);

  private final int maxTenants;
  private final long rerankNanos;
  private final Map<String, TenantMeters> tenants = new ConcurrentHashMap<>();

  /**
   * {@code relay.downstream.responses} by status (0 for transport failures), looked up once per
   * status: no label string or lookup per response.
   */
  private final AtomicReferenceArray<Counter> responses = new AtomicReferenceArray<>(1000);

  /**
   * {@code relay.requests} by the status answered, looked up once per status: a builder, a tag
   * string and a registry lookup per answer showed in the allocation profile.
   */
  private final AtomicReferenceArray<Counter> answered = new AtomicReferenceArray<>(1000);

  private final Timer requestDuration;

  private final Map<String, LongAdder> window = new ConcurrentHashMap<>();
  private final AtomicLong nextRerank;
  private volatile Set<String> admitted = ConcurrentHashMap.newKeySet();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger lanes = new AtomicInteger();
  private final Map<String, Lane.State> laneStates = new ConcurrentHashMap<>();
  private final Counter ledgerSkipped;
  private final Counter tailCutBytes;
  private volatile QueueStore store;
  private volatile ToDoubleFunction<String> activeSeries;
  private final Timer downstreamLatency;
  private final Counter receivedBytes;
  private final Counter forwardedWhole;
  private final TenantLabelWatch tenantLabels = new TenantLabelWatch();

  public RelayMetrics(int maxTenants, ByteBufAllocator allocator) {
    this(maxTenants, allocator, DEFAULT_RERANK_INTERVAL);
  }

  RelayMetrics(int maxTenants, ByteBufAllocator allocator, Duration rerankInterval) {
    registry.config().meterFilter(RuntimeMetrics.PROMETHEUS_NAMES);
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
    requestDuration =
        Timer.builder("relay.request.duration")
            .description("time from a request's headers to its answer")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofMillis(1))
            .maximumExpectedValue(Duration.ofSeconds(60))
            .register(registry);
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
    forwardedWhole =
        Counter.builder("relay.requests.forwarded.whole")
            .description(
                "write requests whose compressed body went downstream as received: one tenant,"
                    + " nothing to change")
            .register(registry);
    ledgerSkipped =
        Counter.builder("relay.ledger.skipped.series")
            .description(
                "series not sent again: an earlier attempt of the same request delivered them")
            .register(registry);
    tailCutBytes =
        Counter.builder("relay.queue.tail.cut.bytes")
            .baseUnit("bytes")
            .description("bytes of damaged or torn queue files cut at startup or while reading")
            .register(registry);
    Gauge.builder("relay.lanes", lanes, AtomicInteger::get)
        .description("tenant lanes in memory")
        .register(registry);
    for (Lane.State state : List.of(Lane.State.BACKING_OFF, Lane.State.THROTTLED)) {
      Gauge.builder("relay.lanes.not.healthy", this, m -> m.lanesIn(state))
          .tag("state", state.name().toLowerCase(Locale.ROOT))
          .description(
              "tenant lanes backing off (5xx, timeout) or throttled (429) until a send succeeds")
          .register(registry);
    }
  }

  /**
   * Registers {@code relay_downstream_protocol{protocol}} (1 for the Remote Write version PRW 2.0
   * input is sent in now, 0 for the other) and {@code relay_downstream_protocol_fallbacks_total}
   * (PRW 2.0 requests answered 415 and re-sent as 1.0 in auto mode).
   */
  public void downstreamProtocol(DownstreamProtocol protocol) {
    for (Protocol p : Protocol.values()) {
      Gauge.builder("relay.downstream.protocol", protocol, d -> d.forV2Input() == p ? 1 : 0)
          .tag("protocol", p.name().toLowerCase(Locale.ROOT))
          .description("Remote Write version PRW 2.0 input is sent downstream in (1 = in use)")
          .register(registry);
    }
    FunctionCounter.builder(
            "relay.downstream.protocol.fallbacks", protocol, DownstreamProtocol::fallbacks)
        .description("PRW 2.0 requests the downstream answered 415, re-sent as PRW 1.0 (auto)")
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
    int slot = status >= 0 && status < 1000 ? status : 0;
    Counter c = answered.get(slot);
    if (c == null) {
      c =
          counter(
              "relay.requests",
              "write requests answered, by status",
              "status",
              Integer.toString(status));
      answered.set(slot, c);
    }
    c.increment();
    requestDuration.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** Answer to a non-write endpoint (no in-flight accounting). */
  public void otherRequest(String endpoint, int status) {
    counter(
            "relay.http.requests",
            "requests to the other endpoints, by endpoint and status",
            "endpoint",
            endpoint,
            "status",
            Integer.toString(status))
        .increment();
  }

  public void received(int compressedBytes) {
    receivedBytes.increment(compressedBytes);
  }

  /**
   * A request was its own tenant batch and its compressed body was handed to the lane as received
   * (no re-encode, no re-compress).
   */
  public void forwardedWhole() {
    forwardedWhole.increment();
  }

  /**
   * What {@link #routed} counted of series without any tenant label, for the warning when most
   * series carry none.
   */
  public TenantLabelWatch tenantLabels() {
    return tenantLabels;
  }

  /** Counts what routing found: series without a valid tenant, by reason and fate. */
  public void routed(RouteResult result) {
    tenantLabels.routed(
        result.seriesIn(),
        result.defaulted(TenantProblem.MISSING) + result.dropped(TenantProblem.MISSING));
    for (TenantProblem p : TenantProblem.values()) {
      int dropped = result.dropped(p);
      if (dropped > 0) {
        counter("relay.series.dropped", SERIES_DROPPED_HELP, "reason", p.tag()).increment(dropped);
      }
      int defaulted = result.defaulted(p);
      if (defaulted > 0) {
        counter("relay.series.defaulted", SERIES_DEFAULTED_HELP, "reason", p.tag())
            .increment(defaulted);
      }
    }
    if (result.metadataDropped() > 0) {
      counter(
              "relay.metadata.dropped",
              "metadata fields not broadcast because of relay.metadata.max-broadcast-bytes")
          .increment(result.metadataDropped());
    }
  }

  /**
   * A request failed inside the relay: {@code exception} or {@code memory} while processing a write
   * request, {@code connection} for an error that ended a connection.
   */
  public void internalError(String kind) {
    counter("relay.internal.errors", "requests that failed inside the relay, by kind", "kind", kind)
        .increment();
  }

  /**
   * Registers the request memory budget: {@code relay_inflight_body_bytes} (admitted now) and
   * {@code relay_inflight_body_bytes_limit}.
   */
  public void inflightBudget(LongSupplier inUse, long limit) {
    Gauge.builder("relay.inflight.body", inUse, s -> s.getAsLong())
        .strongReference(true)
        .baseUnit("bytes")
        .description(
            "declared request body bytes admitted by the memory budget and not yet answered")
        .register(registry);
    Gauge.builder("relay.inflight.body.limit", () -> limit)
        .baseUnit("bytes")
        .description("relay.server.max-inflight-bytes in effect")
        .register(registry);
  }

  /** A write request was refused by the memory budget ({@code total} or {@code client}). */
  public void inflightRejected(String reason) {
    counter(
            "relay.inflight.rejected",
            "write requests refused 503 by the memory budget: total or client",
            "reason",
            reason)
        .increment();
  }

  /** Registers {@code relay_connections} (open ingress connections) and its limit. */
  public void connections(IntSupplier open, int limit) {
    Gauge.builder("relay.connections", open, s -> s.getAsInt())
        .strongReference(true)
        .description("open ingress connections")
        .register(registry);
    Gauge.builder("relay.connections.limit", () -> limit)
        .description("relay.server.max-connections in effect")
        .register(registry);
  }

  /**
   * A connection beyond {@code relay.server.max-connections}: {@code answered} 503, or {@code
   * closed} at once.
   */
  public void connectionRejected(String how) {
    counter(
            "relay.connections.rejected",
            "connections beyond relay.server.max-connections: answered 503 or closed",
            "action",
            how)
        .increment();
  }

  /** A request refused by inbound auth: 401 (credentials) or 403 (a tenant not allowed). */
  public void authRejected(int status) {
    counter(
            "relay.auth.rejected",
            "requests refused by inbound auth: 401 (credentials) or 403 (tenant not allowed)",
            "status",
            Integer.toString(status))
        .increment();
  }

  /** A watched file ({@code tls}, {@code bearer-token-file}) changed and was re-read or not. */
  public void reloaded(String file, boolean success) {
    counter(
            "relay.reloads",
            "changed files re-read, by file and result",
            "file",
            file,
            "result",
            success ? "success" : "failure")
        .increment();
  }

  /** A TLS handshake on the ingress failed. */
  public void tlsHandshakeFailed() {
    counter("relay.tls.handshake.failures", TLS_FAILURES_HELP, "reason", "handshake").increment();
  }

  /** A connection to the TLS ingress spoke plain text. */
  public void tlsPlaintextRejected() {
    counter("relay.tls.handshake.failures", TLS_FAILURES_HELP, "reason", "plaintext").increment();
  }

  /** Series of a request that was rejected as a whole (400), by reason. */
  public void rejectedSeries(String reason, int series) {
    if (reason.equals("no_tenant")) {
      // relay.tenant.missing=reject: the request's series count as carrying no tenant label.
      tenantLabels.routed(series, series);
    }
    counter(
            "relay.series.rejected",
            "series in requests answered 400 or 403 as a whole, by reason",
            "reason",
            reason)
        .increment(series);
  }

  /** A tenant batch of {@code bytes} uncompressed bytes was formed and goes to its lane. */
  public void tenantIn(String tenant, SeriesCounts counts, int bytes) {
    maybeRerank();
    LongAdder volume = window.get(tenant);
    if (volume == null && window.size() < WINDOW_LIMIT * Math.max(1, maxTenants)) {
      volume = window.computeIfAbsent(tenant, t -> new LongAdder());
    }
    if (volume != null) {
      volume.add(counts.series());
    }
    TenantMeters m = meters(tenant);
    m.seriesIn.increment(counts.series());
    m.samplesIn.increment(counts.samples());
    m.bytesIn.increment(bytes);
  }

  /**
   * A throttled tenant's batch was dropped: its request was answered 400 after too many 429s
   * ({@code relay.delivery.throttled.policy=drop}).
   */
  public void throttledDropped(String tenant, int series) {
    meters(tenant).dropped("throttled").increment(series);
  }

  /** A tenant batch was not sent: an earlier attempt of the same request delivered it. */
  public void ledgerSkipped(String tenant, SeriesCounts counts) {
    ledgerSkipped.increment(counts.series());
  }

  /**
   * The tenant insight's active series estimate per tenant, reported as {@code
   * relay_tenant_active_series_estimate} for every tenant with meters of its own (NaN for one the
   * insight does not track). Set before the first request: tenants admitted earlier lack it.
   */
  public void activeSeries(ToDoubleFunction<String> estimate) {
    this.activeSeries = estimate;
  }

  /** The on-disk queues of queue mode, whose sizes the {@code relay_queue_*} gauges report. */
  public void queues(QueueStore store) {
    this.store = store;
    Gauge.builder("relay.queue.bytes", store, QueueStore::bytes)
        .baseUnit("bytes")
        .description("bytes in the on-disk queues of all tenants")
        .register(registry);
    Gauge.builder("relay.queue.disk", store, QueueStore::diskBytes)
        .baseUnit("bytes")
        .description(
            "bytes of the queue segment files on disk, delivered parts of segments not yet"
                + " removed included")
        .register(registry);
    Gauge.builder("relay.queue.records", store, QueueStore::records)
        .description("tenant batches in the on-disk queues")
        .register(registry);
    Gauge.builder(
            "relay.queue.oldest.age",
            store,
            q -> ageSeconds(q.oldestAppendMillis().orElse(Long.MIN_VALUE)))
        .baseUnit("seconds")
        .description("age of the oldest queued batch of any tenant (0 when empty)")
        .register(registry);
  }

  private static double ageSeconds(long appendMillis) {
    return appendMillis == Long.MIN_VALUE
        ? 0
        : Math.max(0, System.currentTimeMillis() - appendMillis) / 1000.0;
  }

  @Override
  public void attempt(String tenant, int fragments, AttemptOutcome outcome, long nanos) {
    responses(outcome).increment();
    downstreamLatency.record(nanos, TimeUnit.NANOSECONDS);
    TenantMeters m = meters(tenant);
    m.downstreamRequests.increment();
    if (fragments > 1) {
      m.coalesced.increment(fragments - 1);
    }
  }

  @Override
  public void splitSend(String tenant, int fragments) {
    meters(tenant).splitSends.increment();
  }

  @Override
  public void finished(Fragment fragment, FragmentOutcome outcome) {
    TenantMeters m = meters(fragment.tenant());
    SeriesCounts c = fragment.counts();
    switch (outcome.kind()) {
      case DELIVERED:
        m.batchesDirect.increment();
        m.seriesOut.increment(c.series());
        m.samplesOut.increment(c.samples());
        m.bytesOut.increment(fragment.size());
        break;
      case QUEUED:
        m.seriesQueued.increment(c.series());
        break;
      default:
        m.failed(outcome.kind()).increment(c.series());
    }
  }

  @Override
  public void throttledQueued(String tenant, long series, AttemptOutcome outcome) {
    meters(tenant).failed(FragmentOutcome.Kind.THROTTLED).increment(series);
  }

  @Override
  public void drained(String tenant, long records, long series, AttemptOutcome outcome) {
    TenantMeters m = meters(tenant);
    if (outcome.success()) {
      m.batchesFromQueue.increment(records);
      m.seriesOut.increment(series);
    } else {
      m.dropped("rejected").increment(series);
    }
  }

  @Override
  public void dropped(String tenant, DropReason reason, long records, long series, long bytes) {
    meters(tenant).dropped(reason.label()).increment(series);
  }

  @Override
  public void tailCut(String tenant, Path segment, long bytes) {
    tailCutBytes.increment(bytes);
  }

  @Override
  public void stateChanged(String tenant, Lane.State state, String reason, long delayNanos) {
    if (state == Lane.State.HEALTHY) {
      laneStates.remove(tenant);
    } else {
      laneStates.put(tenant, state);
      meters(tenant).backoffs(state).increment();
    }
  }

  @Override
  public void laneCreated(String tenant) {
    lanes.incrementAndGet();
  }

  @Override
  public void laneForgotten(String tenant) {
    lanes.decrementAndGet();
    laneStates.remove(tenant);
  }

  private long lanesIn(Lane.State state) {
    long n = 0;
    for (Lane.State s : laneStates.values()) {
      if (s == state) {
        n++;
      }
    }
    return n;
  }

  private Counter responses(AttemptOutcome outcome) {
    int status = outcome.status();
    if (status < 0 || status >= responses.length()) {
      return counter("relay.downstream.responses", RESPONSES_HELP, "code", outcome.code());
    }
    Counter c = responses.get(status);
    if (c == null) {
      // The registry hands out one counter per code, so two threads racing here share it.
      c = counter("relay.downstream.responses", RESPONSES_HELP, "code", outcome.code());
      responses.set(status, c);
    }
    return c;
  }

  /** The counter {@code name} with {@code tags} (name, value, ...), registered on first use. */
  private Counter counter(String name, String description, String... tags) {
    return Counter.builder(name).description(description).tags(tags).register(registry);
  }

  private TenantMeters meters(String tenant) {
    // Only admitted tenants have meters of their own (a re-rank removes those it drops).
    TenantMeters own = tenants.get(tenant);
    if (own != null) {
      return own;
    }
    Set<String> a = admitted;
    if (!a.contains(tenant)) {
      synchronized (this) {
        a = admitted;
        if (!a.contains(tenant)) {
          if (a.size() >= maxTenants) {
            return labelled(OTHER_TENANT);
          }
          a.add(tenant);
        }
      }
    }
    return labelled(tenant);
  }

  private TenantMeters labelled(String label) {
    TenantMeters m = tenants.get(label);
    // get() first: the constructor reference captures this, so computeIfAbsent allocates per call.
    return m != null ? m : tenants.computeIfAbsent(label, TenantMeters::new);
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
      // Every labelled tenant not admitted any more, also one whose meters a thread created while
      // this re-rank ran: only admitted tenants may keep meters of their own.
      for (Iterator<Map.Entry<String, TenantMeters>> it = tenants.entrySet().iterator();
          it.hasNext(); ) {
        Map.Entry<String, TenantMeters> e = it.next();
        if (!e.getKey().equals(OTHER_TENANT) && !next.contains(e.getKey())) {
          it.remove();
          e.getValue().remove();
        }
      }
      admitted = next;
      window.clear();
    }
  }

  /** Meters of one tenant label value. */
  private final class TenantMeters {
    final String tenant;
    final Counter seriesIn;
    final Counter samplesIn;
    final Counter bytesIn;
    final Counter seriesOut;
    final Counter samplesOut;
    final Counter bytesOut;
    final Counter seriesQueued;
    final Counter batchesDirect;
    final Counter batchesFromQueue;
    final Counter downstreamRequests;
    final Counter coalesced;
    final Counter splitSends;
    final List<Meter> all = new ArrayList<>();
    private final Map<String, Counter> byTag = new ConcurrentHashMap<>();

    TenantMeters(String tenant) {
      this.tenant = tenant;
      seriesIn = counter("relay.tenant.series.in", "series routed to the tenant");
      samplesIn = counter("relay.tenant.samples.in", "samples routed to the tenant");
      bytesIn = counter("relay.tenant.bytes.in", "uncompressed batch bytes routed");
      seriesOut = counter("relay.tenant.series.out", "series accepted downstream");
      samplesOut =
          counter(
              "relay.tenant.samples.out",
              "samples accepted downstream (sent from memory: sync mode, direct sends in queue mode)");
      bytesOut =
          counter(
              "relay.tenant.bytes.out",
              "uncompressed bytes accepted downstream (sent from memory: sync mode, direct sends in queue mode)");
      seriesQueued = counter("relay.tenant.series.queued", "series written to the tenant's queue");
      batchesDirect = delivered("direct");
      batchesFromQueue = delivered("queue");
      downstreamRequests =
          counter("relay.tenant.downstream.requests", "downstream requests made for the tenant");
      coalesced =
          counter(
              "relay.tenant.coalesced.fragments",
              "tenant batches that travelled in another batch's downstream request");
      splitSends =
          counter(
              "relay.tenant.split.sends",
              "downstream requests re-sending half of a merged request the downstream rejected,"
                  + " so that only the bad batches fail");
      if (!tenant.equals(OTHER_TENANT)) {
        all.add(
            Gauge.builder("relay.tenant.lane.state", laneStates, s -> stateValue(s.get(tenant)))
                .tag("tenant", tenant)
                .description(
                    "0 healthy, 1 backing off (5xx, timeout), 2 throttled (429), until a send"
                        + " succeeds")
                .register(registry));
        all.add(
            Gauge.builder("relay.tenant.queue.bytes", RelayMetrics.this, m -> m.queueBytes(tenant))
                .tag("tenant", tenant)
                .baseUnit("bytes")
                .description("bytes in the tenant's on-disk queue (queue mode)")
                .register(registry));
        all.add(
            Gauge.builder(
                    "relay.tenant.queue.disk", RelayMetrics.this, m -> m.queueDiskBytes(tenant))
                .tag("tenant", tenant)
                .baseUnit("bytes")
                .description("bytes of the tenant's queue segment files on disk (queue mode)")
                .register(registry));
        all.add(
            Gauge.builder(
                    "relay.tenant.queue.oldest.age",
                    RelayMetrics.this,
                    m -> m.queueAgeSeconds(tenant))
                .tag("tenant", tenant)
                .baseUnit("seconds")
                .description("age of the tenant's oldest queued batch (queue mode)")
                .register(registry));
        ToDoubleFunction<String> estimate = activeSeries;
        if (estimate != null) {
          all.add(
              Gauge.builder(
                      "relay.tenant.active.series.estimate", estimate, e -> e.applyAsDouble(tenant))
                  .tag("tenant", tenant)
                  .description(
                      "distinct series routed to the tenant within relay.insight.window,"
                          + " estimated (HLL, about 1.6 % error)")
                  .register(registry));
        }
      }
    }

    /**
     * Series whose fragment ended with {@code kind}: throttled, unavailable, rejected; throttled
     * also counts queued series a 429 kept queued.
     */
    Counter failed(FragmentOutcome.Kind kind) {
      return tagged(
          "relay.tenant.series.failed",
          "kind",
          kind.name().toLowerCase(Locale.ROOT),
          "series whose batch was not accepted, by how it ended (throttled: 429; in queue mode"
              + " the series of each send answered 429)");
    }

    /** Tenant batches accepted downstream: sent from memory, or as records of the queue. */
    private Counter delivered(String path) {
      return tagged(
          "relay.tenant.batches.delivered",
          "path",
          path,
          "tenant batches accepted downstream: direct (sent from memory) or queue (as queued"
              + " records)");
    }

    /** Series dropped from the tenant's queue, by reason. */
    Counter dropped(String reason) {
      return tagged(
          "relay.tenant.series.dropped",
          "reason",
          reason,
          "series dropped: from the queue (bytes, age, total bound, or rejected), or throttled"
              + " (answered 400 after too many 429s)");
    }

    /** Times the tenant's lane started backing off or being throttled. */
    Counter backoffs(Lane.State state) {
      return tagged(
          "relay.tenant.lane.backoffs",
          "state",
          state.name().toLowerCase(Locale.ROOT),
          "times the tenant's lane started backing off or throttling");
    }

    /** The tenant's counter {@code name} with one more tag, registered on first use. */
    private Counter tagged(String name, String tag, String value, String description) {
      return byTag.computeIfAbsent(
          name + " " + value,
          x ->
              register(
                  Counter.builder(name)
                      .tag("tenant", tenant)
                      .tag(tag, value)
                      .description(description)
                      .register(registry)));
    }

    void remove() {
      for (Meter m : all) {
        registry.remove(m);
      }
    }

    private Counter counter(String name, String description) {
      return register(
          Counter.builder(name).tag("tenant", tenant).description(description).register(registry));
    }

    private Counter register(Counter c) {
      all.add(c);
      return c;
    }
  }

  private static double stateValue(Lane.State state) {
    return state == null ? 0 : state == Lane.State.BACKING_OFF ? 1 : 2;
  }

  private double queueBytes(String tenant) {
    QueueStore s = store;
    FileTenantQueue q = s == null ? null : s.find(tenant);
    return q == null ? 0 : q.bytes();
  }

  private double queueDiskBytes(String tenant) {
    QueueStore s = store;
    FileTenantQueue q = s == null ? null : s.find(tenant);
    return q == null ? 0 : q.diskBytes();
  }

  private double queueAgeSeconds(String tenant) {
    QueueStore s = store;
    FileTenantQueue q = s == null ? null : s.find(tenant);
    return q == null ? 0 : ageSeconds(q.oldestAppendMillis().orElse(Long.MIN_VALUE));
  }
}
