package io.prwrelay.core.wire;

/**
 * Field layout of PRW 1.0 {@code prometheus.TimeSeries}.
 *
 * <pre>
 * TimeSeries
 *   1  labels      repeated Label      (length-delimited)
 *   2  samples     repeated Sample     (length-delimited; one field per sample)
 *   3  exemplars   repeated Exemplar   (length-delimited)
 *   4  histograms  repeated Histogram  (length-delimited)
 * </pre>
 *
 * The relay reads only {@code labels}; the other fields are counted by their tags and skipped by
 * length.
 */
public final class TimeSeriesFields {
  public static final int LABELS = 1;
  public static final int SAMPLES = 2;
  public static final int EXEMPLARS = 3;
  public static final int HISTOGRAMS = 4;

  public static final int LABELS_TAG = (LABELS << 3) | WireTags.LENGTH_DELIMITED;
  public static final int SAMPLES_TAG = (SAMPLES << 3) | WireTags.LENGTH_DELIMITED;
  public static final int EXEMPLARS_TAG = (EXEMPLARS << 3) | WireTags.LENGTH_DELIMITED;
  public static final int HISTOGRAMS_TAG = (HISTOGRAMS << 3) | WireTags.LENGTH_DELIMITED;

  private TimeSeriesFields() {}
}
