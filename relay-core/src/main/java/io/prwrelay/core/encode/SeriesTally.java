package io.prwrelay.core.encode;

import io.prwrelay.core.remotewrite.AbstractSeriesView;

/**
 * Running totals of the series a reader visits in one request, for the visitors that count a
 * request without routing it. Reusable and not thread-safe: one per visitor.
 */
public final class SeriesTally {
  private int series;
  private long samples;
  private long exemplars;
  private long histograms;

  /** Starts a new request: every total back to zero. */
  public void reset() {
    series = 0;
    samples = 0;
    exemplars = 0;
    histograms = 0;
  }

  /** Adds one series; {@code view} is borrowed for the call. */
  public void add(AbstractSeriesView view) {
    series++;
    samples += view.samples();
    exemplars += view.exemplars();
    histograms += view.histograms();
  }

  /** The totals since the last {@link #reset()}. */
  public SeriesCounts counts() {
    return new SeriesCounts(series, samples, exemplars, histograms);
  }
}
