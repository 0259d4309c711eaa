package io.prwrelay.server.metrics;

import io.prwrelay.server.metrics.Metric.Type;
import java.time.Duration;
import java.util.List;

/**
 * The catalogue of the relay's own metrics: each {@code relay_*} metric's name, type, unit, help
 * text and tags, declared once here, as {@code ConfigKeys} is for configuration keys. The meters
 * are built from these constants only ({@link Metric#counter}, {@link Metric#gauge}, {@link
 * Metric#timer}); tests check that a scrape exports nothing else, that the metrics table of
 * docs/metrics.md documents each with its tags, and that the example alert rules and the Grafana
 * dashboard select only these metrics and their tags.
 *
 * <p>Grouped by who reports them: the ingress ({@link RelayMetrics}), the lanes and the downstream
 * ({@link LaneMetrics}), the queue ({@link QueueMetrics}), each tenant ({@link TenantMeters}) and
 * the process ({@link RuntimeMetrics}). Every per-tenant metric has the tag {@code tenant} first.
 */
public final class MetricCatalogue {
  private MetricCatalogue() {}

  private static final String BYTES = "bytes";
  private static final String SECONDS = "seconds";

  // The ingress: requests, connections, routing.

  public static final Metric REQUESTS =
      counter("relay.requests", "write requests answered, by status", "status");
  public static final Metric REQUEST_DURATION =
      histogram(
          "relay.request.duration",
          Duration.ofSeconds(60),
          "time from a request's headers to its answer");
  public static final Metric REQUESTS_FORWARDED_WHOLE =
      counter(
          "relay.requests.forwarded.whole",
          "write requests whose compressed body went downstream as received: one tenant, nothing"
              + " to change");
  public static final Metric INFLIGHT_REQUESTS =
      gauge("relay.inflight.requests", null, "sender requests being received, routed or delivered");
  public static final Metric RECEIVED_BYTES =
      counter("relay.received.bytes", "compressed request bytes received");
  public static final Metric HTTP_REQUESTS =
      counter(
          "relay.http.requests",
          "requests to the other endpoints, by endpoint and status",
          "endpoint",
          "status");
  public static final Metric INTERNAL_ERRORS =
      counter("relay.internal.errors", "requests that failed inside the relay, by kind", "kind");
  public static final Metric INFLIGHT_BODY =
      gauge(
          "relay.inflight.body",
          BYTES,
          "request bytes admitted by the memory budget and not yet answered (bodies as received,"
              + " and what they decompress to)");
  public static final Metric INFLIGHT_BODY_LIMIT =
      gauge("relay.inflight.body.limit", BYTES, "relay.server.max-inflight-bytes in effect");
  public static final Metric INFLIGHT_REJECTED =
      counter(
          "relay.inflight.rejected",
          "write requests refused by the memory budget: total or client (503), too_large (413)",
          "reason");
  public static final Metric CONNECTIONS =
      gauge("relay.connections", null, "open ingress connections");
  public static final Metric CONNECTIONS_LIMIT =
      gauge("relay.connections.limit", null, "relay.server.max-connections in effect");
  public static final Metric CONNECTIONS_REJECTED =
      counter(
          "relay.connections.rejected",
          "connections beyond relay.server.max-connections (answered 503, or closed),"
              + " connections closed for not reading their answers (not_reading), and"
              + " connections closed for sending nothing within relay.server.read-timeout (silent)",
          "action");
  public static final Metric AUTH_REJECTED =
      counter(
          "relay.auth.rejected",
          "requests refused by inbound auth: 401 (credentials) or 403 (tenant not allowed)",
          "status");
  public static final Metric RELOADS =
      counter("relay.reloads", "changed files re-read, by file and result", "file", "result");
  public static final Metric LIMITS_CONFIG_LAST_RELOAD_SUCCESSFUL =
      gauge(
          "relay.limits.config.last.reload.successful",
          null,
          "1 when the last look at relay.limits.overrides-file found it usable, 0 when the"
              + " previous overrides are kept (failures: relay_reloads_total{file=\"limits-overrides\"})");
  public static final Metric LIMITS_MEMORY =
      gauge(
          "relay.limits.memory",
          BYTES,
          "memory the per-tenant limits take now (filters and tenant state), at most"
              + " relay.limits.max-memory-bytes");
  public static final Metric MEMORY_RETAINED_BOUND =
      gauge(
          "relay.memory.retained.bound",
          BYTES,
          "worst case in effect of each long-lived structure that keeps bytes senders chose"
              + " (insight, tenant_cache, metric_families, delivery_ledger, limits, scratch),"
              + " fitted at startup to a third of the heap",
          "structure");
  public static final Metric LIMITS_MEMORY_REFUSED =
      counter(
          "relay.limits.memory.refused",
          "filters or tenants the limits' memory bound refused: the tenant went unlimited or its"
              + " filter stopped growing");
  public static final Metric TLS_HANDSHAKE_FAILURES =
      counter(
          "relay.tls.handshake.failures",
          "TLS ingress connections that failed: handshake or plaintext",
          "reason");
  public static final Metric SERIES_REJECTED =
      counter(
          "relay.series.rejected",
          "series in requests answered 400 or 403 as a whole, by reason",
          "reason");
  public static final Metric SERIES_DROPPED =
      counter(
          "relay.series.dropped",
          "series without a valid tenant dropped (relay.tenant.missing=drop), by reason",
          "reason");
  public static final Metric SERIES_DEFAULTED =
      counter(
          "relay.series.defaulted",
          "series without a valid tenant sent to the default tenant, by reason",
          "reason");
  public static final Metric SERIES_WITHOUT_TENANT_LABEL =
      counter(
          "relay.series.without.tenant.label",
          "series routed that carried none of relay.tenant.labels, however few they were (sent to"
              + " the default tenant or dropped; a request refused under relay.tenant.missing=reject"
              + " counts in relay_series_rejected_total)");
  public static final Metric METADATA_ROUTED =
      counter(
          "relay.metadata.routed",
          "PRW 1.0 metadata entries sent, by how their tenants were chosen: broadcast (to the tenants"
              + " of the request's series), family (a request without series: the tenants that sent"
              + " the family), default (no tenant known for the family)",
          "route");
  public static final Metric METADATA_DROPPED =
      counter(
          "relay.metadata.dropped",
          "PRW 1.0 metadata entries not sent, by reason: max_broadcast_bytes, unknown_family,"
              + " too_many_tenants, policy (relay.metadata=drop), forbidden_tenant",
          "reason");
  public static final Metric METADATA_FAMILY_TENANTS =
      gauge(
          "relay.metadata.family.tenants",
          null,
          "metric family to tenant associations held to route metadata-only requests"
              + " (relay.metadata.max-family-tenants)");
  public static final Metric LEDGER_SKIPPED =
      counter(
          "relay.ledger.skipped.series",
          "series not sent again: an earlier attempt of the same request delivered them");

