package io.prwrelay.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import org.xerial.snappy.Snappy;

/**
 * Builds PRW 1.0 {@code WriteRequest} bytes exactly as protobuf-java and Prometheus serialize them
 * (shortest varints, fields in number order, empty strings and zero values left out as proto3
 * does), series by series, into a buffer that is reused from one request to the next:
 *
 * <pre>
 * WriteRequestEncoder e = new WriteRequestEncoder();
 * e.beginSeries().label("__name__", "up").label("job", "node").sample(1, 1_700_000_000_000L).endSeries();
 * byte[] body = e.snappy();   // what a sender POSTs with Content-Encoding: snappy
 * e.reset();                  // next request, same buffers
 * </pre>
 *
 * <p>Labels are written in the order given: a caller that wants a valid request passes them sorted
 * by name. After warm-up, encoding allocates nothing but the returned arrays and buffers: label
 * text is encoded to UTF-8 in place and each series is built in a reused scratch buffer.
 *
 * <p>The static {@code *Field} methods return the bytes of single fields, for requests assembled by
 * hand (tests concatenate them, or mix them with malformed bytes). Not thread-safe.
 */
public final class WriteRequestEncoder {
  private static final int LENGTH_DELIMITED = 2;
  private static final int FIXED64 = 1;
  private static final int VARINT = 0;

  /** {@code WriteRequest.timeseries}. */
  private static final int TIMESERIES = 1;

  /** {@code TimeSeries.labels} and {@code TimeSeries.samples}. */
  private static final int LABELS = 1;

  private static final int SAMPLES = 2;

  /** {@code Label.name}, {@code Label.value}; {@code Sample.value}, {@code Sample.timestamp}. */
  private static final int NAME = 1;

  private static final int VALUE = 2;
  private static final int SAMPLE_VALUE = 1;
  private static final int SAMPLE_TIMESTAMP = 2;

  private final Bytes request;
  private final Bytes series = new Bytes(256);
  private byte[] compressed = new byte[0];
  private boolean inSeries;
  private int seriesCount;

  /** An encoder whose request buffer starts at 64 KiB and grows as needed. */
  public WriteRequestEncoder() {
    this(64 << 10);
  }

  /** An encoder whose request buffer starts at {@code initialBytes} and grows as needed. */
  public WriteRequestEncoder(int initialBytes) {
    this.request = new Bytes(initialBytes);
  }

  /** Starts the next series; its labels and samples follow, then {@link #endSeries()}. */
  public WriteRequestEncoder beginSeries() {
    if (inSeries) {
      throw new IllegalStateException("series already begun");
    }
    inSeries = true;
    series.clear();
    return this;
  }

  /** Adds a label to the current series. */
  public WriteRequestEncoder label(CharSequence name, CharSequence value) {
    series().putLabel(name, value);
    return this;
  }

  /** Adds a sample (a float value at a millisecond timestamp) to the current series. */
  public WriteRequestEncoder sample(double value, long timestampMillis) {
    series().putSample(value, timestampMillis);
    return this;
  }

  /** Adds {@code field}, bytes of one or more whole fields, to the current series as they are. */
  public WriteRequestEncoder rawField(byte[] field) {
    series().put(field, 0, field.length);
    return this;
  }

  /** Closes the current series and appends it to the request. */
  public WriteRequestEncoder endSeries() {
    series();
    inSeries = false;
    request.putTag(TIMESERIES, LENGTH_DELIMITED);
    request.putVarint(series.size);
    request.put(series.array, 0, series.size);
    seriesCount++;
    return this;
  }

  /** Empties the request, keeping the buffers for the next one. */
  public WriteRequestEncoder reset() {
    request.clear();
    inSeries = false;
    seriesCount = 0;
    return this;
  }

  /** Series in the request so far. */
  public int seriesCount() {
    return seriesCount;
  }

  /** Uncompressed size of the request so far, in bytes. */
  public int size() {
    return request.size;
  }

  /** A copy of the uncompressed request. */
  public byte[] toByteArray() {
    return Arrays.copyOf(request.array, request.size);
  }

  /** The request as one snappy block (never the framed format), in a new array. */
  public byte[] snappy() {
    int n = compress();
    return Arrays.copyOf(compressed, n);
  }

  /**
   * The request as one snappy block in a new direct buffer from {@code alloc}, sized exactly; the
   * caller owns it and releases it.
   */
  public ByteBuf snappy(ByteBufAllocator alloc) {
    int n = compress();
    return alloc.directBuffer(n, n).writeBytes(compressed, 0, n);
  }

