package io.prwrelay.bench;

import com.google.protobuf.InvalidProtocolBufferException;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The baseline: what a generic relay does with protobuf-java generated classes. Full parse,
 * per-tenant rebuild, serialize. Same tenant rule as the relay for a single label: the label's
 * value, or the default tenant when absent.
 */
final class GenericRelay {
  private GenericRelay() {}

  static int split(byte[] request, String tenantLabel, BiConsumer<String, byte[]> out)
      throws InvalidProtocolBufferException {
    WriteRequest req = WriteRequest.parseFrom(request);
    Map<String, WriteRequest.Builder> byTenant = new LinkedHashMap<>();
    for (TimeSeries ts : req.getTimeseriesList()) {
      String tenant = "anonymous";
      for (Label l : ts.getLabelsList()) {
        if (l.getName().equals(tenantLabel) && !l.getValue().isEmpty()) {
          tenant = l.getValue();
          break;
        }
      }
      byTenant.computeIfAbsent(tenant, t -> WriteRequest.newBuilder()).addTimeseries(ts);
    }
    for (Map.Entry<String, WriteRequest.Builder> e : byTenant.entrySet()) {
      WriteRequest.Builder b = e.getValue();
      b.addAllMetadata(req.getMetadataList());
      out.accept(e.getKey(), b.build().toByteArray());
    }
    return byTenant.size();
  }
}
