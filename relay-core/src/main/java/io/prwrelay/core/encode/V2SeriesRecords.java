package io.prwrelay.core.encode;

import io.prwrelay.core.remotewrite.SymbolTable;
import io.prwrelay.core.remotewrite.V2SeriesView;
import java.util.Arrays;

/**
 * What {@link V2BatchEncoder} remembers of a request's series while it is read: per series its byte
 * range, its refs (label refs, then exemplar and metadata refs, copied into one flat array), the
 * label pair to leave out, and its tenant slot; per slot a chain of its series in request order and
 * its counts. Parallel int arrays that grow to the largest request seen and are reused.
 */
final class V2SeriesRecords {
  byte[] array;
  SymbolTable symbols;

  int count;
  int[] slot = new int[64];
  int[] start = new int[64];
  int[] content = new int[64];
  int[] end = new int[64];
  int[] refStart = new int[64];
  int[] refCount = new int[64];

  /** Index of the label pair to leave out, or -1. */
  int[] cut = new int[64];

  /** Next series of the same slot, or -1. */
  int[] next = new int[64];

  /** Number of exemplar and metadata refs, stored after the label refs. */
  int[] nestedCount = new int[64];

  /** Number of exemplars and of histograms: a writer skips looking for fields a series lacks. */
  int[] exemplars = new int[64];

  int[] histograms = new int[64];

  int[] refs = new int[1024];
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
      grow(count * 2);
    }
    int n = series.labelRefCount();
    int m = series.nestedRefCount();
    if (refs.length - refSize < n + m) {
      refs = Arrays.copyOf(refs, Math.max(refs.length * 2, refSize + n + m));
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

  private void grow(int n) {
    slot = Arrays.copyOf(slot, n);
    start = Arrays.copyOf(start, n);
    content = Arrays.copyOf(content, n);
    end = Arrays.copyOf(end, n);
    refStart = Arrays.copyOf(refStart, n);
    refCount = Arrays.copyOf(refCount, n);
    cut = Arrays.copyOf(cut, n);
    next = Arrays.copyOf(next, n);
    nestedCount = Arrays.copyOf(nestedCount, n);
    exemplars = Arrays.copyOf(exemplars, n);
    histograms = Arrays.copyOf(histograms, n);
  }
}
