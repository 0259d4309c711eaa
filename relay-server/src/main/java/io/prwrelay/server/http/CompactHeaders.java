package io.prwrelay.server.http;

import io.netty.handler.codec.CharSequenceValueConverter;
import io.netty.handler.codec.DefaultHeaders;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.util.AsciiString;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The header map of a request head: names and values side by side in one array, in the order they
 * were added, found by a scan (a head holds a handful). It behaves as Netty's {@code
 * DefaultHttpHeaders} does, with the same validators and the same messages when they refuse (names
 * case-insensitive, values in insertion order, {@code get} the first), but holds no entry object
 * per header and no hash table: the request decoder makes one for every request.
 *
 * <p>Not thread-safe, as Netty's is not.
 */
final class CompactHeaders extends HttpHeaders {
  private static final CharSequenceValueConverter CONVERTER = CharSequenceValueConverter.INSTANCE;

  private final DefaultHeaders.NameValidator<CharSequence> nameValidator;
  private final DefaultHeaders.ValueValidator<CharSequence> valueValidator;

  /** Name, value, name, value, ...; {@code 2 * size} of them in use. */
  private CharSequence[] pairs;

  private int size;

  /** Most headers the map takes; one more is refused ({@link TooLongHttpHeaderException}). */
  private final int maxSize;

  /** The storage of a map made with no room: an array is made when the first header is added. */
  private static final CharSequence[] NONE = {};

  /**
   * @param validation whose name and value validators the map uses
   * @param sizeHint headers the map makes room for at first; 0 for none until one is added (the
   *     request's trailers, which senders do not send)
   */
  CompactHeaders(DefaultHttpHeadersFactory validation, int sizeHint) {
    this(validation, sizeHint, Integer.MAX_VALUE);
  }

  /**
   * @param maxSize most headers the map takes: the decoder's {@code add} of one more throws {@link
   *     TooLongHttpHeaderException}, which Netty's decoder turns into a request that failed to
   *     decode
   */
  CompactHeaders(DefaultHttpHeadersFactory validation, int sizeHint, int maxSize) {
    this.nameValidator = validation.getNameValidator();
    this.valueValidator = validation.getValueValidator();
    this.pairs = sizeHint <= 0 ? NONE : new CharSequence[2 * sizeHint];
    this.maxSize = maxSize;
  }

  /** Headers the map holds room for without growing. */
  int capacity() {
    return pairs.length / 2;
  }

  /** A factory of maps validated as {@code validation}'s, with room for {@code sizeHint}. */
  static HttpHeadersFactory factory(DefaultHttpHeadersFactory validation, int sizeHint) {
    return factory(validation, sizeHint, Integer.MAX_VALUE);
  }

  /**
   * A factory of maps validated as {@code validation}'s, with room for {@code sizeHint}, each
   * taking at most {@code maxSize} headers.
   */
  static HttpHeadersFactory factory(
      DefaultHttpHeadersFactory validation, int sizeHint, int maxSize) {
    return new HttpHeadersFactory() {
      @Override
      public HttpHeaders newHeaders() {
        return new CompactHeaders(validation, sizeHint, maxSize);
      }

      @Override
      public HttpHeaders newEmptyHeaders() {
        return new CompactHeaders(validation, sizeHint, maxSize);
      }
    };
  }

  /** The name of the {@code i}th header, {@code 0 <= i < size()}. */
  CharSequence nameAt(int i) {
    return pairs[2 * i];
  }

  /** The value of the {@code i}th header, {@code 0 <= i < size()}. */
  CharSequence valueAt(int i) {
    return pairs[2 * i + 1];
  }

  /** Whether two header names are the same name (ASCII case ignored). */
  static boolean sameName(CharSequence a, CharSequence b) {
    return a.length() == b.length() && AsciiString.contentEqualsIgnoreCase(a, b);
  }

