package io.prwrelay.core.wire;

/**
 * Field layout of PRW 2.0 {@code io.prometheus.write.v2.Metadata}.
 *
 * <pre>
 * Metadata
 *   1  type      MetricType enum  (varint; same numbers as PRW 1.0 MetricMetadata.MetricType)
 *   2  (unused)
 *   3  help_ref  uint32           (varint; ref 0 is "", i.e. no help)
 *   4  unit_ref  uint32           (varint; ref 0 is "", i.e. no unit)
 * </pre>
 */
public final class V2MetadataFields {
  public static final int TYPE = 1;
  public static final int HELP_REF = 3;
  public static final int UNIT_REF = 4;

  public static final int TYPE_TAG = (TYPE << 3) | WireTags.VARINT;
  public static final int HELP_REF_TAG = (HELP_REF << 3) | WireTags.VARINT;
  public static final int UNIT_REF_TAG = (UNIT_REF << 3) | WireTags.VARINT;

  private V2MetadataFields() {}
}
