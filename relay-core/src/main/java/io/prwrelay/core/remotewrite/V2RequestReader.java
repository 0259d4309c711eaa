package io.prwrelay.core.remotewrite;

import io.prwrelay.core.wire.ScratchMemory;
import io.prwrelay.core.wire.V2ExemplarFields;
import io.prwrelay.core.wire.V2MetadataFields;
import io.prwrelay.core.wire.V2RequestFields;
import io.prwrelay.core.wire.V2TimeSeriesFields;
import io.prwrelay.core.wire.WireTags;
import io.prwrelay.core.wire.WriteRequestFields;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Lazy reader and validator of a decompressed PRW 2.0 {@code io.prometheus.write.v2.Request}.
 *
 * <p>Two passes over the request. The first walks only the top-level fields: it records where each
 * symbol's bytes are (a {@link SymbolTable} of offsets and lengths, no {@code String}) and where
 * each series is. Symbols may follow the series that reference them in the byte stream (protobuf
 * allows any field order), and this pass is what makes that work: no series is read before the
 * whole table is known. Between the passes every symbol is compared once, in place, with the
 * configured tenant label names, so resolving a series' tenant costs an array lookup per label.
 *
 * <p>The second pass reads each series: its {@code labels_refs} (packed, as protobuf writes them,
 * or unpacked, as parsers must also accept) are decoded and checked; exemplars are read for their
 * {@code labels_refs} and metadata for {@code help_ref} and {@code unit_ref}, which are checked
 * too; samples and histograms are counted from their tags and skipped by length; unknown fields
 * (such as {@code created_timestamp}, field 6, of senders before Prometheus 3.10) are skipped and
 * stay in the series' byte range. The tenant is the value of the first configured tenant label, in
 * the configured priority, present with a non-empty value.
 *
 * <p>Everything a later step relies on is validated here, so encoders can walk the bytes without
 * checks. A problem stops reading and is returned as a {@link RequestError} naming the field (e.g.
 * {@code timeseries[3].labels_refs[4]}) and byte offset:
 *
 * <ul>
 *   <li>a ref not below the number of symbols (series labels, exemplar labels, metadata help and
 *       unit);
 *   <li>an odd number of label refs in a series or an exemplar (pairs must be complete);
 *   <li>an empty symbols table in a request with series, or a first symbol that is not the empty
 *       string (the specification requires {@code symbols[0] == ""});
 *   <li>truncated or malformed varints, lengths past the end of the enclosing message, a known
 *       field with the wrong wire type, invalid tags, groups nested deeper than {@value
 *       #MAX_GROUP_DEPTH}.
 * </ul>
 *
 * <p>Nothing outside {@code [offset, offset + length)} is read and no exception escapes. Scratch
 * arrays grow to the largest request seen; after that a read allocates nothing. An instance is a
 * reusable flyweight and not thread-safe: use one per thread.
 */
public final class V2RequestReader {
  /** Deepest nesting of (deprecated) groups accepted inside unknown fields. */
  public static final int MAX_GROUP_DEPTH = 32;

  private static final int START_GROUP = 3;
  private static final int END_GROUP = 4;

  private final byte[][] tenantLabels;
  private final ScratchMemory scratch;
  private final SymbolTable symbols;
  private final V2SeriesView series = new V2SeriesView();

  private int seriesCount;
  private int otherFields;

  /**
   * The first byte of the last request's first top-level field that is a field of a Remote Write
   * 1.0 request ({@code timeseries} 1, {@code metadata} 3, length-delimited), or -1 for none.
   */
  private int v1FieldAt;

  private int[] seriesStart = new int[64];
  private int[] seriesContent = new int[64];
  private int[] seriesEnd = new int[64];
  // Per symbol: position of the tenant label it names, or tenantLabels.length.
  private int[] priority = new int[256];
  private int[] refs = new int[64];
  // Refs of the series' exemplars and metadata, in field order.
  private int[] nested = new int[16];

  /** Puts the arrays back to their initial sizes ({@link ScratchMemory#finish()}). */
  private void trim() {
    seriesStart = new int[64];
    seriesContent = new int[64];
    seriesEnd = new int[64];
    priority = new int[256];
    refs = new int[64];
    nested = new int[16];
  }

  private int nestedCount;

  // The read position (an array index), the request bounds, and where reading is, kept only to
  // name the field in an error: plain int writes on the hot path.
  private int pos;
  private int base;
  private int end;
  private int where;
  private int seriesIndex;
  private int itemIndex;
  private int refIndex;

  /**
   * What a body with no symbols and no series but the fields of a Remote Write 1.0 request is
   * answered: read as PRW 2.0 it would be a valid, empty request, acknowledged while every series
   * in it is lost.
   */
  static final String V1_BODY_AS_V2 =
      "no symbols (field 4) or timeseries (field 5), but a field of a Remote Write 1.0 request"
          + " (timeseries 1, metadata 3): the body is a PRW 1.0 request sent as PRW 2.0; send it with"
          + " Content-Type application/x-protobuf (or proto=prometheus.WriteRequest)";

  private static final int AT_REQUEST = 0;
  private static final int AT_SYMBOLS = 1;
  private static final int AT_SYMBOL = 2;
  private static final int AT_SERIES = 3;
  private static final int AT_SERIES_FIELD = 4;
  private static final int AT_LABELS_REFS = 5;
  private static final int AT_EXEMPLAR = 6;
  private static final int AT_EXEMPLAR_REFS = 7;
  private static final int AT_METADATA = 8;
  private static final int AT_HELP_REF = 9;
  private static final int AT_UNIT_REF = 10;

  /**
   * @param tenantLabels label names in priority order: the first one present in a series (with a
   *     non-empty value) resolves its tenant, whatever the labels' order in the series. May be
   *     empty when the caller does not route (then no series has a tenant label).
   */
  public V2RequestReader(List<String> tenantLabels) {
    this(tenantLabels, new ScratchMemory());
  }

  /**
   * @param tenantLabels as above
   * @param scratch where the reader's arrays (series bounds, refs, the symbols table) grow
   */
  public V2RequestReader(List<String> tenantLabels, ScratchMemory scratch) {
    this.scratch = scratch;
    this.symbols = new SymbolTable(scratch);
    scratch.register(this::trim);
    this.tenantLabels = new byte[tenantLabels.size()][];
    for (int i = 0; i < tenantLabels.size(); i++) {
      this.tenantLabels[i] = tenantLabels.get(i).getBytes(StandardCharsets.UTF_8);
    }
  }

  /**
   * Top-level fields of the last request read other than symbols and series (fields PRW 2.0 does
   * not define, skipped): a request with any is never forwarded as it came, since a downstream may
   * give such a field a meaning.
   */
  public int otherFields() {
    return otherFields;
  }

  /**
   * The symbols table of the last request read: valid after {@link #read} (also after an error in
   * the series, once the table was complete) until the next {@code read}.
   */
  public SymbolTable symbols() {
    return symbols;
  }

  /**
   * Reads one request and reports every series to {@code visitor}, in request order.
   *
   * @param array borrowed; holds the decompressed request
   * @param offset index of the request's first byte
   * @param length request length in bytes
   * @return {@code null} when the whole request was read (or the visitor stopped), otherwise what
   *     was wrong; series reported before an error were valid
   */
  public RequestError read(byte[] array, int offset, int length, V2RequestVisitor visitor) {
    if (offset < 0 || length < 0 || offset > array.length - length) {
      throw new IndexOutOfBoundsException("offset " + offset + ", length " + length);
    }
    base = offset;
    end = offset + length;
    seriesIndex = -1;
    refIndex = -1;
    symbols.reset(array);
    seriesCount = 0;
    otherFields = 0;
    v1FieldAt = -1;
    try {
      frame(array);
      if (seriesCount == 0 && symbols.count() == 0 && v1FieldAt >= 0) {
        pos = v1FieldAt;
        where = AT_REQUEST;
        throw failure(v1FieldAt, V1_BODY_AS_V2);
      }
      checkSymbols();
      prioritize(array);
      for (int i = 0; i < seriesCount; i++) {
        if (!readSeries(array, i, visitor)) {
          return null;
        }
      }
      return null;
    } catch (ReadFailure failure) {
      return failure.error;
    }
  }

  /** First pass: symbol offsets and series bounds, from the top-level fields only. */
  private void frame(byte[] a) {
    pos = base;
    while (pos < end) {
      where = AT_REQUEST;
      int fieldStart = pos;
      int tag = readTag(a, end);
      if (tag == V2RequestFields.SYMBOLS_TAG) {
        where = AT_SYMBOL;
        itemIndex = symbols.count();
        int len = readLength(a, end);
        symbols.add(pos, len);
        pos += len;
      } else if (tag == V2RequestFields.TIMESERIES_TAG) {
        where = AT_SERIES;
        seriesIndex = seriesCount;
        int len = readLength(a, end);
        addSeries(fieldStart, pos, pos + len);
        pos += len;
      } else {
        int f = WireTags.fieldNumber(tag);
        if (f == V2RequestFields.SYMBOLS || f == V2RequestFields.TIMESERIES) {
          throw wrongWireType(tag, "length-delimited");
        }
        if (v1FieldAt < 0
            && (tag == WriteRequestFields.TIMESERIES_TAG
                || tag == WriteRequestFields.METADATA_TAG)) {
          v1FieldAt = fieldStart;
        }
        skipField(a, tag, end);
        otherFields++;
      }
    }
  }

  private void addSeries(int start, int content, int seriesEnd) {
    if (seriesCount == seriesStart.length) {
      int n = seriesCount * 2;
      scratch.charge(3L * Integer.BYTES * (n - seriesCount));
      seriesStart = Arrays.copyOf(seriesStart, n);
      seriesContent = Arrays.copyOf(seriesContent, n);
      this.seriesEnd = Arrays.copyOf(this.seriesEnd, n);
    }
    seriesStart[seriesCount] = start;
    seriesContent[seriesCount] = content;
    this.seriesEnd[seriesCount] = seriesEnd;
    seriesCount++;
  }

  private void checkSymbols() {
    if (symbols.count() == 0) {
      if (seriesCount > 0) {
        where = AT_SYMBOLS;
        throw failure(
            seriesStart[0],
            "the symbols table is empty but the request has "
                + seriesCount
                + " timeseries: symbols[0] must be the empty string and every ref must index the"
                + " table");
      }
      return;
    }
    if (symbols.length(0) != 0) {
      where = AT_SYMBOL;
      itemIndex = 0;
      throw failure(
          symbols.offset(0),
          "the first symbol must be the empty string, not a " + symbols.length(0) + "-byte string");
    }
  }

  /** Compares every symbol once with the tenant label names. */
  private void prioritize(byte[] a) {
    int n = symbols.count();
    if (priority.length < n) {
      priority = scratch.replace(priority, Math.max(n, priority.length * 2));
    }
    byte[][] names = tenantLabels;
    int none = names.length;
    int[] pr = priority;
    for (int r = 0; r < n; r++) {
      int off = symbols.offset(r);
      int len = symbols.length(r);
      int p = none;
      for (int i = 0; i < none; i++) {
        if (Bytes.equalsAt(a, off, len, names[i])) {
          p = i;
          break;
        }
      }
      pr[r] = p;
    }
  }

  /** Second pass over one series: refs decoded and checked, other fields counted or validated. */
  private boolean readSeries(byte[] a, int i, V2RequestVisitor visitor) {
    seriesIndex = i;
    int content = seriesContent[i];
    int limit = seriesEnd[i];
    V2SeriesView s = series;
    s.reset(a, symbols, i, seriesStart[i], content, limit);
    int count = symbols.count();
    int[] r = refs;
    int n = 0;
    nestedCount = 0;
    pos = content;
    while (pos < limit) {
      where = AT_SERIES_FIELD;
      int tag = readTag(a, limit);
      switch (tag) {
        case V2TimeSeriesFields.LABELS_REFS_TAG:
          {
            where = AT_LABELS_REFS;
            refIndex = n;
            int len = readLength(a, limit);
            int fieldEnd = pos + len;
            // Every ref takes at least one byte.
            if (r.length - n < len) {
              r = refs = scratch.grow(r, Math.max(r.length * 2, n + len));
            }
            // One- and two-byte refs (tables of up to 16384 symbols) without leaving the loop.
            int p = pos;
            while (p < fieldEnd) {
              int at = p;
              int b = a[p];
              int ref;
              if (b >= 0) {
                ref = b;
                p++;
              } else if (p + 1 < fieldEnd && a[p + 1] >= 0) {
                ref = (b & 0x7F) | (a[p + 1] << 7);
                p += 2;
              } else {
                pos = p;
                refIndex = n;
                long wide = readVarint(a, fieldEnd);
                if (wide >= count || wide < 0) {
                  throw outOfRange(at, wide, count);
                }
                ref = (int) wide;
                p = pos;
              }
              if (ref >= count) {
                refIndex = n;
                throw outOfRange(at, ref, count);
              }
              r[n++] = ref;
            }
            pos = p;
            break;
          }
        case V2TimeSeriesFields.LABELS_REF_UNPACKED_TAG:
          {
            where = AT_LABELS_REFS;
            refIndex = n;
            int at = pos;
            long ref = readVarint(a, limit);
            if (ref >= count || ref < 0) {
              throw outOfRange(at, ref, count);
            }
            if (n == r.length) {
              r = refs = scratch.grow(r, n * 2);
            }
            r[n++] = (int) ref;
            break;
          }
        case V2TimeSeriesFields.SAMPLES_TAG:
          s.samples++;
          skipBody(a, limit);
          break;
        case V2TimeSeriesFields.HISTOGRAMS_TAG:
          s.histograms++;
          skipBody(a, limit);
          break;
        case V2TimeSeriesFields.EXEMPLARS_TAG:
          where = AT_EXEMPLAR;
          itemIndex = s.exemplars++;
          readExemplar(a, limit, count);
          break;
        case V2TimeSeriesFields.METADATA_TAG:
          where = AT_METADATA;
          s.metadata++;
          readMetadata(a, limit, count);
          break;
        default:
          {
            int f = WireTags.fieldNumber(tag);
            if (f == V2TimeSeriesFields.LABELS_REFS) {
              throw wrongWireType(tag, "length-delimited (packed) or varint");
            }
            if (f > V2TimeSeriesFields.LABELS_REFS && f <= V2TimeSeriesFields.METADATA) {
              throw wrongWireType(tag, "length-delimited");
            }
            skipField(a, tag, limit);
          }
      }
    }
    if ((n & 1) != 0) {
      where = AT_LABELS_REFS;
      refIndex = -1;
      throw failure(
          content, "holds " + n + " refs, an odd number: name and value refs come in pairs");
    }
    int[] pr = priority;
    int best = tenantLabels.length;
    for (int k = 0; k < n && best > 0; k += 2) {
      int p = pr[r[k]];
      if (p < best && symbols.length(r[k + 1]) != 0) {
        best = p;
        s.tenantPair = k >> 1;
        s.valueRef = r[k + 1];
      }
    }
    s.tenantLabel = best == tenantLabels.length ? V2SeriesView.NO_TENANT_LABEL : best;
    s.refs = r;
    s.refCount = n;
    s.nested = nested;
    s.nestedCount = nestedCount;
    return visitor.onSeries(s);
  }

  private void readExemplar(byte[] a, int limit, int count) {
    int len = readLength(a, limit);
    int contentStart = pos;
    int exemplarEnd = pos + len;
    int m = 0;
    while (pos < exemplarEnd) {
      where = AT_EXEMPLAR;
      int tag = readTag(a, exemplarEnd);
      if (tag == V2ExemplarFields.LABELS_REFS_TAG) {
        where = AT_EXEMPLAR_REFS;
        refIndex = m;
        int fieldLength = readLength(a, exemplarEnd);
        int fieldEnd = pos + fieldLength;
        while (pos < fieldEnd) {
          refIndex = m;
          int at = pos;
          long ref = readVarint(a, fieldEnd);
          if (ref >= count || ref < 0) {
            throw outOfRange(at, ref, count);
          }
          addNested((int) ref);
          m++;
        }
      } else if (tag == V2ExemplarFields.LABELS_REF_UNPACKED_TAG) {
        where = AT_EXEMPLAR_REFS;
        refIndex = m;
        int at = pos;
        long ref = readVarint(a, exemplarEnd);
        if (ref >= count || ref < 0) {
          throw outOfRange(at, ref, count);
        }
        addNested((int) ref);
        m++;
      } else {
        if (WireTags.fieldNumber(tag) == V2ExemplarFields.LABELS_REFS) {
          throw wrongWireType(tag, "length-delimited (packed) or varint");
        }
        skipField(a, tag, exemplarEnd);
      }
    }
    if ((m & 1) != 0) {
      where = AT_EXEMPLAR_REFS;
      refIndex = -1;
      throw failure(
          contentStart, "holds " + m + " refs, an odd number: name and value refs come in pairs");
    }
  }

  private void readMetadata(byte[] a, int limit, int count) {
    int len = readLength(a, limit);
    int metadataEnd = pos + len;
    while (pos < metadataEnd) {
      where = AT_METADATA;
      int tag = readTag(a, metadataEnd);
      if (tag == V2MetadataFields.HELP_REF_TAG || tag == V2MetadataFields.UNIT_REF_TAG) {
        where = tag == V2MetadataFields.HELP_REF_TAG ? AT_HELP_REF : AT_UNIT_REF;
        int at = pos;
        long ref = readVarint(a, metadataEnd);
        if (ref >= count || ref < 0) {
          throw outOfRange(at, ref, count);
        }
        addNested((int) ref);
      } else {
        int f = WireTags.fieldNumber(tag);
        if (f == V2MetadataFields.HELP_REF || f == V2MetadataFields.UNIT_REF) {
          throw wrongWireType(tag, "varint");
        }
        skipField(a, tag, metadataEnd);
      }
    }
  }

  private void addNested(int ref) {
    if (nestedCount == nested.length) {
      nested = scratch.grow(nested, nestedCount * 2);
    }
    nested[nestedCount++] = ref;
  }

  /** Reads a tag, rejecting field number 0, tags over 32 bits and wire types 6 and 7. */
  private int readTag(byte[] a, int limit) {
    int at = pos;
    long t;
    int b = a[at];
    if (b >= 0) {
      t = b;
      pos = at + 1;
    } else {
      t = readVarint(a, limit);
    }
    if ((t >>> 32) != 0 || (t >>> 3) == 0) {
      throw failure(at, "invalid tag " + Long.toUnsignedString(t) + ": no field number");
    }
    int wireType = (int) t & 7;
    if (wireType > WireTags.FIXED32) {
      throw failure(at, "invalid wire type " + wireType);
    }
    return (int) t;
  }

  /** Reads a varint of at most ten bytes that must end before {@code limit}. */
  private long readVarint(byte[] a, int limit) {
    int at = pos;
    long result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= limit) {
        throw failure(pos, truncated(limit));
      }
      int b = a[pos++];
      result |= (long) (b & 0x7F) << shift;
      if (b >= 0) {
        return result;
      }
    }
    throw failure(at, "malformed varint");
  }

  /**
   * Reads a length prefix and checks it against {@code limit}, the end of the enclosing message.
   */
  private int readLength(byte[] a, int limit) {
    int at = pos;
    long length;
    if (at < limit && a[at] >= 0) {
      length = a[at];
      pos = at + 1;
    } else {
      length = readVarint(a, limit);
    }
    int left = limit - pos;
    if (length < 0 || length > left) {
      throw failure(
          at, "length " + Long.toUnsignedString(length) + " exceeds the " + left + " bytes left");
    }
    return (int) length;
  }

  /** Skips a field whose tag was read; groups are walked iteratively with a depth bound. */
  private void skipField(byte[] a, int tag, int limit) {
    switch (WireTags.wireType(tag)) {
      case WireTags.VARINT:
        readVarint(a, limit);
        return;
      case WireTags.FIXED64:
        skipFixed(8, limit);
        return;
      case WireTags.LENGTH_DELIMITED:
        skipBody(a, limit);
        return;
      case WireTags.FIXED32:
        skipFixed(4, limit);
        return;
      case START_GROUP:
        skipGroup(a, limit);
        return;
      default:
        throw failure(pos, "unexpected end-group tag");
    }
  }

  /** Skips a length-delimited field's length and content. */
  private void skipBody(byte[] a, int limit) {
    int length = readLength(a, limit);
    pos += length;
  }

  private void skipFixed(int bytes, int limit) {
    if (limit - pos < bytes) {
      throw failure(limit, truncated(limit));
    }
    pos += bytes;
  }

  private void skipGroup(byte[] a, int limit) {
    int depth = 1;
    while (depth > 0) {
      if (pos >= limit) {
        throw failure(pos, "unterminated group");
      }
      int t = readTag(a, limit);
      int wireType = WireTags.wireType(t);
      if (wireType == START_GROUP) {
        if (++depth > MAX_GROUP_DEPTH) {
          throw failure(pos, "groups nested deeper than " + MAX_GROUP_DEPTH);
        }
      } else if (wireType == END_GROUP) {
        depth--;
      } else {
        skipField(a, t, limit);
      }
    }
  }

  private String truncated(int limit) {
    return limit == end
        ? "truncated: the input ended in the middle of a field"
        : "truncated: a field runs past the end of the message holding it";
  }

  private ReadFailure outOfRange(int at, long ref, int count) {
    return failure(
        at,
        "ref "
            + Long.toUnsignedString(ref)
            + " is out of range: the symbols table has "
            + count
            + (count == 1 ? " symbol" : " symbols"));
  }

  private ReadFailure wrongWireType(int tag, String expected) {
    return failure(
        pos,
        "field "
            + WireTags.fieldNumber(tag)
            + " has wire type "
            + WireTags.wireTypeName(WireTags.wireType(tag))
            + ", expected "
            + expected);
  }

  private ReadFailure failure(int index, String problem) {
    return new ReadFailure(
        new RequestError(RequestError.Kind.MALFORMED, fieldPath(), index - base, problem));
  }

  private String fieldPath() {
    String s = "timeseries[" + seriesIndex + "]";
    String ref = refIndex >= 0 ? "[" + refIndex + "]" : "";
    switch (where) {
      case AT_SYMBOLS:
        return "symbols";
      case AT_SYMBOL:
        return "symbols[" + itemIndex + "]";
      case AT_SERIES:
        return s;
      case AT_SERIES_FIELD:
        return s + " field";
      case AT_LABELS_REFS:
        return s + ".labels_refs" + ref;
      case AT_EXEMPLAR:
        return s + ".exemplars[" + itemIndex + "]";
      case AT_EXEMPLAR_REFS:
        return s + ".exemplars[" + itemIndex + "].labels_refs" + ref;
      case AT_METADATA:
        return s + ".metadata";
      case AT_HELP_REF:
        return s + ".metadata.help_ref";
      case AT_UNIT_REF:
        return s + ".metadata.unit_ref";
      default:
        return "Request";
    }
  }

  /** Carries an error out of nested reading; never escapes {@link #read}. */
  private static final class ReadFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient RequestError error;

    ReadFailure(RequestError error) {
      super(error.problem(), null, false, false);
      this.error = error;
    }
  }
}
