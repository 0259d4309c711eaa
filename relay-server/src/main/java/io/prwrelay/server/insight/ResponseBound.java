package io.prwrelay.server.insight;

/**
 * The bound on {@code GET /tenants} and {@code GET /api/v1/tenants}: each body is at most {@value
 * #MAX_BYTES} bytes of UTF-8 whatever the tenants send. Rows are added most active series first
 * while they fit, with {@value #RESERVE} bytes kept for what ends the document; the rest are
 * counted as not shown. At the default 1,000 tenants every usual row fits (measured: 1,000 tenants
 * with IDs of 20 characters and five top metrics, 1.0 MB of page and 0.52 MB of JSON); a row cannot
 * pass about 13 KiB (a tenant ID of 150 characters, five names of {@link
 * io.prwrelay.core.route.SeriesDigests#MAX_NAME_BYTES} bytes, two messages of {@link
 * TenantInsight#MAX_MESSAGE_CHARS} characters, each escaped).
 *
 * <p>Why a bound: the page refreshes itself every five seconds, and a body is built whole on the
 * heap (the builder, its string and the encoded copy, about six times its size at their peak), so
 * one body of every tracked tenant's longest content, up to 100,000 tenants, would take the heap of
 * a small container.
 */
final class ResponseBound {
  /** Most bytes of a body. */
  static final int MAX_BYTES = 2 << 20;

  /** Bytes kept for what follows the rows: the page's script and the notes. */
  static final int RESERVE = 8 << 10;

  private ResponseBound() {}

  /**
   * Bytes of {@code s[from, to)} in UTF-8, a lone surrogate counted as three (encoders write one
   * byte, {@code ?}, for it).
   */
  static int utf8Length(CharSequence s, int from, int to) {
    int n = 0;
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n++;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < to
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }
}
