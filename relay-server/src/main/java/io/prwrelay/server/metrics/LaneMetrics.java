package io.prwrelay.server.metrics;

import static io.prwrelay.server.metrics.MetricCatalogue.DOWNSTREAM_RESPONSES;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.lane.Fragment;
import io.prwrelay.server.lane.FragmentOutcome;
import io.prwrelay.server.lane.Lane;
import io.prwrelay.server.lane.LaneObserver;
import io.prwrelay.server.protocol.Protocol;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The metrics of the lanes and the downstream: what became of each tenant batch, the downstream's
 * answers and their durations, the lanes in memory and their health. Told by the lanes as their
 * {@link LaneObserver}, on the lane's event loop.
 */
public final class LaneMetrics implements LaneObserver {
  private final MeterRegistry registry;
  private final TenantAdmission<TenantMeters> tenants;

  /**
   * {@code relay_downstream_responses_total} by status (0 for transport failures), looked up once
   * per status: no label string or lookup per response.
   */
  private final AtomicReferenceArray<Counter> responses = new AtomicReferenceArray<>(1000);

  private final Timer downstreamDuration;
  private final AtomicInteger lanes = new AtomicInteger();
  private final Map<String, Lane.State> laneStates = new ConcurrentHashMap<>();

  LaneMetrics(MeterRegistry registry, TenantAdmission<TenantMeters> tenants) {
    this.registry = registry;
    this.tenants = tenants;
    downstreamDuration = MetricCatalogue.DOWNSTREAM_DURATION.timer(registry);
    MetricCatalogue.LANES.gauge(registry, lanes, AtomicInteger::get);
    for (Lane.State state :
        List.of(Lane.State.BACKING_OFF, Lane.State.THROTTLED, Lane.State.REJECTING)) {
      MetricCatalogue.LANES_NOT_HEALTHY.gauge(registry, this, m -> m.lanesIn(state), tag(state));
    }
  }

  /**
   * Registers {@code relay_downstream_protocol{protocol}} (1 for the Remote Write version PRW 2.0
   * input is sent in now, 0 for the other) and {@code relay_downstream_protocol_fallbacks_total}
   * (PRW 2.0 requests answered 415 and re-sent as 1.0 in auto mode).
   */
  void downstreamProtocol(DownstreamProtocol protocol) {
    for (Protocol p : Protocol.values()) {
      MetricCatalogue.DOWNSTREAM_PROTOCOL.gauge(
          registry, protocol, d -> d.forV2Input() == p ? 1 : 0, p.name().toLowerCase(Locale.ROOT));
    }
    MetricCatalogue.DOWNSTREAM_PROTOCOL_FALLBACKS.counter(
        registry, protocol, DownstreamProtocol::fallbacks);
  }

  /** {@code relay_tenant_lane_state}: 0 healthy, 1 backing off, 2 throttled, 3 rejecting. */
  TenantMeters.TenantGauge laneState() {
    return new TenantMeters.TenantGauge(
        MetricCatalogue.TENANT_LANE_STATE, tenant -> stateValue(laneStates.get(tenant)));
  }

  @Override
  public void attempt(String tenant, int fragments, AttemptOutcome outcome, long nanos) {
    responses(outcome).increment();
    downstreamDuration.record(nanos, TimeUnit.NANOSECONDS);
    TenantMeters m = tenants.meters(tenant);
    m.downstreamRequests.increment();
    if (fragments > 1) {
      m.coalesced.increment(fragments - 1);
    }
  }

  @Override
  public void splitSend(String tenant, int fragments) {
    tenants.meters(tenant).splitSends.increment();
  }

  @Override
  public void finished(Fragment fragment, FragmentOutcome outcome) {
    TenantMeters m = tenants.meters(fragment.tenant());
    switch (outcome.kind()) {
      case DELIVERED:
        m.batchesDirect.increment();
        m.seriesOut.increment(fragment.series());
        m.samplesOut.increment(fragment.samples());
        m.bytesOut.increment(fragment.size());
        break;
      case QUEUED:
        m.seriesQueued.increment(fragment.series());
        break;
      default:
        m.failed(tag(outcome.kind())).increment(fragment.series());
    }
  }

  @Override
  public void throttledQueued(String tenant, long series, AttemptOutcome outcome) {
    tenants.meters(tenant).failed(tag(FragmentOutcome.Kind.THROTTLED)).increment(series);
  }

  @Override
  public void drained(String tenant, long records, long series, AttemptOutcome outcome) {
    TenantMeters m = tenants.meters(tenant);
    if (outcome.success()) {
      m.batchesFromQueue.increment(records);
      m.seriesOut.increment(series);
    } else {
      m.dropped("rejected").increment(series);
    }
  }

  @Override
  public void queueRefused(String tenant, String bound, long series) {
    tenants.meters(tenant).refused(bound).increment(series);
  }

  @Override
  public void stateChanged(String tenant, Lane.State state, String reason, long delayNanos) {
    if (state == Lane.State.HEALTHY) {
      laneStates.remove(tenant);
    } else {
      laneStates.put(tenant, state);
      if (state != Lane.State.REJECTING) { // sends go on: no backoff
        tenants.meters(tenant).backoffs(tag(state)).increment();
      }
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

  private static double stateValue(Lane.State state) {
    if (state == null) {
      return 0;
    }
    return switch (state) {
      case HEALTHY -> 0;
      case BACKING_OFF -> 1;
      case THROTTLED -> 2;
      case REJECTING -> 3;
    };
  }

  private static String tag(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }

  private Counter responses(AttemptOutcome outcome) {
    int status = outcome.status();
    if (status < 0 || status >= responses.length()) {
      return DOWNSTREAM_RESPONSES.counter(registry, outcome.code());
    }
    Counter c = responses.get(status);
    if (c == null) {
      // The registry hands out one counter per code, so two threads racing here share it.
      c = DOWNSTREAM_RESPONSES.counter(registry, outcome.code());
      responses.set(status, c);
    }
    return c;
  }
}
