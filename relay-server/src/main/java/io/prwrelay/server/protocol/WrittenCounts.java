package io.prwrelay.server.protocol;

import io.netty.handler.codec.http.HttpHeaders;

/**
 * What a Remote Write 2.0 receiver says it wrote, from its {@code
 * X-Prometheus-Remote-Write-Samples-Written}, {@code -Histograms-Written} and {@code
 * -Exemplars-Written} headers. A count the receiver did not send is -1.
 */
public record WrittenCounts(long samples, long histograms, long exemplars) {
  public static final String SAMPLES_HEADER = "X-Prometheus-Remote-Write-Samples-Written";
  public static final String HISTOGRAMS_HEADER = "X-Prometheus-Remote-Write-Histograms-Written";
  public static final String EXEMPLARS_HEADER = "X-Prometheus-Remote-Write-Exemplars-Written";

  /** Nothing written. */
  public static final WrittenCounts ZERO = new WrittenCounts(0, 0, 0);

  /** Sets the three {@code *-Written} headers of these counts on {@code headers}. */
  public void setOn(HttpHeaders headers) {
    headers
        .set(SAMPLES_HEADER, Long.toString(samples))
        .set(HISTOGRAMS_HEADER, Long.toString(histograms))
        .set(EXEMPLARS_HEADER, Long.toString(exemplars));
  }

  /** The counts in {@code headers}, or {@code null} when none of the three is there (or valid). */
  public static WrittenCounts of(HttpHeaders headers) {
    long s = count(headers.get(SAMPLES_HEADER));
    long h = count(headers.get(HISTOGRAMS_HEADER));
    long e = count(headers.get(EXEMPLARS_HEADER));
    return s < 0 && h < 0 && e < 0 ? null : new WrittenCounts(s, h, e);
  }

  private static long count(String value) {
    if (value == null) {
      return -1;
    }
    try {
      long n = Long.parseLong(value.trim());
      return n < 0 ? -1 : n;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** Each count this one lacks (-1) taken from {@code fallback}. */
  public WrittenCounts orElse(WrittenCounts fallback) {
    return new WrittenCounts(
        samples >= 0 ? samples : fallback.samples,
        histograms >= 0 ? histograms : fallback.histograms,
        exemplars >= 0 ? exemplars : fallback.exemplars);
  }

  /** The sum of this and {@code other} (both complete). */
  public WrittenCounts plus(WrittenCounts other) {
    return new WrittenCounts(
        samples + other.samples, histograms + other.histograms, exemplars + other.exemplars);
  }
}