  // The lanes and the downstream.

  public static final Metric LANES = gauge("relay.lanes", null, "tenant lanes in memory");
  public static final Metric LANES_NEW_REFUSED =
      counter(
          "relay.lanes.new.refused",
          "tenant batches answered 503 because their sender had caused more new tenant lanes than"
              + " relay.lanes.new-per-sender-rate and -burst allow");
  public static final Metric LANES_NOT_HEALTHY =
      gauge(
          "relay.lanes.not.healthy",
          null,
          "tenant lanes backing off (5xx, timeout), throttled (429) or rejecting (non-retriable"
              + " 4xx to their last 3 sends) until a send succeeds",
          "state");
  public static final Metric DOWNSTREAM_RESPONSES =
      counter(
          "relay.downstream.responses",
          "downstream attempts by status (error for no response)",
          "code");
  public static final Metric DOWNSTREAM_DURATION =
      histogram(
          "relay.downstream.duration", Duration.ofSeconds(30), "time of one downstream attempt");
  public static final Metric DOWNSTREAM_PROTOCOL =
      gauge(
          "relay.downstream.protocol",
          null,
          "Remote Write version PRW 2.0 input is sent downstream in (1 = in use)",
          "protocol");
  public static final Metric DOWNSTREAM_PROTOCOL_FALLBACKS =
      counter(
          "relay.downstream.protocol.fallbacks",
          "PRW 2.0 requests the downstream answered 415, re-sent as PRW 1.0 (auto)");

