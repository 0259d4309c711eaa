package io.prwrelay.core.encode;

import io.prwrelay.core.remotewrite.SymbolTable;
import io.prwrelay.core.remotewrite.V2SeriesView;
import io.prwrelay.core.wire.ScratchMemory;
import java.util.Arrays;

/**
 * What {@link V2BatchEncoder} remembers of a request's series while it is read: per series its byte
 * range, its refs (label refs, then exemplar and metadata refs, copied into one flat array), the
 * label pair to leave out, and its tenant slot; per slot a chain of its series in request order and
 * its counts. Parallel int arrays reused from request to request; the per-series ones grow in the
 * encoder's {@link ScratchMemory}, the per-slot ones up to {@code relay.tenant.max-per-request}
 * slots (56 bytes a slot).
 */
final class V2SeriesRecords {
  private static final int SERIES = 64;
  private static final int REFS = 1024;

  private final ScratchMemory scratch;
  byte[] array;
  SymbolTable symbols;

  int count;
  int[] slot = new int[SERIES];
  int[] start = new int[SERIES];
  int[] content = new int[SERIES];
  int[] end = new int[SERIES];
  int[] refStart = new int[SERIES];
  int[] refCount = new int[SERIES];

  /** Index of the label pair to leave out, or -1. */
  int[] cut = new int[SERIES];

  /** Next series of the same slot, or -1. */
  int[] next = new int[SERIES];

  /** Number of exemplar and metadata refs, stored after the label refs. */
  int[] nestedCount = new int[SERIES];

  /** Number of exemplars and of histograms: a writer skips looking for fields a series lacks. */
  int[] exemplars = new int[SERIES];

  int[] histograms = new int[SERIES];

  int[] refs = new int[REFS];
  int refSize;

  int slots;

  /** Series added with a label pair to leave out, in this request. */
  int cuts;

  int[] head = new int[16];
  int[] tail = new int[16];
  int[] slotSeries = new int[16];
  long[] slotSamples = new long[16];
  long[] slotHistograms = new long[16];
  long[] slotExemplars = new long[16];
  int[] slotMetadata = new int[16];

  V2SeriesRecords(ScratchMemory scratch) {
    this.scratch = scratch;
    scratch.register(
        () -> {
          resize(SERIES, false);
          refs = new int[REFS];
        });
  }

  void reset(byte[] array, SymbolTable symbols) {
    this.array = array;
    this.symbols = symbols;
    count = 0;
    refSize = 0;
    slots = 0;
    cuts = 0;
  }

  int openSlot() {
    if (slots == head.length) {
      int n = slots * 2;
      head = Arrays.copyOf(head, n);
      tail = Arrays.copyOf(tail, n);
      slotSeries = Arrays.copyOf(slotSeries, n);
      slotSamples = Arrays.copyOf(slotSamples, n);
      slotHistograms = Arrays.copyOf(slotHistograms, n);
      slotExemplars = Arrays.copyOf(slotExemplars, n);
      slotMetadata = Arrays.copyOf(slotMetadata, n);
    }
    int s = slots++;
    head[s] = -1;
    tail[s] = -1;
    slotSeries[s] = 0;
    slotSamples[s] = 0;
    slotHistograms[s] = 0;
    slotExemplars[s] = 0;
    slotMetadata[s] = 0;
    return s;
  }

  void add(int s, V2SeriesView series, boolean removeTenantLabel) {
    if (count == slot.length) {
      resize(count * 2, true);
    }
    int n = series.labelRefCount();
    int m = series.nestedRefCount();
    if (refs.length - refSize < n + m) {
      refs = scratch.grow(refs, Math.max(refs.length * 2, refSize + n + m));
    }
    System.arraycopy(series.labelRefs(), 0, refs, refSize, n);
    System.arraycopy(series.nestedRefs(), 0, refs, refSize + n, m);
    int i = count++;
    slot[i] = s;
    start[i] = series.start();
    content[i] = series.contentStart();
    end[i] = series.end();
    refStart[i] = refSize;
    refCount[i] = n;
    nestedCount[i] = m;
    refSize += n + m;
    cut[i] =
        removeTenantLabel && series.tenantLabel() != V2SeriesView.NO_TENANT_LABEL
            ? series.tenantPair()
            : -1;
    if (cut[i] >= 0) {
      cuts++;
    }
    exemplars[i] = series.exemplars();
    histograms[i] = series.histograms();
    next[i] = -1;
    if (tail[s] < 0) {
      head[s] = i;
    } else {
      next[tail[s]] = i;
    }
    tail[s] = i;
    slotSeries[s]++;
    slotSamples[s] += series.samples();
    slotHistograms[s] += series.histograms();
    slotExemplars[s] += series.exemplars();
    slotMetadata[s] += series.metadata();
  }

  /**
   * Grows the per-series arrays to {@code n} entries, keeping their contents, all or none (charged
   * to the scratch memory at once); or, not {@code grow}, puts them back to {@code n} empty
   * entries.
   */
  private void resize(int n, boolean grow) {
    if (grow) {
      scratch.charge(11L * Integer.BYTES * (n - slot.length));
    }
    slot = resize(slot, n, grow);
    start = resize(start, n, grow);
    content = resize(content, n, grow);
    end = resize(end, n, grow);
    refStart = resize(refStart, n, grow);
    refCount = resize(refCount, n, grow);
    cut = resize(cut, n, grow);
    next = resize(next, n, grow);
    nestedCount = resize(nestedCount, n, grow);
    exemplars = resize(exemplars, n, grow);
    histograms = resize(histograms, n, grow);
  }

  private int[] resize(int[] a, int n, boolean grow) {
    return grow ? Arrays.copyOf(a, n) : new int[n];
  }
}
