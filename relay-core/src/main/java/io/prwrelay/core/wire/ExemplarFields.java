package io.prwrelay.core.wire;

/**
 * Field layout of PRW 1.0 {@code prometheus.Exemplar}.
 *
 * <pre>
 * Exemplar
 *   1  labels     repeated Label  (length-delimited)
 *   2  value      double          (fixed64)
 *   3  timestamp  int64           (varint)
 * </pre>
 */
public final class ExemplarFields {
  public static final int LABELS = 1;
  public static final int VALUE = 2;
  public static final int TIMESTAMP = 3;

  public static final int LABELS_TAG = (LABELS << 3) | WireTags.LENGTH_DELIMITED;

  private ExemplarFields() {}
}