  /** Index of the first pair named {@code name}, or -1. */
  private int first(CharSequence name) {
    for (int i = 0; i < size; i++) {
      if (sameName(pairs[2 * i], name)) {
        return i;
      }
    }
    return -1;
  }

  private CharSequence firstValue(CharSequence name) {
    int i = first(name);
    return i < 0 ? null : pairs[2 * i + 1];
  }

  // Validation and conversion as Netty's DefaultHeaders does them, messages included.

  private void validateName(CharSequence name) {
    nameValidator.validateName(name);
  }

  private void validateValue(CharSequence name, CharSequence value) {
    try {
      valueValidator.validate(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("Validation failed for header '" + name + "'", e);
    }
  }

  private void append(CharSequence name, CharSequence value) {
    if (size == maxSize) {
      throw new TooLongHttpHeaderException("more than " + maxSize + " header fields");
    }
    if (2 * size == pairs.length) {
      pairs = Arrays.copyOf(pairs, Math.max(2, 2 * pairs.length));
    }
    pairs[2 * size] = name;
    pairs[2 * size + 1] = value;
    size++;
  }

  private void addValidated(CharSequence name, CharSequence value) {
    validateName(name);
    validateValue(name, value);
    append(name, value);
  }

  /** Removes every pair named {@code name}, keeping the others in order. */
  private boolean removeAll(CharSequence name) {
    int kept = 0;
    for (int i = 0; i < size; i++) {
      if (!sameName(pairs[2 * i], name)) {
        pairs[2 * kept] = pairs[2 * i];
        pairs[2 * kept + 1] = pairs[2 * i + 1];
        kept++;
      }
    }
    boolean removed = kept < size;
    for (int i = 2 * kept; i < 2 * size; i++) {
      pairs[i] = null;
    }
    size = kept;
    return removed;
  }

  /**
   * The first value of {@code name} converted, or null when there is none or it does not convert.
   */
  private <T> T converted(CharSequence name, Function<CharSequence, T> convert) {
    CharSequence v = firstValue(name);
    try {
      return v == null ? null : convert.apply(v);
    } catch (RuntimeException e) {
      return null;
    }
  }

  @Override
  public String get(String name) {
    return get((CharSequence) name);
  }

  @Override
  public String get(CharSequence name) {
    CharSequence v = firstValue(name);
    return v == null ? null : v.toString();
  }

  @Override
  public Integer getInt(CharSequence name) {
    return converted(name, CONVERTER::convertToInt);
  }

  @Override
  public int getInt(CharSequence name, int defaultValue) {
    Integer v = getInt(name);
    return v == null ? defaultValue : v;
  }

  @Override
  public Short getShort(CharSequence name) {
    return converted(name, CONVERTER::convertToShort);
  }

  @Override
  public short getShort(CharSequence name, short defaultValue) {
    Short v = getShort(name);
    return v == null ? defaultValue : v;
  }

  @Override
  public Long getTimeMillis(CharSequence name) {
    return converted(name, CONVERTER::convertToTimeMillis);
  }

  @Override
  public long getTimeMillis(CharSequence name, long defaultValue) {
    Long v = getTimeMillis(name);
    return v == null ? defaultValue : v;
  }

  @Override
  public List<String> getAll(String name) {
    return getAll((CharSequence) name);
  }

  /** The values of {@code name} in order; a name's one value in a list of one. Read-only. */
  @Override
  public List<String> getAll(CharSequence name) {
    return CompactHeaderViews.values(this, name, first(name));
  }

  @Override
  public List<Map.Entry<String, String>> entries() {
    return CompactHeaderViews.entryList(this);
  }

  @Override
  public boolean contains(String name) {
    return first(name) >= 0;
  }

  @Override
  public boolean contains(CharSequence name) {
    return first(name) >= 0;
  }

  @Override
  public boolean contains(String name, String value, boolean ignoreCase) {
    return contains((CharSequence) name, (CharSequence) value, ignoreCase);
  }

  @Override
  public boolean contains(CharSequence name, CharSequence value, boolean ignoreCase) {
    for (int i = 0; i < size; i++) {
      if (sameName(pairs[2 * i], name)) {
        CharSequence v = pairs[2 * i + 1];
        if (ignoreCase
            ? AsciiString.contentEqualsIgnoreCase(v, value)
            : AsciiString.contentEquals(v, value)) {
          return true;
        }
      }
    }
    return false;
  }

  @Override
  public Iterator<Map.Entry<String, String>> iterator() {
    return CompactHeaderViews.entries(this);
  }

  @Override
  public Iterator<Map.Entry<CharSequence, CharSequence>> iteratorCharSequence() {
    return CompactHeaderViews.charSequenceEntries(this);
  }

  @Override
  public Iterator<? extends CharSequence> valueCharSequenceIterator(CharSequence name) {
    return CompactHeaderViews.values(this, name);
  }

  @Override
  public Iterator<String> valueStringIterator(CharSequence name) {
    return CompactHeaderViews.valueStrings(this, name);
  }

  @Override
  public boolean isEmpty() {
    return size == 0;
  }

  @Override
  public int size() {
    return size;
  }

  /**
   * The names as added, each once, as Netty's map gives them: a name added once as a {@code String}
   * and once as an {@code AsciiString} is there twice.
   */
  @Override
  public Set<String> names() {
    return CompactHeaderViews.names(this);
  }

  @Override
  public HttpHeaders add(String name, Object value) {
    return add((CharSequence) name, value);
  }

  @Override
  public HttpHeaders add(CharSequence name, Object value) {
    addValidated(name, CompactHeaderViews.fromObject(name, value));
    return this;
  }

  @Override
  public HttpHeaders add(String name, Iterable<?> values) {
    return add((CharSequence) name, values);
  }

  @Override
  public HttpHeaders add(CharSequence name, Iterable<?> values) {
    for (Object v : values) {
      addValidated(name, CompactHeaderViews.fromObject(name, v));
    }
    return this;
  }

  @Override
  public HttpHeaders addInt(CharSequence name, int value) {
    addValidated(name, CONVERTER.convertInt(value));
    return this;
  }

  @Override
  public HttpHeaders addShort(CharSequence name, short value) {
    addValidated(name, CONVERTER.convertShort(value));
    return this;
  }

  @Override
  public HttpHeaders set(String name, Object value) {
    return set((CharSequence) name, value);
  }

  @Override
  public HttpHeaders set(CharSequence name, Object value) {
    CharSequence v = CompactHeaderViews.fromObject(name, value);
    validateName(name);
    validateValue(name, v);
    removeAll(name);
    append(name, v);
    return this;
  }

  @Override
  public HttpHeaders set(String name, Iterable<?> values) {
    return set((CharSequence) name, values);
  }

  @Override
  public HttpHeaders set(CharSequence name, Iterable<?> values) {
    if (values == null) {
      throw new NullPointerException("values");
    }
    validateName(name);
    removeAll(name);
    for (Object v : values) {
      if (v == null) {
        break;
      }
      CharSequence converted = CompactHeaderViews.fromObject(name, v);
      validateValue(name, converted);
      append(name, converted);
    }
    return this;
  }

  @Override
  public HttpHeaders setInt(CharSequence name, int value) {
    return set(name, CONVERTER.convertInt(value));
  }

  @Override
  public HttpHeaders setShort(CharSequence name, short value) {
    return set(name, CONVERTER.convertShort(value));
  }

  @Override
  public HttpHeaders remove(String name) {
    removeAll(name);
    return this;
  }

  @Override
  public HttpHeaders remove(CharSequence name) {
    removeAll(name);
    return this;
  }

  @Override
  public HttpHeaders clear() {
    Arrays.fill(pairs, 0, 2 * size, null);
    size = 0;
    return this;
  }
}
