package io.prwrelay.core.wire;

/**
 * Field layout of PRW 2.0 {@code io.prometheus.write.v2.Exemplar}.
 *
 * <pre>
 * Exemplar
 *   1  labels_refs  repeated uint32  (packed or unpacked, like TimeSeries.labels_refs)
 *   2  value        double           (fixed64; same number as PRW 1.0 Exemplar.value)
 *   3  timestamp    int64            (varint; same number as PRW 1.0 Exemplar.timestamp)
 * </pre>
 */
public final class V2ExemplarFields {
  public static final int LABELS_REFS = 1;
  public static final int VALUE = 2;
  public static final int TIMESTAMP = 3;

  public static final int LABELS_REFS_TAG = (LABELS_REFS << 3) | WireTags.LENGTH_DELIMITED;
  public static final int LABELS_REF_UNPACKED_TAG = (LABELS_REFS << 3) | WireTags.VARINT;

  private V2ExemplarFields() {}
}
