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
public final class V2SeriesView extends AbstractSeriesView {
  SymbolTable symbols;
  int tenantPair;
  int valueRef;
  int[] refs;
  int refCount;
  int[] nested;
  int nestedCount;
  int metadata;

  void reset(byte[] array, SymbolTable symbols, int index, int start, int contentStart, int end) {
    resetBounds(array, index, start, contentStart, end);
    this.symbols = symbols;
    this.tenantPair = -1;
    this.valueRef = 0;
    this.refCount = 0;
    this.nestedCount = 0;
    this.metadata = 0;
  }

  /** The request's symbols table, valid until the reader's next read. */
  public SymbolTable symbols() {
    return symbols;
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
  @Override
  public int valueOffset() {
    return symbols.offset(valueRef);
  }

  /** Length in bytes of the tenant label's value. */
  @Override
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

  /** Number of {@code metadata} fields (normally 0 or 1). */
  public int metadata() {
    return metadata;
  }
}
