package io.prwrelay.core.wire;

/**
 * Field layout of PRW 1.0 {@code prometheus.Label}.
 *
 * <pre>
 * Label
 *   1  name   string (length-delimited, must be non-empty)
 *   2  value  string (length-delimited, empty means the label is absent)
 * </pre>
 */
public final class LabelFields {
  public static final int NAME = 1;
  public static final int VALUE = 2;

  public static final int NAME_TAG = (NAME << 3) | WireTags.LENGTH_DELIMITED;
  public static final int VALUE_TAG = (VALUE << 3) | WireTags.LENGTH_DELIMITED;

  private LabelFields() {}
}
