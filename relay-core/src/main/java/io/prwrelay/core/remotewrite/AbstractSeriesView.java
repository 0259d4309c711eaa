package io.prwrelay.core.remotewrite;

/**
 * What the PRW 1.0 and PRW 2.0 series flyweights have in common: where the series' bytes lie in the
 * request array, its position among the request's series, which configured tenant label resolved
 * its tenant and where that label's value lies, and how many samples, exemplars and histograms it
 * carries (counted from tags). Offsets are indexes into {@link #array()}; nothing is copied. A view
 * is reused for every series by its reader and is valid only inside the visitor call that received
 * it.
 *
 * <pre>
 *  start        contentStart                        end
 *  | tag | len  | the embedded TimeSeries message ... |
 * </pre>
 */
public abstract sealed class AbstractSeriesView permits SeriesView, V2SeriesView {
  /** {@link #tenantLabel()} when no configured tenant label with a non-empty value is present. */
  public static final int NO_TENANT_LABEL = -1;

  byte[] array;
  int index;
  int start;
  int contentStart;
  int end;
  int tenantLabel;
  int samples;
  int exemplars;
  int histograms;

  AbstractSeriesView() {}

  /** Points the view at a new series and forgets everything found in the previous one. */
  final void resetBounds(byte[] array, int index, int start, int contentStart, int end) {
    if (this.array != array) {
      // Once per request, not per series: a reference store into this long-lived view pays the
      // collector's write barrier (a memory fence under G1), the plain int stores below do not.
      this.array = array;
    }
    this.index = index;
    this.start = start;
    this.contentStart = contentStart;
    this.end = end;
    this.tenantLabel = NO_TENANT_LABEL;
    this.samples = 0;
    this.exemplars = 0;
    this.histograms = 0;
  }

  /** The array holding the request; borrowed from the caller of the reader's {@code read}. */
  public final byte[] array() {
    return array;
  }

  /** Zero-based position of this series among the request's series. */
  public final int index() {
    return index;
  }

  /** Index of the series field's first byte (its tag). */
  public final int start() {
    return start;
  }

  /** Index of the first byte of the embedded {@code TimeSeries} message. */
  public final int contentStart() {
    return contentStart;
  }

  /** Index one past the series' last byte. */
  public final int end() {
    return end;
  }

  /**
   * Position in the configured tenant label list of the label that resolved the tenant, or {@link
   * #NO_TENANT_LABEL}. A label with an empty value counts as absent.
   */
  public final int tenantLabel() {
    return tenantLabel;
  }

  /**
   * Index of the first byte of the tenant label's value; meaningful only when a tenant label
   * matched.
   */
  public abstract int valueOffset();

  /** Length in bytes of the tenant label's value. */
  public abstract int valueLength();

  /**
   * Number of {@code samples} fields, counted from tags; 0 from a PRW 1.0 reader that does not
   * count ({@link WriteRequestReader#WriteRequestReader(java.util.List, boolean)}), like the
   * exemplar and histogram counts.
   */
  public final int samples() {
    return samples;
  }

  /** Number of {@code exemplars} fields, counted from tags. */
  public final int exemplars() {
    return exemplars;
  }

  /** Number of {@code histograms} fields, counted from tags. */
  public final int histograms() {
    return histograms;
  }
}
