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
public final class SeriesView extends AbstractSeriesView {
  /** {@link #labelsEnd()} when the reader did not find it. */
  public static final int UNKNOWN = -1;

  int valueOffset;
  int valueLength;
  int labelStart;
  int labelEnd;
  int labelsEnd;

  void reset(byte[] array, int index, int start, int contentStart, int end) {
    resetBounds(array, index, start, contentStart, end);
    this.valueOffset = 0;
    this.valueLength = 0;
    this.labelStart = 0;
    this.labelEnd = 0;
    this.labelsEnd = UNKNOWN;
  }

  @Override
  public int valueOffset() {
    return valueOffset;
  }

  @Override
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

  /**
   * Index of the first field after the series' leading run of {@code labels} fields (the end of the
   * series when it holds only labels), or {@link #UNKNOWN}: found only by a reader that walks
   * labels, and only when its fast scan read that far.
   */
  public int labelsEnd() {
    return labelsEnd;
  }
}
