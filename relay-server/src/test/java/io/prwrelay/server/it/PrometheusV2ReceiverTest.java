package io.prwrelay.server.it;

import static io.prwrelay.testing.V2RawProto.metadata;
import static io.prwrelay.testing.V2RawProto.refs;
import static io.prwrelay.testing.V2RawProto.request;
import static io.prwrelay.testing.V2RawProto.sample;
import static io.prwrelay.testing.V2RawProto.series;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.it.PrometheusProcess.Series;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A Remote Write 2.0 sender (built from the schema in the test: Debian's Prometheus 2.42 cannot
 * send 2.0) → relay with {@code relay.downstream.protocol=v1} → a real Prometheus as PRW 1.0
 * receiver: the receiver stores each tenant's converted series.
 */
@ExtendWith(PrometheusProcess.Required.class)
class PrometheusV2ReceiverTest {

  @Test
  @Timeout(value = 90, unit = TimeUnit.SECONDS)
  void v2SeriesReachAPrometheusReceiverConvertedToV1() throws Exception {
    long now = System.currentTimeMillis();
    String[] table = {
      "", "__name__", "relay_v2_probe", "instance", "i1", "service_id", "t-a", "t-b", "a probe", "s"
    };
    byte[] body =
        request(
            table,
            series(refs(1, 2, 3, 4, 5, 6), sample(1.5, now), metadata(1, 8, 9)),
            series(refs(1, 2, 3, 4, 5, 7), sample(2.5, now)));
    try (PrometheusProcess receiver =
            PrometheusProcess.start(
                PrometheusProcess.receiverConfig(), PrometheusProcess.REMOTE_WRITE_RECEIVER_FLAG);
        RelayFixture relay =
            new RelayFixture(Map.of("relay.downstream.url", receiver.remoteWriteUrl()))) {
      HttpResponse<String> r = relay.writeV2(body);
      assertEquals(204, r.statusCode(), r.body() + receiver.logTail());
      assertEquals(
          "2", r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written").orElseThrow());
      boolean stored =
          Await.within(Duration.ofSeconds(30), () -> receiver.query("relay_v2_probe").size() == 2);
      assertTrue(stored, () -> "receiver has " + receiver.query("relay_v2_probe"));
      Map<String, Double> byTenant = new TreeMap<>();
      for (Series s : receiver.query("relay_v2_probe")) {
        assertEquals("i1", s.label("instance"));
        byTenant.put(s.label("service_id"), s.asDouble());
      }
      assertEquals(Map.of("t-a", 1.5, "t-b", 2.5), byTenant);
      assertEquals(List.of(), relay.downstream.received(), "nothing went anywhere else");
    }
  }
}
