package io.prwrelay.core.remotewrite;

/**
 * Flyweight over one PRW 2.0 {@code TimeSeries} field found by {@link V2RequestReader}: where its
 * bytes are, its label refs (decoded, validated, in pairs), which tenant label matched and what the
 * series carries. Offsets are indexes into {@link #array()}; nothing is copied but the refs, into a
 * scratch array of the reader. A view is reused for every series and is valid only inside the
 * {@link V2RequestVisitor#onSeries} call that received it.
 *
 * <pre>
 *  start        contentStart                                               end
 *  | 0x2A | len | labels_refs: n0 v0 n1 v1 ... | Sample ... | Exemplar | Metadata |
 *                                      ^ tenantPair() = 1 when (n1, v1) resolved the tenant
 * </pre>
 */
public final class V2SeriesView {
  /** {@link #tenantLabel()} when no configured tenant label with a non-empty value is present. */
  public static final int NO_TENANT_LABEL = -1;

  byte[] array;
  SymbolTable symbols;
  int index;
  int start;
  int contentStart;
  int end;
  int tenantLabel;
  int tenantPair;
  int valueRef;
  int[] refs;
  int refCount;
  int[] nested;
  int nestedCount;
  int samples;
  int histograms;
  int exemplars;
  int metadata;

  void reset(byte[] array, SymbolTable symbols, int index, int start, int contentStart, int end) {
    this.array = array;
    this.symbols = symbols;
    this.index = index;
    this.start = start;
    this.contentStart = contentStart;
    this.end = end;
    this.tenantLabel = NO_TENANT_LABEL;
    this.tenantPair = -1;
    this.valueRef = 0;
    this.refCount = 0;
    this.nestedCount = 0;
    this.samples = 0;
    this.histograms = 0;
    this.exemplars = 0;
    this.metadata = 0;
  }

  /** The array holding the request; borrowed from the caller of {@link V2RequestReader#read}. */
  public byte[] array() {
    return array;
  }

  /** The request's symbols table, valid until the reader's next read. */
  public SymbolTable symbols() {
    return symbols;
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
   * #NO_TENANT_LABEL}. A label whose value is the empty string counts as absent.
   */
  public int tenantLabel() {
    return tenantLabel;
  }

  /** Index of the (name, value) pair that resolved the tenant, or -1. */
  public int tenantPair() {
    return tenantPair;
  }

  /** Symbol ref of the tenant label's value; meaningful only when a tenant label matched. */
  public int valueRef() {
    return valueRef;
  }

  /** Index in {@link #array()} of the first byte of the tenant label's value. */
  public int valueOffset() {
    return symbols.offset(valueRef);
  }

  /** Length in bytes of the tenant label's value. */
  public int valueLength() {
    return symbols.length(valueRef);
  }

  /**
   * The series' label refs in request order, name and value alternating, in {@code [0,
   * labelRefCount())}; borrowed scratch, valid only during the callback.
   */
  public int[] labelRefs() {
    return refs;
  }

  /** Number of label refs: twice the number of labels. */
  public int labelRefCount() {
    return refCount;
  }

  /**
   * The refs of the series' exemplar labels and metadata ({@code help_ref}, {@code unit_ref}), in
   * field order, in {@code [0, nestedRefCount())}; borrowed scratch, valid only during the
   * callback.
   */
  public int[] nestedRefs() {
    return nested;
  }

  /** Number of exemplar and metadata refs. */
  public int nestedRefCount() {
    return nestedCount;
  }

  /** Number of {@code samples} fields, counted from tags. */
  public int samples() {
    return samples;
  }

  /** Number of {@code histograms} fields, counted from tags. */
  public int histograms() {
    return histograms;
  }

  /** Number of {@code exemplars} fields, counted from tags. */
  public int exemplars() {
    return exemplars;
  }

  /** Number of {@code metadata} fields (normally 0 or 1). */
  public int metadata() {
    return metadata;
  }
}
