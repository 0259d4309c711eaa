package io.prwrelay.server.isolation;

import io.prwrelay.testkit.WriteRequestEncoder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Builds remote-write requests in which every series carries an {@value #ID} label unique to the
 * whole test, {@code <request id>/<index>}, so that the downstream can count the arrivals of each
 * series: once per series is the goal, whatever retries and coalescing happened on the way. Labels
 * are sorted by name as Prometheus sends them. One builder per sender thread.
 */
final class IdRequests {
  /** The label holding the series' unique id. */
  static final String ID = "id";

  /** The label the relay takes the tenant from (its default). */
  static final String TENANT_LABEL = "service_id";

  /** One tenant's part of a request: how many series, and how many random bytes pad each. */
  record Part(String tenant, int series, int padBytes) {
    Part(String tenant, int series) {
      this(tenant, series, 0);
    }
  }

  /**
   * A built request.
   *
   * @param id unique in the test; the series ids are {@code <id>/<tenant>/<index>}
   * @param seriesByTenant series of each tenant, in request order
   * @param timestampMillis the timestamp of every sample, the wall clock when it was built
   * @param snappy the body as a sender POSTs it
   */
  record Request(
      String id, Map<String, Integer> seriesByTenant, long timestampMillis, byte[] snappy) {
    boolean carries(String tenant) {
      return seriesByTenant.containsKey(tenant);
    }

    /** The ids of {@code tenant}'s series in this request. */
    List<String> ids(String tenant) {
      int n = seriesByTenant.getOrDefault(tenant, 0);
      List<String> ids = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        ids.add(seriesId(id, tenant, i));
      }
      return ids;
    }
  }

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private final WriteRequestEncoder encoder = new WriteRequestEncoder();
  private final Random random;
  private final StringBuilder pad = new StringBuilder();

  IdRequests(long seed) {
    this.random = new Random(seed);
  }

  static String seriesId(String requestId, String tenant, int index) {
    return requestId + "/" + tenant + "/" + index;
  }

  /** Builds request {@code id} from {@code parts}, its samples stamped with the wall clock now. */
  Request build(String id, List<Part> parts) {
    long now = System.currentTimeMillis();
    encoder.reset();
    Map<String, Integer> byTenant = new LinkedHashMap<>();
    for (Part p : parts) {
      if (byTenant.put(p.tenant(), p.series()) != null) {
        throw new IllegalArgumentException("tenant " + p.tenant() + " given twice");
      }
      for (int i = 0; i < p.series(); i++) {
        encoder.beginSeries().label("__name__", "lanes_test_" + (i % 4));
        if (p.padBytes() > 0) {
          pad.setLength(0);
          for (int b = 0; b < p.padBytes(); b++) {
            pad.append(HEX[random.nextInt(16)]);
          }
          encoder.label("blob", pad);
        }
        encoder
            .label(ID, seriesId(id, p.tenant(), i))
            .label(TENANT_LABEL, p.tenant())
            .sample(random.nextDouble(), now)
            .endSeries();
      }
    }
    return new Request(id, byTenant, now, encoder.snappy());
  }
}
