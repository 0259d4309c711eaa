package io.prwrelay.core.encode;

/**
 * What a tenant batch carries, as the relay reports it: series, and the samples, exemplars and
 * native histogram samples of those series (counted from field tags, never decoded).
 */
public record SeriesCounts(int series, long samples, long exemplars, long histograms) {
  /** Nothing at all. */
  public static final SeriesCounts NONE = new SeriesCounts(0, 0, 0, 0);

  /** The sum of this and {@code other}. */
  public SeriesCounts plus(SeriesCounts other) {
    return new SeriesCounts(
        series + other.series,
        samples + other.samples,
        exemplars + other.exemplars,
        histograms + other.histograms);
  }
}
