package io.prwrelay.core.wire;

/**
 * Field layout of PRW 1.0 {@code prometheus.WriteRequest}.
 *
 * <pre>
 * WriteRequest
 *   1  timeseries  repeated TimeSeries   (length-delimited)
 *   2  (reserved)
 *   3  metadata    repeated MetricMetadata (length-delimited)
 * </pre>
 *
 * A concatenation of {@code timeseries} and {@code metadata} fields is itself a valid WriteRequest,
 * which is what lets the relay splice series into tenant batches without re-encoding them.
 */
public final class WriteRequestFields {
  public static final int TIMESERIES = 1;
  public static final int METADATA = 3;

  public static final int TIMESERIES_TAG = (TIMESERIES << 3) | WireTags.LENGTH_DELIMITED;
  public static final int METADATA_TAG = (METADATA << 3) | WireTags.LENGTH_DELIMITED;

  private WriteRequestFields() {}
}
