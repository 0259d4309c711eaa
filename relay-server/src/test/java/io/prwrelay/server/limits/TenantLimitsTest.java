package io.prwrelay.server.limits;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.core.route.SeriesLimits;
import io.prwrelay.server.config.LimitsConfig;
import io.prwrelay.server.config.LimitsConfig.Limits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TenantLimits}: the overrides file read at start and re-read while running, a broken file
 * keeping the last good one (logged, counted), limits turned on and off per tenant, windows turned
 * by {@link TenantLimits#tick()} and idle tenants forgotten with their memory.
 */
class TenantLimitsTest {
  @TempDir Path dir;

  private final AtomicLong now = new AtomicLong();
  private final List<Boolean> reloads = new ArrayList<>();

  private TenantLimits limits(Limits defaults, Path file) {
    return new TenantLimits(
        new LimitsConfig(defaults, Duration.ofMinutes(10), file, Duration.ofSeconds(10), 64L << 20),
        now::get,
        reloads::add);
  }

  /** Writes the file with a modification time of its own, so each write is a change. */
  private Path write(Path file, String text, int version) throws IOException {
    Files.writeString(file, text);
    Files.setLastModifiedTime(file, FileTime.fromMillis(1_000_000L * version));
    return file;
  }

  private static int admit(SeriesLimits.Gate gate, long from, int n) {
    int passed = 0;
    for (long i = from; i < from + n; i++) {
      passed += gate.admit(i * 0x9E3779B97F4A7C15L) ? 1 : 0;
    }
    return passed;
  }

  @Test
  void overridesAreReadAtStartAndReReadWhenTheFileChanges() throws IOException {
    Path file =
        write(dir.resolve("overrides"), "team-a.max-series-per-tenant = 100\n# none for b\n", 1);
    TenantLimits l = limits(new Limits(1_000, 0, 1), file);
    assertEquals(List.of(true), reloads);
    assertEquals(100, l.limitsOf("team-a").maxSeries());
    assertEquals(1_000, l.limitsOf("team-b").maxSeries(), "the default");
    SeriesLimits.Gate a = l.gate("team-a");
    assertEquals(100, admit(a, 0, 500));

    write(file, "team-a.max-series-per-tenant = 300\nteam-b.max-series-per-tenant = 0\n", 2);
    l.tick();
    assertEquals(List.of(true, true), reloads);
    assertEquals(200, admit(l.gate("team-a"), 1_000, 500), "raised to 300: 200 more");
    assertNull(l.gate("team-b"), "team-b has no series limit now");
    l.tick();
    assertEquals(2, reloads.size(), "unchanged: not read again");
  }

  @Test
  void aBrokenFileKeepsTheLastGoodOne() throws IOException {
    Path file = write(dir.resolve("overrides"), "team-a.samples-per-second = 10\n", 1);
    TenantLimits l = limits(Limits.NONE, file);
    assertTrue(l.lastReloadSuccessful());
    for (String broken :
        List.of(
            "team-a.samples-per-second = ten\n",
            "team-a.max-series = 5\n",
            "team|a.max-series-per-tenant = 5\n",
            "team-a = 5\n",
            "team-a.samples-burst = 0\n")) {
      write(file, "team-a.samples-per-second = 99\n" + broken, reloads.size() + 1);
      l.tick();
      assertFalse(l.lastReloadSuccessful(), broken);
      assertEquals(10, l.limitsOf("team-a").samplesPerSecond(), "kept: " + broken);
    }
    Files.delete(file);
    l.tick();
    assertFalse(l.lastReloadSuccessful());
    assertEquals(10, l.limitsOf("team-a").samplesPerSecond(), "a missing file keeps them too");
    write(file, "team-a.samples-per-second = 20\n", 99);
    l.tick();
    assertTrue(l.lastReloadSuccessful());
    assertEquals(20, l.limitsOf("team-a").samplesPerSecond());
    assertEquals(List.of(true, false, false, false, false, false, false, true), reloads);
  }

  @Test
  void overridesFileParsesDottedTenantsCommentsAndDefaults() throws IOException {
    Map<String, Limits> m =
        OverridesFile.parse(
            List.of(
                "  # comment",
                "",
                "team.a.prod.max-series-per-tenant=7 # trailing",
                "team.a.prod.samples-burst = 9"),
            new Limits(1, 2, 3));
    assertEquals(Map.of("team.a.prod", new Limits(7, 2, 9)), m);
  }

  @Test
  void samplesOverTheRateAreRefusedForThatTenantOnly() {
    TenantLimits l = limits(new Limits(0, 100, 1_000), null);
    assertTrue(l.takeSamples("team-a", 1_000));
    assertFalse(l.takeSamples("team-a", 1));
    assertTrue(l.takeSamples("team-b", 1_000), "a bucket of its own");
    now.addAndGet(1_000_000_000L);
    assertTrue(l.takeSamples("team-a", 100));
  }

  @Test
  void idleTenantsAreForgottenWithTheirMemory() {
    TenantLimits l = limits(new Limits(1_000, 0, 1), null);
    assertEquals(10, admit(l.gate("team-a"), 0, 10));
    long one = l.memoryBytes();
    assertTrue(one > 0);
    assertNotNull(l.usage("team-a"));
    assertEquals(10, l.usage("team-a").activeSeries());
    for (int w = 0; w < 3; w++) {
      now.addAndGet(Duration.ofMinutes(10).toNanos());
      l.tick();
    }
    assertEquals(0, l.memoryBytes(), "two windows without a series: forgotten");
  }

  @Test
  void tenantsWithOnlyASamplesLimitAreForgottenOnceTheirBucketIsFull() {
    TenantLimits l = limits(new Limits(0, 100, 1_000), null);
    assertTrue(l.takeSamples("team-a", 1_000));
    assertTrue(l.memoryBytes() > 0);
    now.addAndGet(Duration.ofMinutes(10).toNanos());
    l.tick();
    assertEquals(0, l.memoryBytes(), "refilled long ago: forgotten");
    assertTrue(l.takeSamples("team-a", 1_000), "made anew with a full bucket");
  }
}
