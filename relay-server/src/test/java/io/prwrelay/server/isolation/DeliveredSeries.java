package io.prwrelay.server.isolation;

import com.google.protobuf.InvalidProtocolBufferException;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a recording {@link ScriptedDownstream} received, series by series: how many times each
 * {@link IdRequests#ID id} arrived under each tenant, and when each request arrived with the newest
 * sample it carried. Decodes the recorded requests incrementally with the generated protobuf
 * classes (the oracle), so it can be polled while a run goes on. Only for tenants whose every
 * request the downstream accepts: a recorded request does not say what it was answered.
 */
final class DeliveredSeries {
  /**
   * One downstream request of a tenant.
   *
   * @param atNanos when it arrived ({@link System#nanoTime()})
   * @param newestSampleMillis the newest sample timestamp in it
   */
  record Arrival(long atNanos, long newestSampleMillis, int series) {}

  private final ScriptedDownstream downstream;
  private final Map<String, Map<String, Integer>> counts = new HashMap<>();
  private final Map<String, Long> firstArrival = new HashMap<>();
  private final Map<String, List<Arrival>> arrivals = new HashMap<>();
  private final List<String> misrouted = new ArrayList<>();
  private int decoded;

  DeliveredSeries(ScriptedDownstream downstream) {
    this.downstream = downstream;
  }

  /** Decodes the requests received since the last call; returns this. */
  synchronized DeliveredSeries update() {
    List<Received> all = downstream.received();
    for (; decoded < all.size(); decoded++) {
      Received r = all.get(decoded);
      String tenant = r.tenant();
      WriteRequest body;
      try {
        body = WriteRequest.parseFrom(r.body());
      } catch (InvalidProtocolBufferException e) {
        throw new AssertionError("request for " + tenant + " is not a WriteRequest", e);
      }
      Map<String, Integer> ids = counts.computeIfAbsent(tenant, t -> new HashMap<>());
      long newest = Long.MIN_VALUE;
      for (TimeSeries s : body.getTimeseriesList()) {
        String id = null;
        String labelTenant = null;
        for (Label l : s.getLabelsList()) {
          if (l.getName().equals(IdRequests.ID)) {
            id = l.getValue();
          } else if (l.getName().equals(IdRequests.TENANT_LABEL)) {
            labelTenant = l.getValue();
          }
        }
        if (!tenant.equals(labelTenant)) {
          misrouted.add(id + " (" + labelTenant + ") sent as " + tenant);
        }
        ids.merge(id, 1, Integer::sum);
        firstArrival.putIfAbsent(id, r.atNanos());
        for (Sample sample : s.getSamplesList()) {
          newest = Math.max(newest, sample.getTimestamp());
        }
      }
      arrivals
          .computeIfAbsent(tenant, t -> new ArrayList<>())
          .add(new Arrival(r.atNanos(), newest, body.getTimeseriesCount()));
    }
    return this;
  }

  /** Series that arrived under a tenant other than their own label's. */
  synchronized List<String> misrouted() {
    return List.copyOf(misrouted);
  }

  /** How many times the series {@code id} arrived for {@code tenant}. */
  synchronized int count(String tenant, String id) {
    return counts.getOrDefault(tenant, Map.of()).getOrDefault(id, 0);
  }

  /** Series arrivals of {@code tenant}, counting each arrival of a series. */
  synchronized long arrivals(String tenant) {
    long n = 0;
    for (int c : counts.getOrDefault(tenant, Map.of()).values()) {
      n += c;
    }
    return n;
  }

  /** Distinct series of {@code tenant} that arrived. */
  synchronized int distinct(String tenant) {
    return counts.getOrDefault(tenant, Map.of()).size();
  }

  /** When the series {@code id} first arrived ({@link System#nanoTime()}), or {@code null}. */
  synchronized Long firstArrivalNanos(String id) {
    return firstArrival.get(id);
  }

  /**
   * The largest age, in milliseconds, of the newest sample of {@code tenant} at the downstream at
   * any instant from {@code fromNanos} to {@code toNanos} (checked every 10 ms and at each
   * arrival): how stale the tenant's data got at its worst. Sample timestamps are wall-clock
   * milliseconds; {@code wallMillis} and {@code nanos} are one reading of both clocks.
   *
   * @return the age, or {@link Long#MAX_VALUE} when nothing had arrived by {@code fromNanos}
   */
  synchronized long worstAgeMillis(
      String tenant, long fromNanos, long toNanos, long wallMillis, long nanos) {
    List<Arrival> list = new ArrayList<>(arrivals.getOrDefault(tenant, List.of()));
    list.sort(java.util.Comparator.comparingLong(Arrival::atNanos));
    long newest = Long.MIN_VALUE;
    long worst = 0;
    int next = 0;
    long step = 10_000_000;
    for (long t = fromNanos; t - toNanos <= 0; t += step) {
      while (next < list.size() && list.get(next).atNanos() - t <= 0) {
        Arrival a = list.get(next++);
        // Just before this arrival, the data was as old as it gets.
        if (newest != Long.MIN_VALUE && a.atNanos() - fromNanos >= 0) {
          worst = Math.max(worst, wallAt(a.atNanos(), wallMillis, nanos) - newest);
        }
        newest = Math.max(newest, a.newestSampleMillis());
      }
      if (newest == Long.MIN_VALUE) {
        return Long.MAX_VALUE;
      }
      worst = Math.max(worst, wallAt(t, wallMillis, nanos) - newest);
    }
    return worst;
  }

  private static long wallAt(long atNanos, long wallMillis, long nanos) {
    return wallMillis + (atNanos - nanos) / 1_000_000;
  }

  /** The requests of {@code tenant} in arrival order. */
  synchronized List<Arrival> arrivalsOf(String tenant) {
    return List.copyOf(arrivals.getOrDefault(tenant, List.of()));
  }

  /**
   * Checks that the series {@code expected} of {@code tenant} each arrived exactly once and that
   * nothing else arrived for it.
   *
   * @return problems found, at most a few of each kind, with totals; empty when none
   */
  synchronized List<String> exactlyOnce(String tenant, Collection<String> expected) {
    Map<String, Integer> got = counts.getOrDefault(tenant, Map.of());
    Map<String, Integer> missing = new TreeMap<>();
    Map<String, Integer> duplicated = new TreeMap<>();
    int missingCount = 0;
    int duplicatedCount = 0;
    for (String id : expected) {
      int n = got.getOrDefault(id, 0);
      if (n == 0) {
        if (missingCount++ < 5) {
          missing.put(id, n);
        }
      } else if (n > 1) {
        if (duplicatedCount++ < 5) {
          duplicated.put(id, n);
        }
      }
    }
    int unexpected = got.size() - (expected.size() - missingCount);
    List<String> problems = new ArrayList<>();
    if (missingCount > 0) {
      problems.add(
          tenant + ": " + missingCount + " series never arrived, e.g. " + missing.keySet());
    }
    if (duplicatedCount > 0) {
      problems.add(
          tenant + ": " + duplicatedCount + " series arrived more than once, e.g. " + duplicated);
    }
    if (unexpected != 0) {
      problems.add(tenant + ": " + unexpected + " series arrived that were never sent");
    }
    return problems;
  }
}