  // The on-disk queues of queue mode, all tenants together.

  public static final Metric QUEUE_BYTES =
      gauge("relay.queue.bytes", BYTES, "bytes in the on-disk queues of all tenants");
  public static final Metric QUEUE_DISK =
      gauge(
          "relay.queue.disk",
          BYTES,
          "bytes of the queue segment files on disk, delivered parts of segments not yet removed"
              + " included");
  public static final Metric QUEUE_RECORDS =
      gauge("relay.queue.records", null, "tenant batches in the on-disk queues");
  public static final Metric QUEUE_OLDEST_AGE =
      gauge(
          "relay.queue.oldest.age",
          SECONDS,
          "age of the oldest queued batch of any tenant (0 when empty)");
  public static final Metric QUEUE_TAIL_CUT_BYTES =
      counterIn(
          BYTES,
          "relay.queue.tail.cut.bytes",
          "bytes of damaged or torn queue files cut at startup or while reading");

  // Each tenant within relay.metrics.max-tenants, the others together as tenant="other".

  public static final Metric TENANT_SERIES_IN =
      counter("relay.tenant.series.in", "series routed to the tenant", "tenant");
  public static final Metric TENANT_METADATA_IN =
      counter(
          "relay.tenant.metadata.in",
          "PRW 1.0 metadata entries routed to the tenant (broadcast or by family)",
          "tenant");
  public static final Metric TENANT_SAMPLES_IN =
      counter("relay.tenant.samples.in", "samples routed to the tenant", "tenant");
  public static final Metric TENANT_BYTES_IN =
      counter("relay.tenant.bytes.in", "uncompressed batch bytes routed", "tenant");
  public static final Metric TENANT_SERIES_OUT =
      counter("relay.tenant.series.out", "series accepted downstream", "tenant");
  public static final Metric TENANT_SAMPLES_OUT =
      counter(
          "relay.tenant.samples.out",
          "samples accepted downstream (sent from memory: sync mode, direct sends in queue mode)",
          "tenant");
  public static final Metric TENANT_BYTES_OUT =
      counter(
          "relay.tenant.bytes.out",
          "uncompressed bytes accepted downstream (sent from memory: sync mode, direct sends in"
              + " queue mode)",
          "tenant");
  public static final Metric TENANT_SERIES_QUEUED =
      counter("relay.tenant.series.queued", "series written to the tenant's queue", "tenant");
  public static final Metric TENANT_BATCHES_DELIVERED =
      counter(
          "relay.tenant.batches.delivered",
          "tenant batches accepted downstream: direct (sent from memory) or queue (as queued"
              + " records)",
          "tenant",
          "path");
  public static final Metric TENANT_SERIES_FAILED =
      counter(
          "relay.tenant.series.failed",
          "series whose batch was not accepted, by how it ended (throttled: 429; in queue mode the"
              + " series of each send answered 429)",
          "tenant",
          "kind");
  public static final Metric TENANT_SERIES_DROPPED =
      counter(
          "relay.tenant.series.dropped",
          "series dropped: from the queue (bytes, age, total bound, or rejected), or throttled"
              + " (answered 400 after too many 429s)",
          "tenant",
          "reason");
  public static final Metric TENANT_SERIES_LIMITED =
      counter(
          "relay.tenant.series.limited",
          "series the relay's own per-tenant limits kept from the downstream: max_series (new"
              + " series over relay.limits.max-series-per-tenant, dropped) or samples_rate (series of"
              + " batches over relay.limits.samples-per-second, answered as a 429)",
          "tenant",
          "reason");
  public static final Metric TENANT_SERIES_REFUSED =
      counter(
          "relay.tenant.series.refused",
          "series refused a place in the tenant's queue and answered 503 (queue mode), by the bound"
              + " reached: tenant-bytes, total-bytes, new-tenants-per-request,"
              + " new-tenants-per-second",
          "tenant",
          "bound");
  public static final Metric TENANT_DOWNSTREAM_REQUESTS =
      counter(
          "relay.tenant.downstream.requests", "downstream requests made for the tenant", "tenant");
  public static final Metric TENANT_COALESCED_FRAGMENTS =
      counter(
          "relay.tenant.coalesced.fragments",
          "tenant batches that travelled in another batch's downstream request",
          "tenant");
  public static final Metric TENANT_SPLIT_SENDS =
      counter(
          "relay.tenant.split.sends",
          "downstream requests re-sending half of a merged request the downstream rejected, so"
              + " that only the bad batches fail",
          "tenant");
  public static final Metric TENANT_LANE_BACKOFFS =
      counter(
          "relay.tenant.lane.backoffs",
          "times the tenant's lane started backing off or throttling",
          "tenant",
          "state");
  public static final Metric TENANT_LANE_STATE =
      gauge(
          "relay.tenant.lane.state",
          null,
          "0 healthy, 1 backing off (5xx, timeout), 2 throttled (429), 3 rejecting (non-retriable"
              + " 4xx to its last 3 sends), until a send succeeds",
          "tenant");
  public static final Metric TENANT_QUEUE_BYTES =
      gauge(
          "relay.tenant.queue.bytes",
          BYTES,
          "bytes in the tenant's on-disk queue (queue mode)",
          "tenant");
  public static final Metric TENANT_QUEUE_DISK =
      gauge(
          "relay.tenant.queue.disk",
          BYTES,
          "bytes of the tenant's queue segment files on disk (queue mode)",
          "tenant");
  public static final Metric TENANT_QUEUE_OLDEST_AGE =
      gauge(
          "relay.tenant.queue.oldest.age",
          SECONDS,
          "age of the tenant's oldest queued batch (queue mode)",
          "tenant");
  public static final Metric TENANT_ACTIVE_SERIES_ESTIMATE =
      gauge(
          "relay.tenant.active.series.estimate",
          null,
          "distinct series routed to the tenant within relay.insight.window, estimated"
              + " (HyperLogLog, about 1.2 % error)",
          "tenant");

