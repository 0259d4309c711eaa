package io.prwrelay.core.route;

import io.prwrelay.core.remotewrite.Bytes;
import io.prwrelay.core.remotewrite.SeededHash;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;

/**
 * Interns tenant label values into small integer entries, looked up by the value's bytes in place.
 *
 * <p>Open addressing over parallel arrays; a lookup hashes and compares the bytes in the request
 * array and allocates nothing. A new value costs one {@code byte[]} key and one {@code String} ID,
 * once; after that the tenant is a number. Entry 0 is the default tenant; a label value whose ID
 * equals the default tenant's maps to entry 0 too, so one tenant never gets two batches. With an
 * allow-list, a valid value whose ID is not allowed is interned too, as {@link
 * TenantProblem#NOT_ALLOWED}, so that its next series cost one lookup, not a new ID to compare. Not
 * thread-safe.
 *
 * <p>The values are a client's choice, so the hash is {@link SeededHash}: with an unkeyed hash a
 * sender can send thousands of values that share one slot, and linear probing makes each new one
 * walk past all the others, on the loop every sender shares ({@link #longestProbe} shows it).
 *
 * <p>Only valid tenant IDs are kept ({@link TenantIds}: at most {@value TenantIds#MAX_LENGTH}
 * bytes); {@link #bytes()} counts what they take, for the owner's bound ({@link
 * TenantSlots#MAX_BYTES}).
 */
final class TenantTable {
  static final int DEFAULT_ENTRY = 0;

  /**
   * Heap of one value besides its bytes and its ID's characters: the key array's and the string's
   * headers, the string's array header, and the value's cells in the parallel arrays and the hash
   * table.
   */
  static final int ENTRY_BYTES = 96;

  private final byte[] prefix;
  private final String prefixString;
  private final String defaultId;

  /** The tenant IDs allowed, or {@code null} for any. */
  private final Set<String> allowed;

  private int[] slots; // hash table: entry index + 1, 0 = empty
  private int[] slotHashes;
  private byte[][] keys;
  private int[] keyEntries;
  private String[] ids;
  private int keyCount;
  private int entryCount;
  private long bytes;

  TenantTable(String prefix, String defaultId, int expected) {
    this(prefix, defaultId, expected, Set.of());
  }

  /**
   * @param allowed the tenant IDs series may go to; empty for any
   */
  TenantTable(String prefix, String defaultId, int expected, Set<String> allowed) {
    this.prefixString = prefix;
    this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
    this.defaultId = defaultId;
    this.allowed = allowed.isEmpty() ? null : allowed;
    int cap = Integer.highestOneBit(Math.max(16, expected * 2 - 1)) << 1;
    allocate(cap, Math.max(8, expected));
  }

  private void allocate(int tableCapacity, int keyCapacity) {
    slots = new int[tableCapacity];
    slotHashes = new int[tableCapacity];
    keys = new byte[keyCapacity][];
    keyEntries = new int[keyCapacity];
    ids = new String[keyCapacity + 1];
    ids[DEFAULT_ENTRY] = defaultId;
    keyCount = 0;
    entryCount = 1;
    bytes = 0;
  }

  /** Forgets every interned value (keeps the default tenant). */
  void clear() {
    allocate(32, 16);
  }

  /** Number of distinct label values interned. */
  int size() {
    return keyCount;
  }

  /**
   * Heap the interned values take, counted as {@link #ENTRY_BYTES} plus the value's bytes and its
   * ID's characters each.
   */
  long bytes() {
    return bytes;
  }

  /** Tenant ID of {@code entry}. */
  String id(int entry) {
    return ids[entry];
  }

  /**
   * Returns the entry for the value {@code array[offset, offset + length)}, interning it if it is a
   * valid tenant ID once prefixed; otherwise returns {@code -(problem ordinal) - 2} ({@link
   * TenantProblem#NOT_ALLOWED} for a valid ID the allow-list does not hold).
   */
  int resolve(byte[] array, int offset, int length) {
    int hash = hash(array, offset, length);
    int mask = slots.length - 1;
    int i = hash & mask;
    while (true) {
      int slot = slots[i];
      if (slot == 0) {
        break;
      }
      if (slotHashes[i] == hash) {
        if (Bytes.equalsAt(array, offset, length, keys[slot - 1])) {
          return keyEntries[slot - 1];
        }
      }
      i = (i + 1) & mask;
    }
    int problem = TenantIds.check(prefix, array, offset, length);
    if (problem != TenantIds.VALID) {
      return -problem - 2;
    }
    return insert(hash, i, Arrays.copyOfRange(array, offset, offset + length));
  }

  static boolean isEntry(int resolved) {
    return resolved >= 0;
  }

  static int problemOf(int resolved) {
    return -resolved - 2;
  }

  private int insert(int hash, int freeSlot, byte[] key) {
    // The value is ASCII (validated), so the ID is prefix + the bytes as Latin-1.
    String id = prefixString + new String(key, StandardCharsets.ISO_8859_1);
    int entry;
    if (id.equals(defaultId)) {
      entry = DEFAULT_ENTRY;
    } else if (allowed != null && !allowed.contains(id)) {
      entry = -TenantProblem.NOT_ALLOWED.ordinal() - 2;
    } else {
      if (entryCount == ids.length) {
        ids = Arrays.copyOf(ids, ids.length * 2);
      }
      entry = entryCount++;
      ids[entry] = id;
    }
    if (keyCount == keys.length) {
      keys = Arrays.copyOf(keys, keys.length * 2);
      keyEntries = Arrays.copyOf(keyEntries, keyEntries.length * 2);
    }
    keys[keyCount] = key;
    keyEntries[keyCount] = entry;
    keyCount++;
    bytes += ENTRY_BYTES + key.length + id.length();
    slots[freeSlot] = keyCount;
    slotHashes[freeSlot] = hash;
    if (keyCount * 2 > slots.length) {
      rehash(slots.length * 2);
    }
    return entry;
  }

  private void rehash(int capacity) {
    int[] newSlots = new int[capacity];
    int[] newHashes = new int[capacity];
    int mask = capacity - 1;
    for (int k = 0; k < keyCount; k++) {
      int h = hash(keys[k], 0, keys[k].length);
      int i = h & mask;
      while (newSlots[i] != 0) {
        i = (i + 1) & mask;
      }
      newSlots[i] = k + 1;
      newHashes[i] = h;
    }
    slots = newSlots;
    slotHashes = newHashes;
  }

  private static int hash(byte[] a, int offset, int length) {
    return SeededHash.fold(SeededHash.hash(a, offset, length));
  }

  /**
   * The most slots a lookup of an interned value walks: its distance from its home slot, plus one.
   * For tests; scans the table.
   */
  int longestProbe() {
    int mask = slots.length - 1;
    int longest = 0;
    for (int i = 0; i < slots.length; i++) {
      if (slots[i] != 0) {
        longest = Math.max(longest, ((i - (slotHashes[i] & mask)) & mask) + 1);
      }
    }
    return longest;
  }
}
