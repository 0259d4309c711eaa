package io.prwrelay.core.remotewrite;

/**
 * Flyweight over one {@code TimeSeries} field found by {@link WriteRequestReader}: where its bytes
 * are, which tenant label matched and where that label's value lies. Offsets are indexes into
 * {@link #array()}; nothing is copied. A view is reused for every series and is valid only inside
 * the {@link WriteRequestVisitor#onSeries} call that received it.
 *
 * <pre>
 *  start        contentStart                                         end
 *  | tag | len  | Label | Label ... | Sample | Sample ... | Histogram |
 *                       ^labelStart ^labelEnd   (the matched tenant Label field, tag included)
 * </pre>
 */
public final class SeriesView {
  /** {@link #tenantLabel()} when no configured tenant label with a non-empty value is present. */
  public static final int NO_TENANT_LABEL = -1;

  byte[] array;
  int index;
  int start;
  int contentStart;
  int end;
  int tenantLabel;
  int valueOffset;
  int valueLength;
  int labelStart;
  int labelEnd;
  int samples;
  int exemplars;
  int histograms;

  void reset(byte[] array, int index, int start, int contentStart, int end) {
    this.array = array;
    this.index = index;
    this.start = start;
    this.contentStart = contentStart;
    this.end = end;
    this.tenantLabel = NO_TENANT_LABEL;
    this.valueOffset = 0;
    this.valueLength = 0;
    this.labelStart = 0;
    this.labelEnd = 0;
    this.samples = 0;
    this.exemplars = 0;
    this.histograms = 0;
  }

  /** The array holding the request; borrowed from the caller of {@link WriteRequestReader#read}. */
  public byte[] array() {
    return array;
  }

  /** Zero-based position of this series among the request's series. */
  public int index() {
    return index;
  }

  /** Index of the series field's first byte (its tag). */
  public int start() {
    return start;
  }

  /** Index of the first byte of the embedded {@code TimeSeries} message. */
  public int contentStart() {
    return contentStart;
  }

  /** Index one past the series' last byte. */
  public int end() {
    return end;
  }

  /**
   * Position in the configured tenant label list of the label that resolved the tenant, or {@link
   * #NO_TENANT_LABEL}. A label with an empty value counts as absent.
   */
  public int tenantLabel() {
    return tenantLabel;
  }

  /**
   * Index of the first byte of the tenant label's value; meaningful only when a tenant label
   * matched.
   */
  public int valueOffset() {
    return valueOffset;
  }

  /** Length in bytes of the tenant label's value. */
  public int valueLength() {
    return valueLength;
  }

  /** Index of the first byte (the tag) of the matched tenant {@code Label} field. */
  public int labelStart() {
    return labelStart;
  }

  /** Index one past the matched tenant {@code Label} field. */
  public int labelEnd() {
    return labelEnd;
  }

  /** Number of {@code samples} fields, counted from tags. */
  public int samples() {
    return samples;
  }

  /** Number of {@code exemplars} fields, counted from tags. */
  public int exemplars() {
    return exemplars;
  }

  /** Number of {@code histograms} fields, counted from tags. */
  public int histograms() {
    return histograms;
  }
}
