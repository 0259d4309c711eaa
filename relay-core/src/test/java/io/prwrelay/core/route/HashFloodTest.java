package io.prwrelay.core.route;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.sample;
import static io.prwrelay.testing.RawProto.series;
import static io.prwrelay.testing.RawProto.str;
import static io.prwrelay.testing.RawProto.varintField;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Tenant values a sender built to collide under {@code 31·h + b} and {@code String.hashCode}
 * (strings of {@code Aa}/{@code BB} blocks) neither make the tenant value cache walk long probe
 * runs nor keep another tenant's metric family from being learned.
 */
class HashFloodTest {
  private static final long TTL = Duration.ofMinutes(10).toNanos();

  private static String[] colliding(int blocks) {
    String[] out = new String[1 << blocks];
    for (int v = 0; v < out.length; v++) {
      StringBuilder b = new StringBuilder(blocks * 2);
      for (int k = 0; k < blocks; k++) {
        b.append((v >>> k & 1) == 0 ? "Aa" : "BB");
      }
      out[v] = b.toString();
    }
    return out;
  }

  @Test
  void collidingTenantValuesKeepEveryProbeRunShort() {
    String[] values = colliding(14);
    TenantTable table = new TenantTable("", "anonymous", 64);
    Set<Integer> entries = new HashSet<>();
    for (String v : values) {
      byte[] b = v.getBytes(StandardCharsets.US_ASCII);
      int entry = table.resolve(b, 0, b.length);
      assertTrue(TenantTable.isEntry(entry), v);
      assertEquals(v, table.id(entry));
      entries.add(entry);
    }
    assertEquals(values.length, entries.size());
    assertEquals(values.length, table.size());
    // Under the old unseeded hash all 16,384 share one home slot: the last one walks 16,384 slots.
    int longest = table.longestProbe();
    assertTrue(longest <= 64, "longest probe run " + longest);
    for (String v : values) {
      byte[] b = v.getBytes(StandardCharsets.US_ASCII);
      assertEquals(v, table.id(table.resolve(b, 0, b.length)));
    }
    assertEquals(values.length, table.size());
  }

  @Test
  void senderTeachingACollidingTenantDoesNotStopTheVictimsFamilyBeingLearned() {
    AtomicLong clock = new AtomicLong(5_000_000_000L);
    TenantRouter router =
        new TenantRouter(
            TenantRules.builder().build(), false, new MetricFamilies(1000, TTL, clock::get));
    String attacker = "AaAaAaAa";
    String victim = "BBBBBBBB";
    assertEquals(attacker.hashCode(), victim.hashCode());
    RouteAssertions.bytesByTenant(router, seriesOf("jobs_total", attacker), r -> {});
    RouteAssertions.bytesByTenant(router, seriesOf("jobs_total", victim), r -> {});
    byte[] metadata = len(3, varintField(1, 1), str(2, "jobs_total"), str(4, "Jobs."));
    Map<String, byte[]> out = RouteAssertions.bytesByTenant(router, metadata, r -> {});
    assertEquals(Set.of(attacker, victim), out.keySet());
    assertEquals(java.util.Arrays.toString(metadata), java.util.Arrays.toString(out.get(victim)));
  }

  private static byte[] seriesOf(String name, String tenant) {
    return cat(series(label("__name__", name), label("service_id", tenant), sample(1, 1)));
  }
}
