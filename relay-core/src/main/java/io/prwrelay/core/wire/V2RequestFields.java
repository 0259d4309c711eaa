package io.prwrelay.core.wire;

/**
 * Field layout of PRW 2.0 {@code io.prometheus.write.v2.Request}.
 *
 * <pre>
 * Request
 *   1-3  (reserved: a PRW 1.0 WriteRequest parsed as a v2 Request reads as empty)
 *   4    symbols     repeated string      (length-delimited; symbols[0] must be "")
 *   5    timeseries  repeated TimeSeries  (length-delimited)
 * </pre>
 *
 * Every {@code *_ref} in a request is an index into its {@code symbols}. The order of the two
 * fields in the byte stream is not fixed: a symbol may follow the series that reference it.
 */
public final class V2RequestFields {
  public static final int SYMBOLS = 4;
  public static final int TIMESERIES = 5;

  public static final int SYMBOLS_TAG = (SYMBOLS << 3) | WireTags.LENGTH_DELIMITED;
  public static final int TIMESERIES_TAG = (TIMESERIES << 3) | WireTags.LENGTH_DELIMITED;

  private V2RequestFields() {}
}
