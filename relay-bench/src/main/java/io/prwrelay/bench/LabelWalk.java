package io.prwrelay.bench;

import io.prwrelay.core.remotewrite.LabelSetHasher;
import java.nio.charset.StandardCharsets;

/**
 * The least work of any router that finds each series' tenant by its labels: per series, the series
 * field's tag and length, then label after label by tag and length (a varint each), the name's
 * length and bytes compared with the tenant label's, until it matches; then on to the next series
 * by its length. Nothing is validated, nothing is reported, nothing is copied: a lower bound for
 * the route step ({@code RouteBenchmark.labelWalk}), not something the relay could ship. What it
 * costs against {@code copy} shows how much of the route step's distance to one copy of the payload
 * is the walk itself: a chain of dependent length reads (each label's place is known only once the
 * previous length is read) with a data-dependent exit, where the copy streams.
 */
public final class LabelWalk {
  private final byte[] tenant;

  public LabelWalk(String tenantLabel) {
    this.tenant = tenantLabel.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Walks a decompressed PRW 1.0 request.
   *
   * @return how many series have the tenant label (so the walk is not optimised away)
   */
  int walk(byte[] a, int offset, int length) {
    byte[] name = tenant;
    int n = name.length;
    int end = offset + length;
    int pos = offset;
    int found = 0;
    while (pos < end) {
      pos++; // the series field's tag
      int len = 0;
      int shift = 0;
      int b;
      do {
        b = a[pos++];
        len |= (b & 0x7F) << shift;
        shift += 7;
      } while (b < 0);
      int seriesEnd = pos + len;
      int p = pos;
      while (p < seriesEnd) {
        p++; // a label field's tag
        int labelLength = a[p++];
        if (labelLength < 0) {
          labelLength = (labelLength & 0x7F) | (a[p++] << 7);
        }
        // | 0x0A | name length | name | 0x12 | value length | value |
        if (a[p + 1] == n && equals(a, p + 2, name)) {
          found++;
          break;
        }
        p += labelLength;
      }
      pos = seriesEnd;
    }
    return found;
  }

  private static boolean equals(byte[] a, int at, byte[] name) {
    for (int i = 0; i < name.length; i++) {
      if (a[at + i] != name[i]) {
        return false;
      }
    }
    return true;
  }

  // What walkValidated found of the last series, as the reader records it.
  private int valueOffset;
  private int valueLength;
  private int labelStart;
  private int labelEnd;
  private int labelIndex;

  /**
   * {@link #walk} with the checks the relay's reader makes on the way to the tenant label: every
   * length against its enclosing message, the series field's tag, each label in the usual encoding
   * (name field, then value field, lengths that add up), the match recorded as the reader records
   * it. Still no callback per series and no fallback for other encodings: what validation adds to
   * the walk.
   *
   * @return as {@link #walk}, not counting a series whose labels before the tenant label are
   *     encoded another way; -1 at the first series field it does not handle
   */
  public int walkValidated(byte[] a, int offset, int length) {
    byte[] name = tenant;
    int end = offset + length;
    int pos = offset;
    int found = 0;
    while (pos < end) {
      if (a[pos] != 0x0A || pos + 1 >= end) {
        return -1;
      }
      int len = a[pos + 1];
      int content = pos + 2;
      if (len < 0) {
        len = -1;
        if (pos + 2 < end) {
          int b2 = a[pos + 2];
          if (b2 >= 0) {
            len = (a[pos + 1] & 0x7F) | (b2 << 7);
            content = pos + 3;
          } else if (pos + 3 < end && a[pos + 3] >= 0) {
            len = (a[pos + 1] & 0x7F) | ((b2 & 0x7F) << 7) | (a[pos + 3] << 14);
            content = pos + 4;
          }
        }
      }
      if (len < 0 || len > end - content) {
        return -1;
      }
      int seriesEnd = content + len;
      found += validatedSeries(a, content, seriesEnd, name);
      pos = seriesEnd;
    }
    return found;
  }

  private int validatedSeries(byte[] a, int pos, int end, byte[] name) {
    int best = 1;
    labelIndex = -1;
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
      if (tag == 0x0A) {
        int n = length < 2 || a[body] != 0x0A ? 0 : a[body + 1];
        if (n <= 0 || 2 + n > length) {
          break;
        }
        if (2 + n != length) {
          int v = body + 2 + n;
          if (4 + n > length || a[v] != 0x12) {
            break;
          }
          int m = a[v + 1];
          if (m < 0 || 4 + n + m != length) {
            break;
          }
          if (m != 0 && n == name.length && equals(a, body + 2, name)) {
            valueOffset = v + 2;
            valueLength = m;
            labelStart = pos;
            labelEnd = body + length;
            best = 0;
          }
        }
        if (best == 0) {
          pos = end;
          break;
        }
        labelIndex++;
        pos = body + length;
        continue;
      }
      break;
    }
    return best == 0 && valueLength > 0 ? 1 : 0;
  }

  /**
   * Where every series' leading run of labels lies in a decompressed PRW 1.0 request, as the
   * insight's digest hashes it ({@code LabelSetHasher}): {@code [start, end)} pairs, one per
   * series. Not timed: the input of {@code RouteBenchmark.labelSetHash}.
   */
  public static int[] labelRanges(byte[] a) {
    int[] ranges = new int[64];
    int n = 0;
    int pos = 0;
    while (pos < a.length) {
      pos++; // the series field's tag
      int len = 0;
      int shift = 0;
      int b;
      do {
        b = a[pos++];
        len |= (b & 0x7F) << shift;
        shift += 7;
      } while (b < 0);
      int seriesEnd = pos + len;
      int p = pos;
      while (p < seriesEnd && a[p] == 0x0A) {
        p++;
        int labelLength = 0;
        shift = 0;
        do {
          b = a[p++];
          labelLength |= (b & 0x7F) << shift;
          shift += 7;
        } while (b < 0);
        p += labelLength;
      }
      if (n + 2 > ranges.length) {
        ranges = java.util.Arrays.copyOf(ranges, ranges.length * 2);
      }
      ranges[n++] = pos;
      ranges[n++] = p;
      pos = seriesEnd;
    }
    return java.util.Arrays.copyOf(ranges, n);
  }

  /**
   * The tenant insight's hash ({@code LabelSetHasher#hash}) of every series' whole label set, over
   * {@link #labelRanges} found beforehand: the work of {@code RouteBenchmark.labelSetHash}.
   *
   * @param offset where the request starts in {@code a}; the ranges are relative to it
   * @return the sum of the hashes (so that none is optimised away)
   */
  public static long hashLabelSets(byte[] a, int offset, int[] ranges) {
    long h = 0;
    for (int i = 0; i < ranges.length; i += 2) {
      h += LabelSetHasher.hash(a, offset + ranges[i], ranges[i + 1] - ranges[i]);
    }
    return h;
  }
}
