package io.prwrelay.server.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TenantDirNamesTest {
  private static final String ALLOWED =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!-_.*'()";

  @Test
  void plainTenantIdsKeepTheirNames() {
    assertEquals("team-a", TenantDirNames.encode("team-a"));
    assertEquals("svc_01", TenantDirNames.encode("svc_01"));
  }

  @Test
  void everyOtherCharacterIsEscapedSoNamesAreSafeEverywhere() {
    assertEquals("%2e", TenantDirNames.encode("."));
    assertEquals("%2e%2e", TenantDirNames.encode(".."));
    assertEquals("%54eam%2e%41", TenantDirNames.encode("Team.A"));
    assertEquals("%2a%21%27%28%29", TenantDirNames.encode("*!'()"));
  }

  @Test
  void namesDifferingOnlyInCaseGetDirectoriesDifferingInMoreThanCase() {
    String upper = TenantDirNames.encode("Tenant");
    String lower = TenantDirNames.encode("tenant");
    assertNotEquals(upper.toLowerCase(Locale.ROOT), lower.toLowerCase(Locale.ROOT));
  }

  @Test
  void longestIdsSwitchToBase32AndStayUnder255Characters() {
    String worst = "!".repeat(150);
    String name = TenantDirNames.encode(worst);
    assertTrue(name.startsWith("="), name);
    assertEquals(241, name.length());
    assertEquals(worst, TenantDirNames.decode(name));
    String upper = "A".repeat(150);
    assertEquals(upper, TenantDirNames.decode(TenantDirNames.encode(upper)));
  }

  @Test
  void randomValidIdsRoundTripAndNeverCollide() {
    Random random = new Random(42);
    Set<String> names = new HashSet<>();
    Set<String> ids = new HashSet<>();
    for (int n = 0; n < 5_000; n++) {
      int length = 1 + random.nextInt(150);
      StringBuilder id = new StringBuilder(length);
      for (int i = 0; i < length; i++) {
        id.append(ALLOWED.charAt(random.nextInt(ALLOWED.length())));
      }
      String tenant = id.toString();
      String name = TenantDirNames.encode(tenant);
      assertTrue(name.length() <= 241, name);
      assertEquals(tenant, TenantDirNames.decode(name));
      if (ids.add(tenant)) {
        assertTrue(names.add(name.toLowerCase(Locale.ROOT)), "collision for " + tenant);
      }
    }
  }

  @Test
  void namesNotMadeByEncodeDecodeToNothing() {
    assertNull(TenantDirNames.decode("lost+found"));
    assertNull(TenantDirNames.decode("Team"));
    assertNull(TenantDirNames.decode("%6"));
    assertNull(TenantDirNames.decode("%61"), "a plain character written escaped is not canonical");
    assertNull(TenantDirNames.decode("=mfrgg"), "short IDs are never base32");
    assertNull(TenantDirNames.decode(""));
  }
}
