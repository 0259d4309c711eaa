package io.prwrelay.server.queue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Reversible, file-system-safe directory names for tenant IDs.
 *
 * <p>Tenant IDs are already validated (Cortex rules), but several of the characters they may hold
 * are not safe in every file system: {@code .} and {@code ..} are special, a leading dot hides a
 * directory, {@code *} is invalid on Windows, and {@code A} and {@code a} collide where names are
 * case-insensitive (macOS, Windows). So a name keeps {@code a-z 0-9 - _} as they are and writes
 * every other byte of the UTF-8 ID as {@code %} and two lowercase hex digits ({@code Team.A} →
 * {@code %54eam%2e%41}). Such a name can grow to three times the ID; when it would exceed {@value
 * #MAX_ESCAPED} characters the name is {@code =} followed by the unpadded lowercase base32 of the
 * ID's bytes instead (241 characters for a 150-byte ID, inside the common 255-byte limit). Neither
 * form can produce the other's first character, so decoding needs no other information.
 */
final class TenantDirNames {
  /** Longest escaped name; longer ones use the base32 form. */
  static final int MAX_ESCAPED = 200;

  private static final char BASE32_PREFIX = '=';
  private static final String BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
  private static final String HEX = "0123456789abcdef";

  private TenantDirNames() {}

  /** The directory name for {@code tenant}. */
  static String encode(String tenant) {
    byte[] bytes = tenant.getBytes(StandardCharsets.UTF_8);
    StringBuilder out = new StringBuilder(bytes.length + 8);
    for (byte b : bytes) {
      int c = b & 0xFF;
      if (isPlain(c)) {
        out.append((char) c);
      } else {
        out.append('%').append(HEX.charAt(c >> 4)).append(HEX.charAt(c & 0xF));
      }
    }
    if (out.length() <= MAX_ESCAPED) {
      return out.toString();
    }
    return BASE32_PREFIX + base32(bytes);
  }

  /**
   * The tenant ID a directory name encodes, or {@code null} when it is no name {@link #encode}
   * makes.
   */
  static String decode(String name) {
    if (name.isEmpty()) {
      return null;
    }
    byte[] bytes = name.charAt(0) == BASE32_PREFIX ? unbase32(name.substring(1)) : unescape(name);
    if (bytes == null || bytes.length == 0) {
      return null;
    }
    String tenant = new String(bytes, StandardCharsets.UTF_8);
    return encode(tenant).equals(name) ? tenant : null;
  }

  private static boolean isPlain(int c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  }

  private static byte[] unescape(String name) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(name.length());
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c == '%') {
        if (i + 2 >= name.length()) {
          return null;
        }
        int hi = HEX.indexOf(name.charAt(i + 1));
        int lo = HEX.indexOf(name.charAt(i + 2));
        if (hi < 0 || lo < 0) {
          return null;
        }
        out.write(hi << 4 | lo);
        i += 2;
      } else if (isPlain(c)) {
        out.write(c);
      } else {
        return null;
      }
    }
    return out.toByteArray();
  }

  private static String base32(byte[] bytes) {
    StringBuilder out = new StringBuilder((bytes.length * 8 + 4) / 5);
    int buffer = 0;
    int bits = 0;
    for (byte b : bytes) {
      buffer = buffer << 8 | (b & 0xFF);
      bits += 8;
      while (bits >= 5) {
        out.append(BASE32.charAt((buffer >> (bits - 5)) & 31));
        bits -= 5;
      }
    }
    if (bits > 0) {
      out.append(BASE32.charAt((buffer << (5 - bits)) & 31));
    }
    return out.toString();
  }

  private static byte[] unbase32(String text) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(text.length() * 5 / 8);
    int buffer = 0;
    int bits = 0;
    for (int i = 0; i < text.length(); i++) {
      int v = BASE32.indexOf(text.charAt(i));
      if (v < 0) {
        return null;
      }
      buffer = buffer << 5 | v;
      bits += 5;
      if (bits >= 8) {
        out.write((buffer >> (bits - 8)) & 0xFF);
        bits -= 8;
      }
    }
    return out.toByteArray();
  }
}