  private int compress() {
    if (inSeries) {
      throw new IllegalStateException("series not ended");
    }
    int max = Snappy.maxCompressedLength(request.size);
    if (compressed.length < max) {
      compressed = new byte[max];
    }
    try {
      return Snappy.rawCompress(request.array, 0, request.size, compressed, 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Bytes series() {
    if (!inSeries) {
      throw new IllegalStateException("no series begun");
    }
    return series;
  }

  /** The bytes of one {@code TimeSeries.labels} field. */
  public static byte[] labelField(String name, String value) {
    return new Bytes(16).putLabel(name, value).toByteArray();
  }

  /** The bytes of one {@code TimeSeries.samples} field. */
  public static byte[] sampleField(double value, long timestampMillis) {
    return new Bytes(20).putSample(value, timestampMillis).toByteArray();
  }

  /** The bytes of one {@code WriteRequest.timeseries} field holding the given fields. */
  public static byte[] seriesField(byte[]... fields) {
    int length = 0;
    for (byte[] f : fields) {
      length += f.length;
    }
    Bytes out = new Bytes(length + 6);
    out.putTag(TIMESERIES, LENGTH_DELIMITED);
    out.putVarint(length);
    for (byte[] f : fields) {
      out.put(f, 0, f.length);
    }
    return out.toByteArray();
  }

  /** A growing byte array with the protobuf primitives the encoder needs. */
  private static final class Bytes {
    byte[] array;
    int size;

    Bytes(int initial) {
      array = new byte[Math.max(16, initial)];
    }

    void clear() {
      size = 0;
    }

    byte[] toByteArray() {
      return Arrays.copyOf(array, size);
    }

    private void ensure(int more) {
      if (array.length - size < more) {
        array = Arrays.copyOf(array, Math.max(array.length * 2, size + more));
      }
    }

    void put(byte[] bytes, int offset, int length) {
      ensure(length);
      System.arraycopy(bytes, offset, array, size, length);
      size += length;
    }

    void putTag(int field, int wireType) {
      putVarint((long) field << 3 | wireType);
    }

    void putVarint(long v) {
      ensure(10);
      while ((v & ~0x7FL) != 0) {
        array[size++] = (byte) (v & 0x7F | 0x80);
        v >>>= 7;
      }
      array[size++] = (byte) v;
    }

    void putFixed64(long v) {
      ensure(8);
      for (int i = 0; i < 8; i++) {
        array[size++] = (byte) (v >>> 8 * i);
      }
    }

    Bytes putLabel(CharSequence name, CharSequence value) {
      int nameLength = utf8Length(name);
      int valueLength = utf8Length(value);
      putTag(LABELS, LENGTH_DELIMITED);
      putVarint(stringFieldSize(nameLength) + stringFieldSize(valueLength));
      putString(NAME, name, nameLength);
      putString(VALUE, value, valueLength);
      return this;
    }

    Bytes putSample(double value, long timestampMillis) {
      long bits = Double.doubleToRawLongBits(value);
      putTag(SAMPLES, LENGTH_DELIMITED);
      putVarint((bits == 0 ? 0 : 9) + (timestampMillis == 0 ? 0 : 1 + varintSize(timestampMillis)));
      if (bits != 0) {
        putTag(SAMPLE_VALUE, FIXED64);
        putFixed64(bits);
      }
      if (timestampMillis != 0) {
        putTag(SAMPLE_TIMESTAMP, VARINT);
        putVarint(timestampMillis);
      }
      return this;
    }

    /** Size of a string field of {@code utf8Length} bytes; proto3 leaves an empty one out. */
    private static int stringFieldSize(int utf8Length) {
      return utf8Length == 0 ? 0 : 1 + varintSize(utf8Length) + utf8Length;
    }

    private void putString(int field, CharSequence s, int utf8Length) {
      if (utf8Length == 0) {
        return;
      }
      putTag(field, LENGTH_DELIMITED);
      putVarint(utf8Length);
      ensure(utf8Length);
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (c < 0x80) {
          array[size++] = (byte) c;
        } else if (c < 0x800) {
          array[size++] = (byte) (0xC0 | c >> 6);
          array[size++] = (byte) (0x80 | c & 0x3F);
        } else if (isPair(s, i)) {
          int cp = Character.toCodePoint(c, s.charAt(++i));
          array[size++] = (byte) (0xF0 | cp >> 18);
          array[size++] = (byte) (0x80 | cp >> 12 & 0x3F);
          array[size++] = (byte) (0x80 | cp >> 6 & 0x3F);
          array[size++] = (byte) (0x80 | cp & 0x3F);
        } else if (Character.isSurrogate(c)) {
          array[size++] = '?'; // as String.getBytes(UTF_8) replaces an unpaired surrogate
        } else {
          array[size++] = (byte) (0xE0 | c >> 12);
          array[size++] = (byte) (0x80 | c >> 6 & 0x3F);
          array[size++] = (byte) (0x80 | c & 0x3F);
        }
      }
    }

    private static int utf8Length(CharSequence s) {
      int n = 0;
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (c < 0x80) {
          n++;
        } else if (c < 0x800) {
          n += 2;
        } else if (isPair(s, i)) {
          n += 4;
          i++;
        } else {
          n += Character.isSurrogate(c) ? 1 : 3;
        }
      }
      return n;
    }

    private static boolean isPair(CharSequence s, int i) {
      return Character.isHighSurrogate(s.charAt(i))
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1));
    }

    private static int varintSize(long v) {
      return v == 0 ? 1 : (63 - Long.numberOfLeadingZeros(v)) / 7 + 1;
    }
  }
}
