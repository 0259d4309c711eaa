package io.prwrelay.core.route;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Tenant ID validation by the rules of Cortex {@code ValidTenantID}: characters {@code a-z A-Z 0-9
 * ! - _ . * ' ( )}, at most {@value #MAX_LENGTH} bytes, and not one of {@code .}, {@code ..},
 * {@code __markers__}, {@code user-index.json.gz}. Cortex answers 500 (retriable) to an invalid
 * tenant, so the relay must never send one; a value that fails here can never reach a header (CR/LF
 * included).
 */
public final class TenantIds {
  /** Longest tenant ID Cortex accepts, in bytes. */
  public static final int MAX_LENGTH = 150;

  /** Validation outcome: the ID is valid. */
  public static final int VALID = -1;

  private static final boolean[] ALLOWED = new boolean[256];
  private static final byte[][] RESERVED = {
    ascii("."), ascii(".."), ascii("__markers__"), ascii("user-index.json.gz")
  };

  static {
    for (char c = 'a'; c <= 'z'; c++) {
      ALLOWED[c] = true;
    }
    for (char c = 'A'; c <= 'Z'; c++) {
      ALLOWED[c] = true;
    }
    for (char c = '0'; c <= '9'; c++) {
      ALLOWED[c] = true;
    }
    for (char c : "!-_.*'()".toCharArray()) {
      ALLOWED[c] = true;
    }
  }

  private TenantIds() {}

  /**
   * Checks the tenant ID {@code prefix + value[offset, offset + length)} without building it.
   *
   * @param prefix already-validated prefix bytes (may be empty)
   * @return {@link #VALID} or the ordinal of the {@link TenantProblem}
   */
  public static int check(byte[] prefix, byte[] value, int offset, int length) {
    if (length == 0 && prefix.length == 0) {
      return TenantProblem.MISSING.ordinal();
    }
    if (prefix.length + length > MAX_LENGTH) {
      return TenantProblem.TOO_LONG.ordinal();
    }
    boolean[] allowed = ALLOWED;
    for (int i = offset, end = offset + length; i < end; i++) {
      if (!allowed[value[i] & 0xFF]) {
        return TenantProblem.INVALID_CHARACTER.ordinal();
      }
    }
    if (prefix.length + length <= 18 && isReserved(prefix, value, offset, length)) {
      return TenantProblem.RESERVED.ordinal();
    }
    return VALID;
  }

  /**
   * Validates a complete tenant ID, e.g. from configuration; returns the problem or {@code null}.
   */
  public static TenantProblem problem(String id) {
    byte[] bytes = id.getBytes(StandardCharsets.UTF_8);
    int r = check(new byte[0], bytes, 0, bytes.length);
    return r == VALID ? null : TenantProblem.of(r);
  }

  private static boolean isReserved(byte[] prefix, byte[] value, int offset, int length) {
    int total = prefix.length + length;
    for (byte[] reserved : RESERVED) {
      if (reserved.length == total
          && Arrays.equals(reserved, 0, prefix.length, prefix, 0, prefix.length)
          && Arrays.equals(reserved, prefix.length, total, value, offset, offset + length)) {
        return true;
      }
    }
    return false;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