  public static final Metric TENANT_NEW_SERIES =
      gauge(
          "relay.tenant.new.series.per.second",
          null,
          "series routed to the tenant that were not in its window's earlier buckets, per second"
              + " since the start of the previous bucket (relay.insight.window / 10); absent until"
              + " the tenant has been tracked for a whole bucket",
          "tenant");
  public static final Metric TENANT_METRIC_ACTIVE_SERIES =
      gauge(
          "relay.tenant.metric.active.series.estimate",
          null,
          "the tenant's active series estimate times the metric name's share of them, for the"
              + " tenant's top 5 names by that share (a sample of 256 of its series)",
          "tenant",
          "metric");
  public static final Metric TENANT_METRIC_NEW_SERIES =
      gauge(
          "relay.tenant.metric.new.series.per.second",
          null,
          "the tenant's new series per second that carry the metric name, for the tenant's top 5"
              + " names by share of its active series",
          "tenant",
          "metric");

  // The process.

  public static final Metric POOLED_MEMORY =
      gauge("relay.pooled.memory", BYTES, "memory held by the buffer allocator", "kind");
  public static final Metric POOLED_MEMORY_IN_USE =
      gauge(
          "relay.pooled.memory.in.use",
          BYTES,
          "memory of the buffer allocator's chunks taken by buffers in use",
          "kind");
  public static final Metric BUILD_INFO =
      gauge(
          "relay.build.info",
          null,
          "always 1: the relay's version, the Java runtime and the transport",
          "version",
          "java_version",
          "transport");

