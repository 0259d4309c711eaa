package io.prwrelay.core.remotewrite;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.prwrelay.core.wire.LabelFields;
import io.prwrelay.core.wire.TimeSeriesFields;
import io.prwrelay.core.wire.V2RequestFields;
import io.prwrelay.core.wire.WireTags;
import io.prwrelay.core.wire.WriteRequestFields;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Lazy reader of a decompressed PRW 1.0 {@code WriteRequest}.
 *
 * <p>For each {@code timeseries} field it reads only the {@code labels}, and only until the tenant
 * is resolved: once the highest-priority tenant label has been seen, the rest of the series is
 * skipped by its length (or, for a reader that counts, every later field is counted from its tag
 * and skipped by its own length). Samples, exemplars and histograms are never decoded. Unknown
 * fields are skipped (and, inside a series, kept in the series' byte range). Label names and values
 * are compared in place in the request array: no {@code String} and no {@code byte[]} is created
 * per series or per label.
 *
 * <p>Two paths read the same bytes with the same checks. A fast scan over local variables handles
 * what senders send: series fields with a one-byte tag and a length of at most three bytes, and
 * inside them one-byte tags, lengths of at most two bytes and labels as name then value. At the
 * first field it does not handle in full, a {@link CodedInputStream} over the request (created on
 * first need, the only allocation of a {@link #read}: none when the fast scan reads it all) takes
 * over from that byte and reads or reports it, then hands back. Both paths produce the same result
 * (the property and malformed-input tests run both).
 *
 * <p>What is validated: the request's framing (every top-level field's tag, wire type and length,
 * groups nested at most {@value #MAX_GROUP_DEPTH} deep), each series' length against the request,
 * and inside a series every field up to the label that decides its tenant (labels must have a name;
 * known fields must have their wire type; lengths must stay inside the series). What follows that
 * label inside the series (later labels, samples, exemplars, histograms) is forwarded as received
 * and left to the downstream, which parses it whole (docs/ARCHITECTURE.md#the-data-path); a reader
 * that counts walks those fields too and so also reports a malformed field framing there. A series
 * without the highest-priority tenant label is always read whole. Malformed input stops reading and
 * is returned as a {@link RequestError} naming the field and byte offset; no exception escapes and
 * nothing outside {@code [offset, offset + length)} is read.
 *
 * <p>An instance is a reusable flyweight and not thread-safe: use one per thread.
 */
public final class WriteRequestReader {
  /** Deepest nesting of (deprecated) groups accepted inside unknown fields. */
  public static final int MAX_GROUP_DEPTH = 32;

  private static final int START_GROUP = 3;
  private static final int END_GROUP = 4;

  private final byte[][] tenantLabels;
  private final int[] tenantLengths;
  // The highest-priority tenant label's name as its length and first and last 8 bytes (when it has
  // 8 to 16), compared inline: most label names differ from it in length, and the one that matches
  // is then two loads, where the general compare was a call per label that the JIT did not inline.
  private final int firstLength;
  private final long firstHead;
  private final long firstTail;
  private final boolean counting;
  private final boolean walkLabels;
  private final SeriesView series = new SeriesView();
  // The stream of the request being read, once a field needed it; null between reads.
  private CodedInputStream stream;

  // Where reading is, kept only to name the field in an error; plain int writes on the hot path.
  private int seriesIndex;
  private int otherFields;

  /**
   * The first byte of the last request's first top-level field that is a field of a Remote Write
   * 2.0 request ({@code symbols} 4, {@code timeseries} 5, length-delimited), or -1 for none.
   */
  private int v2FieldAt;

  /** Whether the last request held a {@code metadata} field. */
  private boolean sawMetadata;

  private int labelIndex;
  private int where;

  /**
   * What a body with no series and no metadata but the fields of a Remote Write 2.0 request is
   * answered: read as PRW 1.0 it would be a valid, empty request, acknowledged while every series
   * in it is lost. A proxy that drops the {@code proto} parameter of the content type sends such
   * bodies.
   */
  static final String V2_BODY_AS_V1 =
      "no timeseries (field 1) or metadata (field 3), but a field of a Remote Write 2.0 request"
          + " (symbols 4, timeseries 5): the body is a PRW 2.0 request sent as PRW 1.0; send it with"
          + " Content-Type application/x-protobuf;proto=io.prometheus.write.v2.Request";

  private static final int AT_REQUEST = 0;
  private static final int AT_SERIES = 1;
  private static final int AT_LABEL = 2;
  private static final int AT_LABEL_NAME = 3;
  private static final int AT_LABEL_VALUE = 4;
  private static final int AT_METADATA = 5;
  private static final int AT_SERIES_FIELD = 6;

  /**
   * @param tenantLabels label names in priority order: the first one present in a series (with a
   *     non-empty value) resolves its tenant, whatever the labels' order in the series
   * @param countSamples whether to count each series' samples, exemplars and histograms (which
   *     means walking all of its fields); otherwise {@link SeriesView#samples()} and the other
   *     counts stay 0 and a series is left at its highest-priority tenant label
   */
  public WriteRequestReader(List<String> tenantLabels, boolean countSamples) {
    this(tenantLabels, countSamples, false);
  }

  /**
   * @param tenantLabels label names in priority order, as above
   * @param countSamples whether to count each series' samples, exemplars and histograms, as above
   * @param walkLabels whether to go on past the tenant label to the end of the series' leading run
   *     of labels, by tag and length only, and report where it ends ({@link
   *     SeriesView#labelsEnd()}): what a {@link LabelSetHasher} needs, found in the same pass
   */
  public WriteRequestReader(List<String> tenantLabels, boolean countSamples, boolean walkLabels) {
    if (tenantLabels.isEmpty()) {
      throw new IllegalArgumentException("at least one tenant label is required");
    }
    this.tenantLabels = new byte[tenantLabels.size()][];
    this.tenantLengths = new int[tenantLabels.size()];
    for (int i = 0; i < tenantLabels.size(); i++) {
      this.tenantLabels[i] = tenantLabels.get(i).getBytes(StandardCharsets.UTF_8);
      this.tenantLengths[i] = this.tenantLabels[i].length;
    }
    byte[] first = this.tenantLabels[0];
    this.firstLength = first.length;
    boolean words = first.length >= 8 && first.length <= 16;
    this.firstHead = words ? Bytes.long8(first, 0) : 0;
    this.firstTail = words ? Bytes.long8(first, first.length - 8) : 0;
    this.counting = countSamples;
    this.walkLabels = walkLabels;
  }

  /**
   * Top-level fields of the last request read that are neither series nor metadata (fields PRW 1.0
   * does not define, skipped): a request with any is never forwarded as it came, since a downstream
   * may give such a field a meaning (Cortex's field 1000 skips label name validation).
   */
  public int otherFields() {
    return otherFields;
  }

  /**
   * Reads one request and reports every series and metadata field to {@code visitor}, in order.
   *
   * @param array borrowed; holds the decompressed request
   * @param offset index of the request's first byte
   * @param length request length in bytes
   * @return {@code null} when the whole request was read (or the visitor stopped), otherwise what
   *     was wrong
   */
  public RequestError read(byte[] array, int offset, int length, WriteRequestVisitor visitor) {
    if (offset < 0 || length < 0 || offset > array.length - length) {
      throw new IndexOutOfBoundsException("offset " + offset + ", length " + length);
    }
    seriesIndex = -1;
    labelIndex = -1;
    otherFields = 0;
    v2FieldAt = -1;
    sawMetadata = false;
    where = AT_REQUEST;
    int end = offset + length;
    int pos = offset;
    stream = null;
    try {
      while (pos < end) {
        // Fast path: a series field with a one-byte tag and a length of one to three bytes.
        if (array[pos] == WriteRequestFields.TIMESERIES_TAG && pos + 1 < end) {
          int len = array[pos + 1];
          int content = pos + 2;
          if (len < 0) {
            len = -1;
            if (pos + 2 < end) {
              int b2 = array[pos + 2];
              if (b2 >= 0) {
                len = (array[pos + 1] & 0x7F) | (b2 << 7);
                content = pos + 3;
              } else if (pos + 3 < end && array[pos + 3] >= 0) {
                len = (array[pos + 1] & 0x7F) | ((b2 & 0x7F) << 7) | (array[pos + 3] << 14);
                content = pos + 4;
              }
            }
          }
          if (len >= 0 && len <= end - content) {
            seriesIndex++;
            if (!readSeries(array, offset, length, pos, content, content + len, visitor)) {
              return null;
            }
            pos = content + len;
            continue;
          }
        }
        // Anything else: one top-level field through the stream, from pos.
        CodedInputStream in = stream(array, offset, length, pos);
        where = AT_REQUEST;
        int fieldStart = in.getTotalBytesRead();
        int tag = in.readTag();
        if (tag == WriteRequestFields.TIMESERIES_TAG) {
          seriesIndex++;
          where = AT_SERIES;
          int len = readLength(in, length);
          int content = offset + in.getTotalBytesRead();
          if (!readSeries(
              array, offset, length, offset + fieldStart, content, content + len, visitor)) {
            return null;
          }
          pos = content + len;
        } else if (tag == WriteRequestFields.METADATA_TAG) {
          where = AT_METADATA;
          sawMetadata = true;
          int len = readLength(in, length);
          in.skipRawBytes(len);
          visitor.onMetadata(offset + fieldStart, offset + in.getTotalBytesRead());
          pos = offset + in.getTotalBytesRead();
        } else {
          int field = WireTags.fieldNumber(tag);
          if (field == WriteRequestFields.TIMESERIES || field == WriteRequestFields.METADATA) {
            throw wrongWireType(in, tag);
          }
          if (v2FieldAt < 0
              && (tag == V2RequestFields.SYMBOLS_TAG || tag == V2RequestFields.TIMESERIES_TAG)) {
            v2FieldAt = fieldStart;
          }
          skipUnknown(in, tag, length);
          otherFields++;
          pos = offset + in.getTotalBytesRead();
        }
      }
      if (seriesIndex < 0 && !sawMetadata && v2FieldAt >= 0) {
        where = AT_REQUEST;
        return error(v2FieldAt, V2_BODY_AS_V1);
      }
      return null;
    } catch (ReadFailure failure) {
      return failure.error;
    } catch (InvalidProtocolBufferException e) {
      return error(stream.getTotalBytesRead(), describe(e));
    } catch (java.io.IOException e) {
      // Cannot happen for an array-backed stream; reported rather than thrown to keep the contract.
      return error(stream.getTotalBytesRead(), String.valueOf(e.getMessage()));
    } finally {
      stream = null;
    }
  }

  /**
   * The request's stream, created on first need, moved forward to {@code at} (an absolute index at
   * or after its position).
   */
  private CodedInputStream stream(byte[] array, int offset, int length, int at)
      throws java.io.IOException {
    CodedInputStream in = stream;
    if (in == null) {
      in = CodedInputStream.newInstance(array, offset, length);
      stream = in;
    }
    in.skipRawBytes(at - offset - in.getTotalBytesRead());
    return in;
  }

  /**
   * Reads one series whose field spans {@code [start, seriesEnd)} (absolute indexes) and reports
   * it: the fast scan first, then the stream from where the scan stopped, if it stopped early.
   *
   * <p>The request's stream, if one was needed, is left anywhere up to {@code seriesEnd}.
   */
  private boolean readSeries(
      byte[] array,
      int offset,
      int length,
      int start,
      int content,
      int seriesEnd,
      WriteRequestVisitor visitor)
      throws java.io.IOException {
    labelIndex = -1;
    SeriesView s = series;
    s.reset(array, seriesIndex, start, content, seriesEnd);
    int reached = scanCanonical(array, content, seriesEnd, s);
    int best = fastBest;
    if (reached != seriesEnd) {
      CodedInputStream in = stream(array, offset, length, reached);
      best = readFields(in, array, offset, seriesEnd - offset, best, s);
    }
    s.tenantLabel = best == tenantLabels.length ? SeriesView.NO_TENANT_LABEL : best;
    return visitor.onSeries(s);
  }

  /**
   * Reads the fields of a series from the stream's position to {@code seriesEnd} (relative to the
   * stream's start), what the fast scan did not handle. The series is bounded by seriesEnd rather
   * than a pushed limit: every length is checked against it, and a field that runs past it is
   * caught.
   *
   * @param best the tenant label priority reached so far
   * @return the tenant label priority reached
   */
  private int readFields(
      CodedInputStream in, byte[] array, int offset, int seriesEnd, int best, SeriesView s)
      throws java.io.IOException {
    while (in.getTotalBytesRead() < seriesEnd) {
      if (best == 0 && !counting) {
        in.skipRawBytes(seriesEnd - in.getTotalBytesRead());
        break;
      }
      where = AT_SERIES_FIELD;
      int labelStart = in.getTotalBytesRead();
      int tag = in.readTag();
      switch (tag) {
        case TimeSeriesFields.LABELS_TAG:
          {
            labelIndex++;
            where = AT_LABEL;
            int labelLength = readLength(in, seriesEnd);
            if (best == 0) {
              in.skipRawBytes(labelLength);
              break;
            }
            int at = offset + in.getTotalBytesRead();
            int labelEnd = in.getTotalBytesRead() + labelLength;
            if (!canonicalLabel(array, at, labelLength)) {
              readLabel(in, array, offset, labelStart, labelEnd);
            } else {
              in.skipRawBytes(labelLength);
            }
            best = matchLabel(array, best, s, offset + labelStart, offset + labelEnd);
            break;
          }
        case TimeSeriesFields.SAMPLES_TAG:
          if (counting) {
            s.samples++;
          }
          in.skipRawBytes(readLength(in, seriesEnd));
          break;
        case TimeSeriesFields.EXEMPLARS_TAG:
          if (counting) {
            s.exemplars++;
          }
          in.skipRawBytes(readLength(in, seriesEnd));
          break;
        case TimeSeriesFields.HISTOGRAMS_TAG:
          if (counting) {
            s.histograms++;
          }
          in.skipRawBytes(readLength(in, seriesEnd));
          break;
        default:
          {
            int f = WireTags.fieldNumber(tag);
            if (f >= TimeSeriesFields.LABELS && f <= TimeSeriesFields.HISTOGRAMS) {
              throw wrongWireType(in, tag);
            }
            skipUnknown(in, tag, seriesEnd);
            if (in.getTotalBytesRead() > seriesEnd) {
              throw failure(labelStart, "field " + f + " runs past the end of the series");
            }
          }
      }
    }
    return best;
  }

  /** Tenant label priority reached by the last {@link #scanCanonical} call. */
  private int fastBest;

  /**
   * Fast scan of a series as senders encode it, over local variables: one-byte tags of the four
   * known fields, lengths of at most two bytes, labels in the {@link #canonicalLabel} form. Labels
   * are matched until the highest-priority tenant label is found; then the scan jumps to the end of
   * the series, or, when counting, goes on counting fields by tag and skipping them by length. The
   * scan stops at the first field it does not handle in full (unknown field, other encodings, a
   * length past the end) and returns where it stopped; {@link #readFields} continues from there
   * through the stream, which reads or reports that field as usual. Profiled on the real payload,
   * walking series fields through the stream's methods cost 2-3 times this loop, and stopping at
   * the tenant label halves the fields it visits.
   *
   * @return array index where the scan stopped ({@code end} when it handled the whole series)
   */
  private int scanCanonical(byte[] a, int pos, int end, SeriesView s) {
    int best = tenantLabels.length;
    int samples = 0;
    int exemplars = 0;
    int histograms = 0;
    int labelsEnd = SeriesView.UNKNOWN;
    int labels = 0; // labels read, added to labelIndex on the way out (named in an error only)
    while (pos + 1 < end) {
      int tag = a[pos];
      int length = a[pos + 1];
      int header = 2;
      if (length < 0) {
        if (pos + 2 >= end || a[pos + 2] < 0) {
          break;
        }
        length = (length & 0x7F) | (a[pos + 2] << 7);
        header = 3;
      }
      int body = pos + header;
      if (length > end - body) {
        break;
      }
      if (tag == TimeSeriesFields.LABELS_TAG) {
        if (best != 0) {
          // In locals: the label's place is written to the view only when it names the tenant.
          long value = canonicalValue(a, body, length);
          if (value < 0) {
            break;
          }
          int p = (int) value == 0 ? -1 : matchTenantLabel(a, body + 2, a[body + 1], best);
          if (p >= 0) {
            s.valueOffset = (int) (value >>> 32);
            s.valueLength = (int) value;
            s.labelStart = pos;
            s.labelEnd = body + length;
            best = p;
            if (best == 0 && !counting && !walkLabels) {
              // The tenant is decided and the label to drop (if any) is known: the rest of the
              // series is forwarded as received.
              labels++;
              pos = end;
              break;
            }
          }
        }
        labels++;
        pos = body + length;
        continue;
      }
      if (labelsEnd == SeriesView.UNKNOWN) {
        labelsEnd = pos;
        if (best == 0 && !counting) {
          pos = end;
          break;
        }
      }
      if (tag == TimeSeriesFields.SAMPLES_TAG) {
        samples++;
      } else if (tag == TimeSeriesFields.HISTOGRAMS_TAG) {
        histograms++;
      } else if (tag == TimeSeriesFields.EXEMPLARS_TAG) {
        exemplars++;
      } else {
        break;
      }
      pos = body + length;
    }
    if (counting) {
      s.samples += samples;
      s.exemplars += exemplars;
      s.histograms += histograms;
    }
    if (labelsEnd == SeriesView.UNKNOWN && pos == end && walkLabels) {
      labelsEnd = end; // labels only, or labels up to a last field that ends the series
    }
    s.labelsEnd = labelsEnd;
    labelIndex += labels;
    fastBest = best;
    return pos;
  }

  // The last label read: absolute offsets into the request array (plain fields, no allocation).
  private int labelNameOffset;
  private int labelNameLength;
  private int labelValueOffset;
  private int labelValueLength;

  /**
   * Fast path for a label encoded the way every sender encodes it: name field, then value field (or
   * no value field for an empty value), both with one-byte lengths and nothing else.
   *
   * <pre>
   * | 0x0A | n | name (n bytes) | 0x12 | m | value (m bytes) |      n in 1..127, m in 0..127
   * </pre>
   *
   * @return false when the label is encoded any other way; then {@link #readLabel} reads it field
   *     by field
   */
  private boolean canonicalLabel(byte[] a, int at, int length) {
    long value = canonicalValue(a, at, length);
    if (value < 0) {
      return false;
    }
    labelNameOffset = at + 2;
    labelNameLength = a[at + 1];
    labelValueOffset = (int) (value >>> 32);
    labelValueLength = (int) value;
    return true;
  }

  /**
   * {@link #canonicalLabel}'s check alone, for the fast scan: where the value of the label at
   * {@code at} lies, its index in the high and its length in the low 32 bits, or -1 when the label
   * is encoded any other way. Its name is at {@code at + 2}, {@code a[at + 1]} bytes.
   */
  private static long canonicalValue(byte[] a, int at, int length) {
    if (length < 2 || a[at] != LabelFields.NAME_TAG) {
      return -1;
    }
    int n = a[at + 1];
    if (n <= 0 || 2 + n > length) {
      return -1;
    }
    if (2 + n == length) {
      return (long) (at + length) << 32;
    }
    int v = at + 2 + n;
    if (4 + n > length || a[v] != LabelFields.VALUE_TAG) {
      return -1;
    }
    int m = a[v + 1];
    if (m < 0 || 4 + n + m != length) {
      return -1;
    }
    return ((long) (v + 2) << 32) | m;
  }

  /** Reads any valid encoding of a {@code Label}: fields in any order, unknown fields skipped. */
  private void readLabel(
      CodedInputStream in, byte[] array, int offset, int labelStart, int labelEnd)
      throws java.io.IOException {
    int old = in.pushLimit(labelEnd - in.getTotalBytesRead());
    int nameOffset = -1;
    int nameLength = 0;
    int valueOffset = -1;
    int valueLength = 0;
    while (!in.isAtEnd()) {
      where = AT_LABEL;
      int t = in.readTag();
      if (t == LabelFields.NAME_TAG) {
        where = AT_LABEL_NAME;
        nameLength = readLength(in, labelEnd);
        nameOffset = in.getTotalBytesRead();
        in.skipRawBytes(nameLength);
      } else if (t == LabelFields.VALUE_TAG) {
        where = AT_LABEL_VALUE;
        valueLength = readLength(in, labelEnd);
        valueOffset = in.getTotalBytesRead();
        in.skipRawBytes(valueLength);
      } else {
        int f = WireTags.fieldNumber(t);
        if (f == LabelFields.NAME || f == LabelFields.VALUE) {
          throw wrongWireType(in, t);
        }
        skipUnknown(in, t, labelEnd);
      }
    }
    in.popLimit(old);
    where = AT_LABEL;
    if (nameLength == 0) {
      throw failure(labelStart, "label without a name");
    }
    labelNameOffset = offset + nameOffset;
    labelNameLength = nameLength;
    labelValueOffset = offset + valueOffset;
    labelValueLength = valueLength;
  }

  /**
   * Matches the label just read (a non-empty value is required) against the tenant labels better
   * than {@code best}; on a match records its value and field range in {@code s}.
   *
   * @param labelStart index of the label field's tag
   * @param labelEnd index one past the label field
   * @return the new best priority
   */
  private int matchLabel(byte[] a, int best, SeriesView s, int labelStart, int labelEnd) {
    if (labelValueLength == 0) {
      return best;
    }
    int p = matchTenantLabel(a, labelNameOffset, labelNameLength, best);
    if (p < 0) {
      return best;
    }
    s.valueOffset = labelValueOffset;
    s.valueLength = labelValueLength;
    s.labelStart = labelStart;
    s.labelEnd = labelEnd;
    return p;
  }

  /**
   * Returns the priority of the tenant label named by the bytes at {@code at}, if better than best.
   */
  private int matchTenantLabel(byte[] array, int at, int length, int best) {
    if (length == firstLength) {
      if (length >= 8 && length <= 16
          ? Bytes.long8(array, at) == firstHead && Bytes.long8(array, at + length - 8) == firstTail
          : Bytes.equalsAt(array, at, length, tenantLabels[0])) {
        return 0;
      }
    }
    int[] lengths = tenantLengths;
    for (int i = 1; i < best; i++) {
      if (lengths[i] == length && Bytes.equalsAt(array, at, length, tenantLabels[i])) {
        return i;
      }
    }
    return -1;
  }

  /** Reads a length prefix and checks it against the end of the enclosing message. */
  private int readLength(CodedInputStream in, int enclosingEnd) throws java.io.IOException {
    int lengthAt = in.getTotalBytesRead();
    // All 64 bits: readRawVarint32 keeps only the low 32, so 2^32 + 8 would pass as 8.
    long length = in.readRawVarint64();
    int left = enclosingEnd - in.getTotalBytesRead();
    if (length < 0 || length > left) {
      throw failure(
          lengthAt,
          "length " + Long.toUnsignedString(length) + " exceeds the " + left + " bytes left");
    }
    return (int) length;
  }

  /** Skips an unknown field; groups are walked iteratively with a depth bound. */
  private void skipUnknown(CodedInputStream in, int tag, int enclosingEnd)
      throws java.io.IOException {
    int type = WireTags.wireType(tag);
    if (type == END_GROUP) {
      throw failure(in.getTotalBytesRead(), "unexpected end-group tag");
    }
    if (type == WireTags.LENGTH_DELIMITED) {
      in.skipRawBytes(readLength(in, enclosingEnd));
      return;
    }
    if (type != START_GROUP) {
      in.skipField(tag);
      return;
    }
    int depth = 1;
    while (depth > 0) {
      int t = in.readTag();
      if (t == 0) {
        throw failure(in.getTotalBytesRead(), "unterminated group");
      }
      int wt = WireTags.wireType(t);
      if (wt == START_GROUP) {
        if (++depth > MAX_GROUP_DEPTH) {
          throw failure(in.getTotalBytesRead(), "groups nested deeper than " + MAX_GROUP_DEPTH);
        }
      } else if (wt == END_GROUP) {
        depth--;
      } else if (wt == WireTags.LENGTH_DELIMITED) {
        in.skipRawBytes(readLength(in, enclosingEnd));
      } else {
        in.skipField(t);
      }
    }
  }

  private ReadFailure wrongWireType(CodedInputStream in, int tag) {
    return failure(
        in.getTotalBytesRead(),
        "field "
            + WireTags.fieldNumber(tag)
            + " has wire type "
            + WireTags.wireTypeName(WireTags.wireType(tag))
            + ", expected length-delimited");
  }

  private ReadFailure failure(int relativeOffset, String problem) {
    return new ReadFailure(error(relativeOffset, problem));
  }

  private RequestError error(int relativeOffset, String problem) {
    return new RequestError(RequestError.Kind.MALFORMED, fieldPath(), relativeOffset, problem);
  }

  private String fieldPath() {
    String s = "timeseries[" + seriesIndex + "]";
    switch (where) {
      case AT_SERIES:
        return s;
      case AT_SERIES_FIELD:
        return s + " field";
      case AT_LABEL:
        return s + ".labels[" + labelIndex + "]";
      case AT_LABEL_NAME:
        return s + ".labels[" + labelIndex + "].name";
      case AT_LABEL_VALUE:
        return s + ".labels[" + labelIndex + "].value";
      case AT_METADATA:
        return "metadata";
      default:
        return "WriteRequest";
    }
  }

  private static String describe(InvalidProtocolBufferException e) {
    String m = e.getMessage();
    if (m != null
        && m.startsWith("While parsing a protocol message, the input ended unexpectedly")) {
      return "truncated: the input ended in the middle of a field";
    }
    if (m != null && m.startsWith("CodedInputStream encountered a malformed varint")) {
      return "malformed varint";
    }
    return m == null ? e.getClass().getSimpleName() : m;
  }

  /** Carries an error out of nested reading; never escapes {@link #read}. */
  private static final class ReadFailure extends java.io.IOException {
    private static final long serialVersionUID = 1L;
    final transient RequestError error;

    ReadFailure(RequestError error) {
      super(error.problem());
      this.error = error;
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
