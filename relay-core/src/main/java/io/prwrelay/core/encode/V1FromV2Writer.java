package io.prwrelay.core.encode;

import io.prwrelay.core.remotewrite.SymbolTable;
import io.prwrelay.core.wire.ExemplarFields;
import io.prwrelay.core.wire.LabelFields;
import io.prwrelay.core.wire.MetricMetadataFields;
import io.prwrelay.core.wire.ScratchMemory;
import io.prwrelay.core.wire.TimeSeriesFields;
import io.prwrelay.core.wire.V2ExemplarFields;
import io.prwrelay.core.wire.V2MetadataFields;
import io.prwrelay.core.wire.V2TimeSeriesFields;
import io.prwrelay.core.wire.Varints;
import io.prwrelay.core.wire.WriteRequestFields;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes one slot of {@link V2SeriesRecords} as a PRW 1.0 {@code WriteRequest}: the conversion for
 * downstreams that accept only 1.0. The mapping is the one Prometheus' and Cortex's receivers apply
 * when they turn a 2.0 request into their 1.0 model:
 *
 * <pre>
 * v2 TimeSeries                        v1 WriteRequest
 *   labels_refs (pairs)           →    TimeSeries.labels: Label{name, value} resolved from symbols,
 *                                      sorted by name (bytes, unsigned); a removed tenant label left out
 *   samples    (2)                →    TimeSeries.samples (2): Sample has the same layout, copied
 *   histograms (3)                →    TimeSeries.histograms (4): Histogram has the same layout
 *                                      field by field (count_int/float 1/2, sum 3, schema 4,
 *                                      zero_threshold 5, zero_count_int/float 6/7, spans 8/11,
 *                                      deltas 9/12, counts 10/13, reset_hint 14, timestamp 15,
 *                                      custom_values 16), copied
 *   exemplars  (4)                →    TimeSeries.exemplars (3): labels resolved and sorted, value and
 *                                      timestamp (same numbers) and any other field copied
 *   metadata   (5)                →    WriteRequest.metadata (3): MetricMetadata{type, metric_family_name
 *                                      = the series' __name__ value, help, unit}; none when type,
 *                                      help and unit are all empty; one per distinct (type, family,
 *                                      help, unit) in the batch, in order of first appearance
 *   created_timestamp (6), unknown →   dropped: PRW 1.0 has no place for them
 * </pre>
 *
 * Series fields are written in field-number order, so a request written the way protobuf writes one
 * converts to exactly the bytes protobuf would write for the converted request. Metadata are
 * deduplicated by their symbol refs: the specification requires a deduplicated symbols table, so
 * equal refs mean equal strings. Not thread-safe.
 */
final class V1FromV2Writer {
  private static final byte[] METRIC_NAME = "__name__".getBytes(StandardCharsets.US_ASCII);

  private static final int SIZES = 256;
  private static final int REFS = 16;
  private static final int ENTRIES = 16;

  private final V2SeriesRecords records;
  private final ScratchMemory scratch;
  private final TrustedWalker walker = new TrustedWalker();
  private final TrustedWalker inner = new TrustedWalker();

  // Per series and exemplar of the slot sized last: its message's content size.
  private int[] sizes = new int[SIZES];
  private int sizeCount;
  private int[] exemplarRefs = new int[REFS];

  // Metadata of the slot being written, deduplicated through an open-addressing table.
  private int metadataCount;
  private int[] metadataType = new int[ENTRIES];
  private int[] metadataName = new int[ENTRIES];
  private int[] metadataHelp = new int[ENTRIES];
  private int[] metadataUnit = new int[ENTRIES];
  private int[] metadataTable = new int[2 * ENTRIES];
  private int metadataMask;

  /**
   * @param scratch where the per-series, per-exemplar-label and per-metadata arrays grow
   */
  V1FromV2Writer(V2SeriesRecords records, ScratchMemory scratch) {
    this.records = records;
    this.scratch = scratch;
    scratch.register(
        () -> {
          sizes = new int[SIZES];
          exemplarRefs = new int[REFS];
          metadataType = new int[ENTRIES];
          metadataName = new int[ENTRIES];
          metadataHelp = new int[ENTRIES];
          metadataUnit = new int[ENTRIES];
          metadataTable = new int[2 * ENTRIES];
        });
  }

  /**
   * The exact size of slot {@code slot} as a PRW 1.0 {@code WriteRequest}, computed without writing
   * or allocating; {@link #write} of the same slot must follow before another slot is sized. A
   * {@code long}: every reference to a symbol becomes a copy of it, so the result may be many times
   * the request's size (one 1 MiB symbol referenced by 500 series: 500 MiB), beyond what an {@code
   * int} or one buffer holds. The caller compares it with its bound before anything is allocated.
   */
  long size(int slot) {
    V2SeriesRecords r = records;
    SymbolTable symbols = r.symbols;
    sizeCount = 0;
    startMetadata(r.slotMetadata[slot]);
    long total = 0;
    int[] refs = r.refs;
    for (int i = r.head[slot]; i >= 0; i = r.next[i]) {
      prepareLabels(i);
      int at = reserve(1);
      int from = r.refStart[i];
      int to = from + r.refCount[i];
      long content = 0;
      for (int k = from; k < to; k += 2) {
        int label = labelSize(symbols, refs[k], refs[k + 1]);
        content += 1 + Varints.size32(label) + label;
      }
      boolean hasMetadata = false;
      int type = 0;
      int help = 0;
      int unit = 0;
      TrustedWalker w = walker.at(r.array, r.content[i]);
      int end = r.end[i];
      while (w.pos < end) {
        int tag = w.tag();
        w.skip(tag);
        switch (tag) {
          case V2TimeSeriesFields.SAMPLES_TAG:
          case V2TimeSeriesFields.HISTOGRAMS_TAG:
            {
              int length = w.pos - w.body;
              content += 1 + Varints.size32(length) + length;
              break;
            }
          case V2TimeSeriesFields.EXEMPLARS_TAG:
            {
              long c = sizeExemplar(w.body, w.pos);
              content += 1 + Varints.size64(c) + c;
              break;
            }
          case V2TimeSeriesFields.METADATA_TAG:
            {
              // A message field that occurs more than once is merged: the last value wins.
              hasMetadata = true;
              TrustedWalker m = inner.at(r.array, w.body);
              while (m.pos < w.pos) {
                int t = m.tag();
                if (t == V2MetadataFields.TYPE_TAG) {
                  type = (int) m.varint();
                } else if (t == V2MetadataFields.HELP_REF_TAG) {
                  help = (int) m.varint();
                } else if (t == V2MetadataFields.UNIT_REF_TAG) {
                  unit = (int) m.varint();
                } else {
                  m.skip(t);
                }
              }
              break;
            }
          default:
            break;
        }
      }
      if (hasMetadata && (type != 0 || symbols.length(help) != 0 || symbols.length(unit) != 0)) {
        addMetadata(type, metricName(i), help, unit);
      }
      // Truncated only when the slot is too large to be written, and then it is not written.
      sizes[at] = (int) content;
      total += 1 + Varints.size64(content) + content;
    }
    for (int e = 0; e < metadataCount; e++) {
      long m = metadataSize(symbols, e);
      total += 1 + Varints.size64(m) + m;
    }
    return total;
  }

  /**
   * Writes the slot {@link #size} sized last into {@code d} from {@code start}.
   *
   * @param size what {@link #size} returned for the slot, once the caller has checked it against
   *     its bound (at most {@code Integer.MAX_VALUE - 8}); {@code d} has room for it from {@code
   *     start}
   * @return the number of metadata entries written
   */
  int write(int slot, int size, byte[] d, int start) {
    int written = write(slot, d, start) - start;
    if (written != size) {
      throw new IllegalStateException("sized " + size + " bytes, wrote " + written);
    }
    return metadataCount;
  }

  /**
   * Leaves out the removed label pair and sorts the pairs by name, in the record itself (a request
   * is encoded in one format only, so the record is not needed as received afterwards).
   */
  private void prepareLabels(int i) {
    V2SeriesRecords r = records;
    int[] refs = r.refs;
    int from = r.refStart[i];
    if (r.cut[i] >= 0) {
      int at = from + 2 * r.cut[i];
      int to = from + r.refCount[i];
      // Only the label refs move: this writer never reads the nested refs stored after them.
      System.arraycopy(refs, at + 2, refs, at, to - at - 2);
      r.refCount[i] -= 2;
      r.cut[i] = -1;
    }
    sortPairs(r.symbols, refs, from, from + r.refCount[i]);
  }

  /**
   * Insertion sort of (name, value) pairs by name: stable, and a single pass over labels that are
   * already sorted, as senders must send them.
   */
  private static void sortPairs(SymbolTable symbols, int[] refs, int from, int to) {
    for (int k = from + 2; k < to; k += 2) {
      int name = refs[k];
      if (symbols.compare(refs[k - 2], name) <= 0) {
        continue;
      }
      int value = refs[k + 1];
      int j = k - 2;
      while (j >= from && symbols.compare(refs[j], name) > 0) {
        refs[j + 2] = refs[j];
        refs[j + 3] = refs[j + 1];
        j -= 2;
      }
      refs[j + 2] = name;
      refs[j + 3] = value;
    }
  }

  private static int labelSize(SymbolTable symbols, int name, int value) {
    int n = symbols.length(name);
    int v = symbols.length(value);
    return (n == 0 ? 0 : 1 + Varints.size32(n) + n) + (v == 0 ? 0 : 1 + Varints.size32(v) + v);
  }

  private int reserve(int n) {
    if (sizes.length - sizeCount < n) {
      sizes = scratch.grow(sizes, Math.max(sizes.length * 2, sizeCount + n));
    }
    int at = sizeCount;
    sizeCount += n;
    return at;
  }

  /** Reads an exemplar's label refs into {@link #exemplarRefs}, sorted; returns their count. */
  private int exemplarLabels(int from, int to) {
    int n = 0;
    TrustedWalker e = inner.at(records.array, from);
    while (e.pos < to) {
      int t = e.tag();
      if (t == V2ExemplarFields.LABELS_REFS_TAG) {
        int fieldEnd = (int) e.varint() + e.pos;
        while (e.pos < fieldEnd) {
          n = addExemplarRef(n, (int) e.varint());
        }
      } else if (t == V2ExemplarFields.LABELS_REF_UNPACKED_TAG) {
        n = addExemplarRef(n, (int) e.varint());
      } else {
        e.skip(t);
      }
    }
    sortPairs(records.symbols, exemplarRefs, 0, n);
    return n;
  }

  private int addExemplarRef(int n, int ref) {
    if (n == exemplarRefs.length) {
      exemplarRefs = scratch.grow(exemplarRefs, n * 2);
    }
    exemplarRefs[n] = ref;
    return n + 1;
  }

  private long sizeExemplar(int from, int to) {
    int at = reserve(1);
    SymbolTable symbols = records.symbols;
    int n = exemplarLabels(from, to);
    long c = 0;
    for (int k = 0; k < n; k += 2) {
      int label = labelSize(symbols, exemplarRefs[k], exemplarRefs[k + 1]);
      c += 1 + Varints.size32(label) + label;
    }
    TrustedWalker e = inner.at(records.array, from);
    while (e.pos < to) {
      int fieldStart = e.pos;
      int t = e.tag();
      e.skip(t);
      if (t != V2ExemplarFields.LABELS_REFS_TAG && t != V2ExemplarFields.LABELS_REF_UNPACKED_TAG) {
        c += e.pos - fieldStart;
      }
    }
    sizes[at] = (int) c; // as in size(): truncated only for a slot that is not written
    return c;
  }

  /** Value ref of the series' {@code __name__} label, or -1. */
  private int metricName(int i) {
    V2SeriesRecords r = records;
    SymbolTable symbols = r.symbols;
    int[] refs = r.refs;
    int from = r.refStart[i];
    int to = from + r.refCount[i];
    for (int k = from; k < to; k += 2) {
      if (symbols.contentEquals(refs[k], METRIC_NAME)) {
        return refs[k + 1];
      }
    }
    return -1;
  }

  private void startMetadata(int expected) {
    metadataCount = 0;
    // A power of two at least twice the entries there can be: a load factor of at most 1/2.
    int capacity = Integer.highestOneBit(Math.max(8, expected) * 2 - 1) << 1;
    if (metadataTable.length < capacity) {
      metadataTable = scratch.replace(metadataTable, capacity);
    } else {
      Arrays.fill(metadataTable, 0, capacity, 0);
    }
    metadataMask = capacity - 1;
  }

  private void addMetadata(int type, int name, int help, int unit) {
    int hash = ((type * 31 + name) * 31 + help) * 31 + unit;
    hash ^= hash >>> 16;
    int[] table = metadataTable;
    int i = hash & metadataMask;
    while (table[i] != 0) {
      int e = table[i] - 1;
      if (metadataType[e] == type
          && metadataName[e] == name
          && metadataHelp[e] == help
          && metadataUnit[e] == unit) {
        return;
      }
      i = (i + 1) & metadataMask;
    }
    if (metadataCount == metadataType.length) {
      int n = metadataCount * 2;
      scratch.charge(4L * Integer.BYTES * metadataCount);
      metadataType = Arrays.copyOf(metadataType, n);
      metadataName = Arrays.copyOf(metadataName, n);
      metadataHelp = Arrays.copyOf(metadataHelp, n);
      metadataUnit = Arrays.copyOf(metadataUnit, n);
    }
    int e = metadataCount++;
    metadataType[e] = type;
    metadataName[e] = name;
    metadataHelp[e] = help;
    metadataUnit[e] = unit;
    table[i] = e + 1;
  }

  /** A {@code long}: family name, help and unit may be one symbol as long as the request. */
  private long metadataSize(SymbolTable symbols, int e) {
    int type = metadataType[e];
    long size = type == 0 ? 0 : 1 + Varints.size64(type);
    size += stringFieldSize(metadataName[e] < 0 ? 0 : symbols.length(metadataName[e]));
    size += stringFieldSize(symbols.length(metadataHelp[e]));
    size += stringFieldSize(symbols.length(metadataUnit[e]));
    return size;
  }

  private static int stringFieldSize(int length) {
    return length == 0 ? 0 : 1 + Varints.size32(length) + length;
  }

  private int write(int slot, byte[] d, int start) {
    V2SeriesRecords r = records;
    SymbolTable symbols = r.symbols;
    byte[] a = r.array;
    int[] refs = r.refs;
    int q = 0;
    int o = start;
    for (int i = r.head[slot]; i >= 0; i = r.next[i]) {
      d[o++] = (byte) WriteRequestFields.TIMESERIES_TAG;
      o = Varints.put32(d, o, sizes[q++]);
      int from = r.refStart[i];
      int to = from + r.refCount[i];
      for (int k = from; k < to; k += 2) {
        o = writeLabel(symbols, a, refs[k], refs[k + 1], TimeSeriesFields.LABELS_TAG, d, o);
      }
      int content = r.content[i];
      int end = r.end[i];
      o =
          copyBodies(
              content, end, V2TimeSeriesFields.SAMPLES_TAG, TimeSeriesFields.SAMPLES_TAG, d, o);
      if (r.exemplars[i] > 0) {
        TrustedWalker w = walker.at(a, content);
        while (w.pos < end) {
          int tag = w.tag();
          w.skip(tag);
          if (tag == V2TimeSeriesFields.EXEMPLARS_TAG) {
            d[o++] = (byte) TimeSeriesFields.EXEMPLARS_TAG;
            o = Varints.put32(d, o, sizes[q++]);
            o = writeExemplar(symbols, w.body, w.pos, d, o);
          }
        }
      }
      if (r.histograms[i] > 0) {
        o =
            copyBodies(
                content,
                end,
                V2TimeSeriesFields.HISTOGRAMS_TAG,
                TimeSeriesFields.HISTOGRAMS_TAG,
                d,
                o);
      }
    }
    for (int e = 0; e < metadataCount; e++) {
      d[o++] = (byte) WriteRequestFields.METADATA_TAG;
      o = Varints.put32(d, o, (int) metadataSize(symbols, e));
      int type = metadataType[e];
      if (type != 0) {
        d[o++] = (byte) MetricMetadataFields.TYPE_TAG;
        o = Varints.put64(d, o, type);
      }
      if (metadataName[e] >= 0) {
        o =
            writeString(
                symbols, a, metadataName[e], MetricMetadataFields.METRIC_FAMILY_NAME_TAG, d, o);
      }
      o = writeString(symbols, a, metadataHelp[e], MetricMetadataFields.HELP_TAG, d, o);
      o = writeString(symbols, a, metadataUnit[e], MetricMetadataFields.UNIT_TAG, d, o);
    }
    return o;
  }

  /** Copies the content of every {@code fromTag} field of a series under {@code toTag}. */
  private int copyBodies(int content, int end, int fromTag, int toTag, byte[] d, int o) {
    byte[] a = records.array;
    TrustedWalker w = walker.at(a, content);
    while (w.pos < end) {
      int tag = w.tag();
      w.skip(tag);
      if (tag == fromTag) {
        int length = w.pos - w.body;
        d[o++] = (byte) toTag;
        o = Varints.put32(d, o, length);
        System.arraycopy(a, w.body, d, o, length);
        o += length;
      }
    }
    return o;
  }

  private int writeExemplar(SymbolTable symbols, int from, int to, byte[] d, int o) {
    byte[] a = records.array;
    int n = exemplarLabels(from, to);
    for (int k = 0; k < n; k += 2) {
      o =
          writeLabel(
              symbols, a, exemplarRefs[k], exemplarRefs[k + 1], ExemplarFields.LABELS_TAG, d, o);
    }
    // The exemplar's other fields (value, timestamp) are the same in both versions.
    return inner
        .at(a, from)
        .copyFieldsExcept(
            to, V2ExemplarFields.LABELS_REFS_TAG, V2ExemplarFields.LABELS_REF_UNPACKED_TAG, d, o);
  }

  private static int writeLabel(
      SymbolTable symbols, byte[] a, int name, int value, int tag, byte[] d, int o) {
    d[o++] = (byte) tag;
    o = Varints.put32(d, o, labelSize(symbols, name, value));
    o = writeString(symbols, a, name, LabelFields.NAME_TAG, d, o);
    return writeString(symbols, a, value, LabelFields.VALUE_TAG, d, o);
  }

  /** Writes symbol {@code ref} as a string field, or nothing when it is empty (as proto3 does). */
  private static int writeString(SymbolTable symbols, byte[] a, int ref, int tag, byte[] d, int o) {
    int length = symbols.length(ref);
    if (length == 0) {
      return o;
    }
    d[o++] = (byte) tag;
    o = Varints.put32(d, o, length);
    System.arraycopy(a, symbols.offset(ref), d, o, length);
    return o + length;
  }
}