  /** Every metric of the catalogue. */
  public static final List<Metric> ALL =
      List.of(
          REQUESTS,
          REQUEST_DURATION,
          REQUESTS_FORWARDED_WHOLE,
          INFLIGHT_REQUESTS,
          RECEIVED_BYTES,
          HTTP_REQUESTS,
          INTERNAL_ERRORS,
          INFLIGHT_BODY,
          INFLIGHT_BODY_LIMIT,
          INFLIGHT_REJECTED,
          CONNECTIONS,
          CONNECTIONS_LIMIT,
          CONNECTIONS_REJECTED,
          AUTH_REJECTED,
          RELOADS,
          LIMITS_CONFIG_LAST_RELOAD_SUCCESSFUL,
          LIMITS_MEMORY,
          LIMITS_MEMORY_REFUSED,
          MEMORY_RETAINED_BOUND,
          TLS_HANDSHAKE_FAILURES,
          SERIES_REJECTED,
          SERIES_DROPPED,
          SERIES_DEFAULTED,
          SERIES_WITHOUT_TENANT_LABEL,
          METADATA_ROUTED,
          METADATA_DROPPED,
          METADATA_FAMILY_TENANTS,
          LEDGER_SKIPPED,
          LANES,
          LANES_NEW_REFUSED,
          LANES_NOT_HEALTHY,
          DOWNSTREAM_RESPONSES,
          DOWNSTREAM_DURATION,
          DOWNSTREAM_PROTOCOL,
          DOWNSTREAM_PROTOCOL_FALLBACKS,
          QUEUE_BYTES,
          QUEUE_DISK,
          QUEUE_RECORDS,
          QUEUE_OLDEST_AGE,
          QUEUE_TAIL_CUT_BYTES,
          TENANT_SERIES_IN,
          TENANT_METADATA_IN,
          TENANT_SAMPLES_IN,
          TENANT_BYTES_IN,
          TENANT_SERIES_OUT,
          TENANT_SAMPLES_OUT,
          TENANT_BYTES_OUT,
          TENANT_SERIES_QUEUED,
          TENANT_BATCHES_DELIVERED,
          TENANT_SERIES_FAILED,
          TENANT_SERIES_DROPPED,
          TENANT_SERIES_LIMITED,
          TENANT_SERIES_REFUSED,
          TENANT_DOWNSTREAM_REQUESTS,
          TENANT_COALESCED_FRAGMENTS,
          TENANT_SPLIT_SENDS,
          TENANT_LANE_BACKOFFS,
          TENANT_LANE_STATE,
          TENANT_QUEUE_BYTES,
          TENANT_QUEUE_DISK,
          TENANT_QUEUE_OLDEST_AGE,
          TENANT_ACTIVE_SERIES_ESTIMATE,
          TENANT_NEW_SERIES,
          TENANT_METRIC_ACTIVE_SERIES,
          TENANT_METRIC_NEW_SERIES,
          POOLED_MEMORY,
          POOLED_MEMORY_IN_USE,
          BUILD_INFO);

  private static Metric counter(String name, String help, String... tags) {
    return new Metric(name, Type.COUNTER, null, help, List.of(tags), null);
  }

  private static Metric counterIn(String unit, String name, String help, String... tags) {
    return new Metric(name, Type.COUNTER, unit, help, List.of(tags), null);
  }

  private static Metric gauge(String name, String unit, String help, String... tags) {
    return new Metric(name, Type.GAUGE, unit, help, List.of(tags), null);
  }

  private static Metric histogram(String name, Duration longest, String help) {
    return new Metric(name, Type.HISTOGRAM, SECONDS, help, List.of(), longest);
  }
}
