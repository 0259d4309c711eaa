package io.prwrelay.core.wire;

/**
 * Field layout of PRW 1.0 {@code prometheus.MetricMetadata}.
 *
 * <pre>
 * MetricMetadata
 *   1  type                MetricType enum  (varint)
 *   2  metric_family_name  string           (length-delimited)
 *   3  (unused)
 *   4  help                string           (length-delimited)
 *   5  unit                string           (length-delimited)
 * </pre>
 */
public final class MetricMetadataFields {
  public static final int TYPE = 1;
  public static final int METRIC_FAMILY_NAME = 2;
  public static final int HELP = 4;
  public static final int UNIT = 5;

  public static final int TYPE_TAG = (TYPE << 3) | WireTags.VARINT;
  public static final int METRIC_FAMILY_NAME_TAG =
      (METRIC_FAMILY_NAME << 3) | WireTags.LENGTH_DELIMITED;
  public static final int HELP_TAG = (HELP << 3) | WireTags.LENGTH_DELIMITED;
  public static final int UNIT_TAG = (UNIT << 3) | WireTags.LENGTH_DELIMITED;

  private MetricMetadataFields() {}
}
