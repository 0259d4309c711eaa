package io.prwrelay.core.route;

import io.prwrelay.core.remotewrite.Bytes;
import io.prwrelay.core.remotewrite.LabelSetHasher;
import io.prwrelay.core.remotewrite.SeededHash;
import io.prwrelay.core.remotewrite.SeriesView;
import io.prwrelay.core.wire.LabelFields;
import io.prwrelay.core.wire.TimeSeriesFields;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Teaches {@link MetricFamilies} which tenants send which metric families, from the series one
 * router routes, at a cost measured in BENCHMARKS.md ("Metadata families"): 21 to 33 ns per series
 * in the route step, the more the more often a tenant's consecutive series change name.
 *
 * <p>Per series ({@link #see}): the metric name is found in place (senders sort labels, so {@code
 * __name__} is nearly always the first label: one 8-byte compare), and compared with the previous
 * name of the same batch slot; only a name that differs is noted, as offsets. Series of one family
 * come together (histogram buckets, one target's scrape), so most series stop at that compare.
 *
 * <p>Once per request ({@link #finish}): each noted name is reduced to its family key and hashed,
 * and a filter of recently taught (family, tenant) pairs (buckets of four, one cache line each)
 * drops those taught within the refresh interval (a quarter of the TTL), so each pair reaches the
 * shared map (and its lock) at most about once per interval per event loop. The pairs are the
 * request's sender's: another sender's identical pair is another entry of the filter. The filter
 * forgets a pair only to make room in a full bucket, which costs one more update, never a missed
 * one; when a request pushes out many pairs still fresh, the loop sees more pairs than the filter
 * holds, and the filter doubles (from 256 KiB, 16,384 pairs, up to 4 MiB, 262,144 pairs).
 *
 * <p>No allocation once the scratch arrays have grown to the largest request. Not thread-safe: one
 * per router.
 */
final class FamilyLearner {
  private static final VarHandle LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /** {@code "__name__"} read as one little-endian long. */
  private static final long NAME_WORD =
      (long) LONG.get("__name__".getBytes(StandardCharsets.US_ASCII), 0);

  /** Buckets of the filter at first, four pairs each: 16,384 pairs, 256 KiB. */
  private static final int FILTER_BUCKETS = 4096;

  /** Most buckets the filter grows to: 262,144 pairs, 4 MiB. */
  private static final int MAX_FILTER_BUCKETS = 65_536;

  private final MetricFamilies families;
  private final long refreshNanos;

  private byte[] array;
  private long sender;
  private int slots;
  private int[] lastOffset = new int[16];
  private int[] lastLength = new int[16];

  private int noted;
  private int[] notedSlot = new int[64];
  private int[] notedOffset = new int[64];
  private int[] notedLength = new int[64];

  private long[] filter = new long[FILTER_BUCKETS * 8];
  // Pairs taught within the refresh interval that a request pushed out of the filter.
  private int evicted;

  private long[] tenantHashes = new long[16];

  private int taught;
  private long[] teachKeys = new long[64];
  private String[] teachTenants = new String[64];

  FamilyLearner(MetricFamilies families) {
    this.families = families;
    this.refreshNanos = Math.max(1, families.ttlNanos() / 4);
  }

  /**
   * Starts a request.
   *
   * @param array borrowed; the request bytes every later series refers to
   * @param sender who sent it ({@link MetricFamilies#learn(long, long[], String[], int)})
   */
  void startRequest(byte[] array, long sender) {
    this.array = array;
    this.sender = sender;
    slots = 0;
    noted = 0;
  }

  /**
   * Notes the metric name of a series routed to {@code slot} (a slot at most one past the highest
   * seen in this request), unless it is the slot's previous series' name.
   *
   * @param series borrowed; valid only in the reader's callback
   */
  void see(int slot, SeriesView series) {
    byte[] a = series.array();
    int pos = series.contentStart();
    int offset;
    int length;
    // The usual first label, in place: | 0x0A | n | 0x0A | 8 | "__name__" | 0x12 | n - 12 | name |
    int end = series.end();
    int n = pos + 14 <= end ? a[pos + 1] : 0;
    if (n > 12
        && n <= end - pos - 2
        && a[pos] == TimeSeriesFields.LABELS_TAG
        && a[pos + 2] == LabelFields.NAME_TAG
        && a[pos + 3] == 8
        && a[pos + 12] == LabelFields.VALUE_TAG
        && a[pos + 13] == n - 12
        && (long) LONG.get(a, pos + 4) == NAME_WORD) {
      offset = pos + 14;
      length = n - 12;
    } else {
      long found = nameOf(a, pos, end);
      if (found < 0) {
        return;
      }
      offset = (int) (found >>> 32);
      length = (int) found;
    }
    if (slot < slots
        && length == lastLength[slot]
        && Bytes.equalsAt(a, offset, length, a, lastOffset[slot], length)) {
      return;
    }
    note(slot, offset, length);
  }

  /** Notes a name that differs from the slot's previous one (or is the slot's first). */
  private void note(int slot, int offset, int length) {
    while (slot >= slots) {
      // A slot whose first series had no name is opened here too.
      if (slots == lastOffset.length) {
        lastOffset = Arrays.copyOf(lastOffset, slots * 2);
        lastLength = Arrays.copyOf(lastLength, slots * 2);
      }
      lastLength[slots++] = -1;
    }
    lastOffset[slot] = offset;
    lastLength[slot] = length;
    if (noted == notedSlot.length) {
      int n = noted * 2;
      notedSlot = Arrays.copyOf(notedSlot, n);
      notedOffset = Arrays.copyOf(notedOffset, n);
      notedLength = Arrays.copyOf(notedLength, n);
    }
    notedSlot[noted] = slot;
    notedOffset[noted] = offset;
    notedLength[noted] = length;
    noted++;
  }

  /**
   * Teaches the shared map the (family, tenant) pairs of the request not taught within the refresh
   * interval.
   *
   * @param tenants tenant ID of each slot; borrowed
   */
  void finish(String[] tenants) {
    if (noted == 0) {
      return;
    }
    long now = families.now();
    long[] filter = this.filter;
    int mask = (filter.length >> 3) - 1;
    byte[] a = array;
    taught = 0;
    // Each slot's tenant hashed once: the names of interleaved tenants are noted in turn, and
    // hashing the tenant again at every change of tenant cost more than the rest of the loop.
    // Seeded: with String.hashCode, a sender teaching (F, a tenant colliding with the victim)
    // would keep the victim's (F, victim) from ever looking stale here, so never taught.
    long[] tenantHashes = slotHashes(tenants);
    for (int i = 0; i < noted; i++) {
      String tenant = tenants[notedSlot[i]];
      long tenantHash = tenantHashes[notedSlot[i]];
      long family = MetricFamilies.familyKey(a, notedOffset[i], notedLength[i]);
      // The sender's too: one sender's lesson never stands for another's. Never 0, an empty way.
      long key = (family ^ tenantHash ^ sender * 0xC2B2AE3D27D4EB4FL) | 1;
      if (!stale(filter, ((int) (key ^ (key >>> 29) ^ (key >>> 47)) & mask) << 3, key, now)) {
        continue;
      }
      if (taught == teachKeys.length) {
        teachKeys = Arrays.copyOf(teachKeys, taught * 2);
        teachTenants = Arrays.copyOf(teachTenants, taught * 2);
      }
      teachKeys[taught] = family;
      teachTenants[taught] = tenant;
      taught++;
    }
    if (evicted > 64 && evicted > noted / 64 && filter.length < MAX_FILTER_BUCKETS * 8) {
      // This loop sees more pairs than the filter holds: each would be taught again and again.
      // A filter twice the size starts empty, which costs one more lesson of each pair.
      this.filter = new long[filter.length * 2];
    }
    evicted = 0;
    noted = 0;
    if (taught > 0) {
      families.learn(sender, teachKeys, teachTenants, taught);
      Arrays.fill(teachTenants, 0, taught, null);
    }
  }

  /** The seeded hash of each slot's tenant ({@code slots} of them), in a reused array. */
  private long[] slotHashes(String[] tenants) {
    long[] hashes = tenantHashes;
    if (hashes.length < slots) {
      hashes = new long[Math.max(slots, hashes.length * 2)];
      tenantHashes = hashes;
    }
    for (int slot = 0; slot < slots; slot++) {
      hashes[slot] = tenants[slot] == null ? 0 : SeededHash.hash(tenants[slot]);
    }
    return hashes;
  }

  /**
   * Whether {@code key} was not taught within the refresh interval, looked up in the four ways of
   * the bucket at {@code base} (a key and the time it was taught, side by side: 64 bytes, one cache
   * line); when it was not, it is recorded as taught {@code now}, in its own way, an empty one, or
   * the one taught longest ago.
   */
  private boolean stale(long[] filter, int base, long key, long now) {
    int victim = base;
    for (int way = base; way < base + 8; way += 2) {
      if (filter[way] == key) {
        if (now - filter[way + 1] < refreshNanos) {
          return false;
        }
        victim = way;
        break;
      }
      if (filter[way] == 0 || filter[way + 1] - filter[victim + 1] < 0) {
        victim = way;
      }
    }
    if (filter[victim] != 0 && filter[victim] != key && now - filter[victim + 1] < refreshNanos) {
      evicted++;
    }
    filter[victim] = key;
    filter[victim + 1] = now;
    return true;
  }

  /**
   * Where the value of the {@code __name__} label lies in the series content {@code [pos, end)}:
   * the offset in the high and the length in the low 32 bits, or -1 when the series has none (or an
   * empty one). The usual encoding (label fields first, each with a one- or two-byte length, the
   * name first with a one-byte length, a value length of one or two bytes) is read by a few
   * compares; anything else by {@link #nameOfAnyEncoding}.
   */
  static long nameOf(byte[] a, int pos, int end) {
    long usual = LabelSetHasher.usualName(a, pos, end);
    return usual >= 0 ? usual : nameOfAnyEncoding(a, pos, end);
  }

  /**
   * {@link #nameOf} for every encoding the reader accepts: fields in any order, padded lengths,
   * unknown fields, the value before the name; the first label named {@code __name__}, its last
   * {@code value} field (protobuf's last one wins).
   */
  static long nameOfAnyEncoding(byte[] a, int pos, int end) {
    while (pos < end) {
      long tag = RawFields.varint(a, pos, end);
      if (tag < 0) {
        return -1;
      }
      pos = RawFields.next(tag);
      if (RawFields.value(tag) != TimeSeriesFields.LABELS_TAG) {
        pos = RawFields.skip(a, pos, end, RawFields.value(tag));
        if (pos < 0) {
          return -1;
        }
        continue;
      }
      long label = RawFields.body(a, pos, end);
      if (label < 0) {
        return -1;
      }
      int at = RawFields.next(label);
      int limit = at + RawFields.value(label);
      boolean isName = false;
      long value = -1;
      while (at < limit) {
        long t = RawFields.varint(a, at, limit);
        if (t < 0) {
          return -1;
        }
        at = RawFields.next(t);
        int field = RawFields.value(t);
        if (field == LabelFields.NAME_TAG || field == LabelFields.VALUE_TAG) {
          long body = RawFields.body(a, at, limit);
          if (body < 0) {
            return -1;
          }
          if (field == LabelFields.NAME_TAG) {
            isName =
                RawFields.value(body) == 8 && (long) LONG.get(a, RawFields.next(body)) == NAME_WORD;
          } else {
            value = body;
          }
          at = RawFields.next(body) + RawFields.value(body);
        } else {
          at = RawFields.skip(a, at, limit, field);
          if (at < 0) {
            return -1;
          }
        }
      }
      if (isName) {
        return value >= 0 && RawFields.value(value) > 0 ? value : -1;
      }
      pos = limit;
    }
    return -1;
  }
}
