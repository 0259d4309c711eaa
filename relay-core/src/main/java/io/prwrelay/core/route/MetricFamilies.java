package io.prwrelay.core.route;

import io.prwrelay.core.remotewrite.SeededHash;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Which tenants each sender recently sent series of each metric family to: what routes a PRW 1.0
 * request that carries only {@code metadata} (Prometheus 2.x sends its metadata that way, apart
 * from the series, every {@code metadata_config.send_interval}) to the tenants whose series that
 * metadata describes. Learned from the series the routers route ({@link FamilyLearner}); shared by
 * every event loop's router.
 *
 * <p><b>Per sender.</b> Every association is learned under the sender that sent the series (a
 * 64-bit id the caller derives, keyed so that no sender can choose it), and a metadata entry is
 * looked up under the sender of the metadata: a sender's metadata goes only to tenants it sent
 * series of the family to, never to another sender's tenants, whose answers (a throttled tenant's
 * 429) would otherwise decide its own.
 *
 * <p><b>Family key.</b> Prometheus names a family in its metadata as the exposition's {@code #
 * TYPE} line does: a text-format counter {@code http_requests_total}, an OpenMetrics counter {@code
 * http_requests} (series {@code http_requests_total}), a histogram {@code latency_seconds} (series
 * {@code latency_seconds_bucket}, {@code _sum}, {@code _count}), a summary {@code rpc_seconds}
 * (series {@code rpc_seconds}, {@code _sum}, {@code _count}). A series is therefore learned under
 * its metric name without one trailing {@code _total}, {@code _created}, {@code _bucket}, {@code
 * _count}, {@code _sum}, {@code _gcount}, {@code _gsum} or {@code _info} ({@link #familyKey}), and
 * a metadata entry's family name is looked up both as it is and without such a suffix ({@link
 * #tenantsOf}). That finds every family of the shapes above; it can also name a tenant that sent a
 * different family whose name differs only by one of these suffixes (a gauge {@code jobs_count}
 * next to a counter {@code jobs_total}), which then receives that metadata too. The key is a {@link
 * SeededHash} of the name: with an unkeyed 64-bit hash a sender could compute a name whose key
 * equals another tenant's family and so be routed that family's metadata.
 *
 * <p><b>Bounds.</b> At most {@code capacity} sender–family–tenant associations over all senders (a
 * family one sender sent to three tenants takes three), and at most {@code maxBytes} of heap for
 * them ({@link #bytes()}): the tables, each distinct tenant ID they name and each sender holding
 * any. A new association beyond either bound evicts the least recently seen association <em>of the
 * sender holding the most</em>: a sender that learns more than any other recycles its own, and one
 * holding fewer than the others keeps all of them (max-min fairness, in associations). Under the
 * byte bound a sender whose tenant IDs are long reaches it with fewer associations than one whose
 * IDs are short, and is still the one that loses: a sender holding {@code n} associations keeps
 * them while {@code n} associations of every other sender, at their worst ({@link #ID_BYTES} +
 * {@link #TENANT_ID_BYTES} + 152 bytes each), fit. An association not seen for {@code ttl} is no
 * longer used and is removed on the next update.
 *
 * <p><b>What is charged.</b> {@link #bytes()} is computed from the layout, not estimated per
 * association: {@link #ID_BYTES} per association id the arrays have room for, the two probe tables
 * (4 bytes a cell, 2 to 4 cells an id), {@link #TENANT_ID_BYTES} plus its characters per distinct
 * tenant ID (the String, its array, its map node and count: 256 bytes for an ID of 150 characters)
 * and {@link #SENDER_BYTES} per sender. The tables grow only while the bound allows, so they never
 * take more than it. At the default 500,000 associations the tables take 32.4 MB, about 65 bytes an
 * association; 500,000 associations that each name a tenant ID of 150 bytes of its own are charged
 * 160.4 MB and took 156.8 MB (relay-bench {@code FamilyMemory}), which is why the bound is in
 * bytes.
 *
 * <p><b>Why arrays, not the JDK's maps.</b> Nothing here runs per series, so the reason is memory,
 * not speed: the smallest version on {@code LinkedHashMap}s (an access-ordered map for the age
 * order, one per sender for its eviction, a map of tenants per family) took 177 to 305 bytes per
 * association when full, 89 to 153 MB at the default 500,000, against 57 to 66 bytes here (29 to 33
 * MB); {@code relay-bench}'s {@code FamilyMemory} measures both (BENCHMARKS.md, "Metadata
 * families").
 *
 * <p>Thread-safe: one lock, taken for each 256 pairs of a routed request that has something new to
 * teach (the learners teach a pair at most about once per refresh interval) and once per entry of a
 * metadata-only request. Nothing here runs per series.
 */
public final class MetricFamilies {
  /** The sender of series and metadata whose sender is not known: one sender for all of them. */
  public static final long NO_SENDER = 0;

  private static final int NONE = -1;
  private static final int INITIAL = 1024;
  private static final int LEARN_CHUNK = 256;
  private static final VarHandle LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long[] TOTAL = suffix("_total");
  private static final long[] CREATED = suffix("_created");
  private static final long[] BUCKET = suffix("_bucket");
  private static final long[] COUNT = suffix("_count");
  private static final long[] SUM = suffix("_sum");
  private static final long[] GCOUNT = suffix("_gcount");
  private static final long[] GSUM = suffix("_gsum");
  private static final long[] INFO = suffix("_info");
  private static final byte[][] SHORT = {
    ascii("_total"),
    ascii("_count"),
    ascii("_sum"),
    ascii("_gsum"),
    ascii("_info"),
    ascii("_bucket"),
    ascii("_gcount")
  };

  /**
   * Heap of one association id the arrays have room for, besides the probe tables: 36 bytes here
   * (two longs, a reference and four ints) and 12 in {@link FamilySenders} (a reference, two ints).
   */
  static final int ID_BYTES = 48;

  /**
   * Heap of one distinct tenant ID besides its characters (one byte each: IDs are ASCII), rounded
   * up to 8: the String (24), its array's header (16), its {@code HashMap} node (32), its {@code
   * Interned} count (24) and its share of the map's table (at most 10.7 at the load factor 0.75:
   * 8). Measured with relay-bench {@code FamilyMemory} (heap after full GCs, 500,000 associations,
   * each of its own tenant ID of 150 bytes): 104 + 152 = 256 bytes an ID computed, 256.2 measured
   * (156.8 MB against 28.7 MB for as many associations of one short ID).
   */
  static final int TENANT_ID_BYTES = 104;

  /** Heap of one sender holding associations ({@link FamilySenders}): its object and map entry. */
  static final int SENDER_BYTES = 80;

  private final int capacity;
  private final long maxBytes;
  private final long ttlNanos;
  private final LongSupplier nanoClock;

  // Associations by id, in arrays that grow to capacity.
  private long[] family = new long[0];
  private String[] tenant = new String[0];
  private long[] seen = new long[0];
  private int[] familyNext = new int[0];
  private int[] familyPrev = new int[0];
  private int[] newer = new int[0];
  private int[] older = new int[0];
  private int oldest = NONE;
  private int newest = NONE;
  private int size;
  private int free = NONE;
  private int allocated;

  // Open addressing with linear probing: id + 1 per cell, 0 for an empty cell.
  private int[] byPair = new int[0];
  private int[] byFamily = new int[0];
  private int families;

  private final Map<String, Interned> tenantIds = new HashMap<>();

  /** What the distinct tenant IDs take ({@link #tenantIdBytes}), all together. */
  private long idBytes;

  private long lessons;

  // Whose each association is, and which to evict: the oldest of the sender holding the most.
  private final FamilySenders owners = new FamilySenders();

  /**
   * Bounded by {@code capacity} only.
   *
   * @param capacity most family–tenant associations kept; 0 learns nothing
   * @param ttlNanos how long an association lasts after its tenant last sent the family
   * @param nanoClock the time, in nanoseconds ({@code System::nanoTime} outside tests)
   */
  public MetricFamilies(int capacity, long ttlNanos, LongSupplier nanoClock) {
    this(capacity, Long.MAX_VALUE, ttlNanos, nanoClock);
  }

  /**
   * @param capacity most family–tenant associations kept; 0 learns nothing
   * @param maxBytes most heap taken ({@link #bytes()}); 0 learns nothing
   * @param ttlNanos how long an association lasts after its tenant last sent the family
   * @param nanoClock the time, in nanoseconds ({@code System::nanoTime} outside tests)
   */
  public MetricFamilies(int capacity, long maxBytes, long ttlNanos, LongSupplier nanoClock) {
    if (capacity < 0 || maxBytes < 0 || ttlNanos <= 0) {
      throw new IllegalArgumentException(
          "capacity " + capacity + ", max bytes " + maxBytes + ", ttl " + ttlNanos + " ns");
    }
    this.capacity = maxBytes == 0 ? 0 : capacity;
    this.maxBytes = maxBytes;
    this.ttlNanos = ttlNanos;
    this.nanoClock = nanoClock;
  }

  /**
   * The families of {@code rules} ({@link TenantRules#maxFamilyTenants()}, {@link
   * TenantRules#maxFamilyBytes()}, its TTL), on the JVM's clock.
   */
  public static MetricFamilies of(TenantRules rules) {
    return new MetricFamilies(
        rules.maxFamilyTenants(),
        rules.maxFamilyBytes(),
        rules.familyTtl().toNanos(),
        System::nanoTime);
  }

  /** Whether anything is learned at all (a capacity and a byte bound above 0). */
  public boolean enabled() {
    return capacity > 0;
  }

  /**
   * Heap taken now, as the byte bound counts it: the arrays and probe tables at their present size,
   * the distinct tenant IDs and the senders holding associations.
   */
  public synchronized long bytes() {
    return arrayBytes(family.length) + idBytes + (long) owners.count() * SENDER_BYTES;
  }

  /** The heap of the arrays and probe tables with room for {@code ids} associations. */
  static long arrayBytes(int ids) {
    return (long) ids * ID_BYTES + 2L * Integer.BYTES * cells(ids);
  }

  /** The heap one distinct tenant ID takes while associations name it. */
  static long tenantIdBytes(String t) {
    return TENANT_ID_BYTES + ((t.length() + 7L) & ~7L);
  }

  /** How long an association lasts, in nanoseconds. */
  public long ttlNanos() {
    return ttlNanos;
  }

  /** The clock's time now. */
  long now() {
    return nanoClock.getAsLong();
  }

  /** Family–tenant associations held now, expired ones not yet removed included. */
  public synchronized int size() {
    return size;
  }

  /**
   * The key a series of metric name {@code a[offset, offset + length)} is learned under: the hash
   * of the name without one trailing {@code _total}, {@code _created}, {@code _bucket}, {@code
   * _count}, {@code _sum}, {@code _gcount}, {@code _gsum} or {@code _info} (when something is left
   * before it).
   *
   * @param a borrowed
   */
  public static long familyKey(byte[] a, int offset, int length) {
    return SeededHash.hash(a, offset, stemLength(a, offset, length));
  }

  /** The length of the name without one trailing suffix, or {@code length} when it has none. */
  static int stemLength(byte[] a, int offset, int length) {
    if (length < 9) {
      return shortStemLength(a, offset, length);
    }
    // The name's last 8 bytes as one word; the last byte picks the suffixes worth comparing.
    long last = (long) LONG.get(a, offset + length - 8);
    switch ((int) (last >>> 56)) {
      case 'l':
        return ends(last, TOTAL) ? length - 6 : length;
      case 'd':
        return ends(last, CREATED) ? length - 8 : length;
      case 't':
        if (ends(last, BUCKET)) {
          return length - 7;
        }
        if (ends(last, COUNT)) {
          return length - 6;
        }
        return ends(last, GCOUNT) ? length - 7 : length;
      case 'm':
        if (ends(last, SUM)) {
          return length - 4;
        }
        return ends(last, GSUM) ? length - 5 : length;
      case 'o':
        return ends(last, INFO) ? length - 5 : length;
      default:
        return length;
    }
  }

  /** Whether the word {@code last} (a name's last 8 bytes) ends with {@code suffix}. */
  private static boolean ends(long last, long[] suffix) {
    return (last & suffix[1]) == suffix[0];
  }

  /** {@link #stemLength} of a name shorter than 9 bytes, byte by byte. */
  private static int shortStemLength(byte[] a, int offset, int length) {
    for (byte[] s : SHORT) {
      int n = s.length;
      if (n < length) {
        int at = offset + length - n;
        int i = 0;
        while (i < n && a[at + i] == s[i]) {
          i++;
        }
        if (i == n) {
          return length - n;
        }
      }
    }
    return length;
  }

  /**
   * A suffix as the high bytes of a little-endian word read from the last 8 bytes of a name:
   * {value, mask}.
   */
  private static long[] suffix(String s) {
    byte[] b = ascii(s);
    long value = 0;
    long mask = 0;
    for (int i = 0; i < b.length; i++) {
      int shift = 8 * (8 - b.length + i);
      value |= (b[i] & 0xFFL) << shift;
      mask |= 0xFFL << shift;
    }
    return new long[] {value, mask};
  }

  /** {@link #tenantsOf(long, byte[], int, int, List)} for {@link #NO_SENDER}. */
  public void tenantsOf(byte[] a, int offset, int length, List<String> out) {
    tenantsOf(NO_SENDER, a, offset, length, out);
  }

  /**
   * Adds to {@code out} every tenant that {@code sender} sent a series of the family named {@code
   * a[offset, offset + length)} (a {@code metric_family_name}) to within the TTL, each once.
   *
   * @param a borrowed
   */
  public void tenantsOf(long sender, byte[] a, int offset, int length, List<String> out) {
    long salt = salt(sender);
    long asIs = SeededHash.hash(a, offset, length) ^ salt;
    int stem = stemLength(a, offset, length);
    long stripped = stem == length ? asIs : SeededHash.hash(a, offset, stem) ^ salt;
    long now = now();
    synchronized (this) {
      if (capacity == 0 || size == 0) {
        return;
      }
      int first = out.size();
      collect(asIs, now, out, null);
      if (stripped != asIs && firstOf(stripped) != NONE) {
        Set<String> skip =
            out.size() == first ? null : new HashSet<>(out.subList(first, out.size()));
        collect(stripped, now, out, skip);
      }
    }
  }

  /**
   * Adds the fresh tenants of family {@code key} but those in {@code skip} (a family's own chain
   * never repeats a tenant).
   */
  private void collect(long key, long now, List<String> out, Set<String> skip) {
    for (int id = firstOf(key); id != NONE; id = familyNext[id]) {
      if (now - seen[id] < ttlNanos && (skip == null || !skip.contains(tenant[id]))) {
        out.add(tenant[id]);
      }
    }
  }

  /** {@link #learn(long, long[], String[], int)} for {@link #NO_SENDER}. */
  public void learn(long[] keys, String[] tenants, int count) {
    learn(NO_SENDER, keys, tenants, count);
  }

  /**
   * Records that {@code sender} sent each {@code tenants[i]} a series of family key {@code keys[i]}
   * ({@link #familyKey}) now; removes expired associations and, beyond the capacity, the least
   * recently seen of the sender holding the most.
   *
   * @param keys borrowed
   * @param tenants borrowed; tenant IDs as sent downstream
   */
  public void learn(long sender, long[] keys, String[] tenants, int count) {
    if (capacity == 0 || count == 0) {
      return;
    }
    long now = now();
    long salt = salt(sender);
    // In chunks, so that a large request's lesson holds the lock from other loops only briefly.
    for (int from = 0; from < count; from += LEARN_CHUNK) {
      int to = Math.min(count, from + LEARN_CHUNK);
      synchronized (this) {
        expire(now);
        for (int i = from; i < to; i++) {
          learn(sender, keys[i] ^ salt, tenants[i], now);
        }
        lessons += to - from;
      }
    }
  }

  /**
   * The bits a sender's family keys are combined with (SplitMix64's finaliser of its id): two
   * senders' keys of one family differ in about half their bits.
   */
  private static long salt(long sender) {
    long z = sender;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  private void learn(long sender, long key, String t, long now) {
    int id = find(key, t);
    if (id != NONE) {
      seen[id] = now;
      if (id != newest) {
        unlinkAge(id);
        linkNewest(id);
      }
      owners.touch(id);
      return;
    }
    // Make room: the oldest of the sender holding the most, until the new one fits both bounds.
    while (size > 0 && (size == capacity || !fits(sender, t))) {
      remove(owners.victim());
    }
    if (!fits(sender, t)) {
      return; // the byte bound holds less than this one association
    }
    id = allocate(maxBytes - bytes() - added(sender, t));
    family[id] = key;
    tenant[id] = intern(t);
    seen[id] = now;
    linkNewest(id);
    owners.add(sender, id);
    insertPair(id);
    int head = firstOf(key);
    familyPrev[id] = NONE;
    familyNext[id] = head;
    if (head == NONE) {
      insertFamily(id);
    } else {
      familyPrev[head] = id;
      replaceFamilyHead(key, id);
    }
    size++;
  }

  /**
   * Whether a new association of {@code sender} and {@code t} fits the byte bound: its tenant ID
   * when new, its sender when new, and the arrays' growth when no id is free.
   */
  private boolean fits(long sender, String t) {
    long need = bytes() + added(sender, t);
    if (need > maxBytes) {
      return false;
    }
    return free != NONE || allocated < family.length || nextLength(maxBytes - need) > 0;
  }

  /** What a new association adds besides an id: its tenant ID and its sender, when new. */
  private long added(long sender, String t) {
    return (tenantIds.containsKey(t) ? 0 : tenantIdBytes(t))
        + (owners.held(sender) == 0 ? SENDER_BYTES : 0);
  }

  /**
   * The length the arrays grow to when full: twice the present (at least {@link #INITIAL}, at most
   * the capacity), or less when only less fits in {@code room} bytes beyond what is taken now; 0
   * when too little fits to be worth growing (an eighth more, at least 64 ids).
   */
  private int nextLength(long room) {
    int length = family.length;
    long now = arrayBytes(length);
    int want = (int) Math.min(capacity, Math.max(INITIAL, 2L * length));
    if (arrayBytes(want) - now <= room) {
      return want;
    }
    int least = (int) Math.min(want, length + Math.max(64, length / 8));
    int lo = length;
    int hi = want;
    while (lo < hi) { // the largest length whose arrays fit: arrayBytes grows with the length
      int mid = (int) ((lo + (long) hi + 1) >>> 1);
      if (arrayBytes(mid) - now <= room) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo >= least ? lo : 0;
  }

  /** Removes every association not seen within the TTL (the oldest come first). */
  private void expire(long now) {
    while (oldest != NONE && now - seen[oldest] >= ttlNanos) {
      remove(oldest);
    }
  }

  private void remove(int id) {
    unlinkAge(id);
    owners.remove(id);
    removePair(id);
    int prev = familyPrev[id];
    int next = familyNext[id];
    if (next != NONE) {
      familyPrev[next] = prev;
    }
    if (prev != NONE) {
      familyNext[prev] = next;
    } else if (next != NONE) {
      replaceFamilyHead(family[id], next);
    } else {
      removeFamily(family[id]);
    }
    release(tenant[id]);
    tenant[id] = null;
    familyNext[id] = free;
    free = id;
    size--;
  }

  /**
   * The one instance of tenant ID {@code t} that all its associations share (each event loop's
   * routers hold their own), counted.
   */
  private String intern(String t) {
    Interned i = tenantIds.get(t);
    if (i == null) {
      i = new Interned(t);
      tenantIds.put(t, i);
      idBytes += tenantIdBytes(t);
    }
    i.associations++;
    return i.id;
  }

  private void release(String t) {
    Interned i = tenantIds.get(t);
    if (--i.associations == 0) {
      tenantIds.remove(t);
      idBytes -= tenantIdBytes(t);
    }
  }

  /** A tenant ID held once, and how many associations name it. */
  private static final class Interned {
    final String id;
    int associations;

    Interned(String id) {
      this.id = id;
    }
  }

  // --- age list: oldest .. newest

  private void linkNewest(int id) {
    older[id] = newest;
    newer[id] = NONE;
    if (newest != NONE) {
      newer[newest] = id;
    } else {
      oldest = id;
    }
    newest = id;
  }

  private void unlinkAge(int id) {
    int o = older[id];
    int n = newer[id];
    if (o != NONE) {
      newer[o] = n;
    } else {
      oldest = n;
    }
    if (n != NONE) {
      older[n] = o;
    } else {
      newest = o;
    }
  }

  // --- storage

  /** A free id; the arrays grow within {@code room} bytes when none is ({@link #fits}). */
  private int allocate(long room) {
    if (free != NONE) {
      int id = free;
      free = familyNext[id];
      return id;
    }
    if (allocated == family.length) {
      grow(nextLength(room));
    }
    return allocated++;
  }

  /** Probe table cells for {@code ids} ids: a power of two at least twice as many. */
  private static int cells(int ids) {
    return ids == 0 ? 0 : Integer.highestOneBit(Math.max(1, ids - 1)) << 2;
  }

  private void grow(int n) {
    family = Arrays.copyOf(family, n);
    tenant = Arrays.copyOf(tenant, n);
    seen = Arrays.copyOf(seen, n);
    familyNext = Arrays.copyOf(familyNext, n);
    familyPrev = Arrays.copyOf(familyPrev, n);
    newer = Arrays.copyOf(newer, n);
    older = Arrays.copyOf(older, n);
    owners.grow(n);
    // Tables at most half full: a power of two at least twice the ids.
    int cells = cells(n);
    byPair = new int[cells];
    byFamily = new int[cells];
    families = 0;
    for (int id = 0; id < allocated; id++) {
      if (tenant[id] != null) {
        insertPair(id);
        if (familyPrev[id] == NONE) {
          insertFamily(id);
        }
      }
    }
  }

  private static int spread(long h) {
    h ^= h >>> 33;
    h *= 0xFF51AFD7ED558CCDL;
    return (int) (h ^ (h >>> 32));
  }

  private static long pairHash(long key, String t) {
    // Seeded: tenants whose String.hashCode collide (Aa/BB blocks) would share one probe run.
    return key ^ SeededHash.hash(t);
  }

  private int find(long key, String t) {
    int mask = byPair.length - 1;
    if (mask < 0) {
      return NONE;
    }
    for (int c = spread(pairHash(key, t)) & mask; ; c = (c + 1) & mask) {
      int id = byPair[c] - 1;
      if (id == NONE) {
        return NONE;
      }
      if (family[id] == key && tenant[id].equals(t)) {
        return id;
      }
    }
  }

  private void insertPair(int id) {
    int mask = byPair.length - 1;
    int c = spread(pairHash(family[id], tenant[id])) & mask;
    while (byPair[c] != 0) {
      c = (c + 1) & mask;
    }
    byPair[c] = id + 1;
  }

  private void removePair(int id) {
    int mask = byPair.length - 1;
    int c = spread(pairHash(family[id], tenant[id])) & mask;
    while (byPair[c] != id + 1) {
      c = (c + 1) & mask;
    }
    deleteCell(byPair, c, mask, true);
  }

  private int firstOf(long key) {
    int mask = byFamily.length - 1;
    if (mask < 0) {
      return NONE;
    }
    for (int c = spread(key) & mask; ; c = (c + 1) & mask) {
      int id = byFamily[c] - 1;
      if (id == NONE) {
        return NONE;
      }
      if (family[id] == key) {
        return id;
      }
    }
  }

  private void insertFamily(int id) {
    int mask = byFamily.length - 1;
    int c = spread(family[id]) & mask;
    while (byFamily[c] != 0) {
      c = (c + 1) & mask;
    }
    byFamily[c] = id + 1;
    families++;
  }

  private int familyCell(long key) {
    int mask = byFamily.length - 1;
    int c = spread(key) & mask;
    while (family[byFamily[c] - 1] != key) {
      c = (c + 1) & mask;
    }
    return c;
  }

  private void replaceFamilyHead(long key, int id) {
    byFamily[familyCell(key)] = id + 1;
  }

  private void removeFamily(long key) {
    deleteCell(byFamily, familyCell(key), byFamily.length - 1, false);
    families--;
  }

  /**
   * Empties cell {@code c} of a linear-probing table and moves back every later entry of the same
   * run that the hole would hide from its home cell (backward-shift deletion: no tombstones).
   */
  private void deleteCell(int[] table, int c, int mask, boolean pairs) {
    int hole = c;
    for (int i = (c + 1) & mask; table[i] != 0; i = (i + 1) & mask) {
      int id = table[i] - 1;
      int home = (pairs ? spread(pairHash(family[id], tenant[id])) : spread(family[id])) & mask;
      // Move the entry into the hole unless its home lies cyclically in (hole, i].
      boolean stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
      if (!stays) {
        table[hole] = table[i];
        hole = i;
      }
    }
    table[hole] = 0;
  }

  /** Pairs taught so far, repeats included: what the learners' filters did not hold back. */
  synchronized long lessons() {
    return lessons;
  }

  /** Distinct (sender, family) keys held now. */
  public synchronized int families() {
    return families;
  }

  /** Associations {@code sender} holds now, expired ones not yet removed included. */
  public synchronized int heldBy(long sender) {
    return owners.held(sender);
  }

  /** Senders holding associations now. */
  public synchronized int senders() {
    return owners.count();
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
