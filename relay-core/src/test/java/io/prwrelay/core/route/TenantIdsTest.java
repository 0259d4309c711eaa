package io.prwrelay.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class TenantIdsTest {
  @ParameterizedTest
  @ValueSource(strings = {"a", "Team-1", "svc.prod", "x_y", "!-_.*'()", "...", "user-index.json"})
  void acceptsCortexTenantCharacters(String id) {
    assertNull(TenantIds.problem(id));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = ';',
      value = {
        "a|b;INVALID_CHARACTER",
        "a/b;INVALID_CHARACTER",
        "host:9100;INVALID_CHARACTER",
        "with space;INVALID_CHARACTER",
        "ünicode;INVALID_CHARACTER",
        "tab\there;INVALID_CHARACTER",
        ".;RESERVED",
        "..;RESERVED",
        "__markers__;RESERVED",
        "user-index.json.gz;RESERVED"
      })
  void rejectsWhatCortexRejects(String id, TenantProblem problem) {
    assertEquals(problem, TenantIds.problem(id));
  }

  @Test
  void rejectsControlCharactersThatCouldSplitAHeader() {
    assertEquals(TenantProblem.INVALID_CHARACTER, TenantIds.problem("a\r\nb"));
    assertEquals(TenantProblem.INVALID_CHARACTER, TenantIds.problem("a\u0000"));
  }

  @Test
  void limitsLengthTo150BytesPrefixIncluded() {
    assertNull(TenantIds.problem("a".repeat(150)));
    assertEquals(TenantProblem.TOO_LONG, TenantIds.problem("a".repeat(151)));
    byte[] prefix = "p-".getBytes(StandardCharsets.US_ASCII);
    byte[] v148 = "a".repeat(148).getBytes(StandardCharsets.US_ASCII);
    byte[] v149 = "a".repeat(149).getBytes(StandardCharsets.US_ASCII);
    assertEquals(TenantIds.VALID, TenantIds.check(prefix, v148, 0, v148.length));
    assertEquals(TenantProblem.TOO_LONG.ordinal(), TenantIds.check(prefix, v149, 0, v149.length));
  }

  @Test
  void reservedNamesAreCheckedWithThePrefix() {
    byte[] dot = ".".getBytes(StandardCharsets.US_ASCII);
    assertEquals(TenantIds.VALID, TenantIds.check(new byte[] {'x'}, dot, 0, 1));
    assertEquals(TenantProblem.RESERVED.ordinal(), TenantIds.check(new byte[] {'.'}, dot, 0, 1));
  }

  @Test
  void rulesRejectUnusableSettingsNamingThem() {
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> TenantRules.builder().labels().build())
            .getMessage()
            .startsWith("labels:"));
    assertTrue(
        assertThrows(
                IllegalArgumentException.class,
                () -> TenantRules.builder().labels("a", "a").build())
            .getMessage()
            .startsWith("labels:"));
    assertTrue(
        assertThrows(
                IllegalArgumentException.class, () -> TenantRules.builder().prefix("a/").build())
            .getMessage()
            .startsWith("prefix:"));
    assertTrue(
        assertThrows(
                IllegalArgumentException.class,
                () -> TenantRules.builder().defaultTenant("..").build())
            .getMessage()
            .startsWith("default:"));
    assertTrue(
        assertThrows(
                IllegalArgumentException.class,
                () ->
                    TenantRules.builder()
                        .prefix("x".repeat(140))
                        .defaultTenant("y".repeat(11))
                        .build())
            .getMessage()
            .startsWith("default:"));
  }
}
