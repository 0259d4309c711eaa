package io.prwrelay.core.remotewrite;

import io.prwrelay.core.wire.ScratchMemory;
import java.util.Arrays;

/**
 * Flyweight over the {@code symbols} of a PRW 2.0 request, as {@link V2RequestReader} found them:
 * per ref, the offset and length of the string's bytes in the request array. Nothing is copied or
 * decoded; strings are compared in place. Owned by its reader and valid until the reader's next
 * {@code read}. Its two arrays grow with the table, in its reader's {@link ScratchMemory}.
 *
 * <pre>
 *  array: ... | 0x22 | len | bytes of symbols[ref] | ... | 0x22 | len | bytes ... |
 *                           ^offset(ref), length(ref)
 * </pre>
 */
public final class SymbolTable {
  private static final int INITIAL = 256;

  private final ScratchMemory scratch;
  private byte[] array;
  private int count;
  private int[] offsets = new int[INITIAL];
  private int[] lengths = new int[INITIAL];

  SymbolTable(ScratchMemory scratch) {
    this.scratch = scratch;
    scratch.register(
        () -> {
          offsets = new int[INITIAL];
          lengths = new int[INITIAL];
        });
  }

  void reset(byte[] array) {
    this.array = array;
    this.count = 0;
  }

  void add(int offset, int length) {
    if (count == offsets.length) {
      scratch.charge(2L * Integer.BYTES * count);
      offsets = Arrays.copyOf(offsets, count * 2);
      lengths = Arrays.copyOf(lengths, count * 2);
    }
    offsets[count] = offset;
    lengths[count] = length;
    count++;
  }

  /** The array holding the request; borrowed from the caller of {@link V2RequestReader#read}. */
  public byte[] array() {
    return array;
  }

  /** Number of symbols; every valid ref is below it. */
  public int count() {
    return count;
  }

  /** Index in {@link #array()} of the first byte of symbol {@code ref}. */
  public int offset(int ref) {
    return offsets[ref];
  }

  /** Length in bytes of symbol {@code ref}. */
  public int length(int ref) {
    return lengths[ref];
  }

  /** Whether symbol {@code ref} is exactly {@code bytes}, compared in place. */
  public boolean contentEquals(int ref, byte[] bytes) {
    return Bytes.equalsAt(array, offsets[ref], lengths[ref], bytes);
  }

  /**
   * Compares symbols {@code a} and {@code b} as unsigned bytes, the order of label names in a
   * series (Prometheus compares Go strings, i.e. bytes). A plain loop: names are short and most
   * differ in their first bytes; it made the PRW 1.0 conversion of the real payload a few percent
   * faster than {@link Arrays#compareUnsigned}.
   */
  public int compare(int a, int b) {
    byte[] x = array;
    int oa = offsets[a];
    int ob = offsets[b];
    int la = lengths[a];
    int lb = lengths[b];
    int n = Math.min(la, lb);
    for (int i = 0; i < n; i++) {
      int d = (x[oa + i] & 0xFF) - (x[ob + i] & 0xFF);
      if (d != 0) {
        return d;
      }
    }
    return la - lb;
  }
}
