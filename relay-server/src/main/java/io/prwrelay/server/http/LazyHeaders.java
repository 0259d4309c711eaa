package io.prwrelay.server.http;

import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A header map that makes its storage on its first addition: until then it reads as empty and holds
 * nothing but its factory. Every call goes to the map {@code factory} makes, validated as that map
 * validates; for the trailers of requests, which senders never send, yet the request decoder makes
 * a map for every request whose body has a {@code Content-Length}.
 */
final class LazyHeaders extends HttpHeaders {
  private final HttpHeadersFactory factory;

  /** The map that holds the headers, or null while none was added. */
  private HttpHeaders storage;

  private LazyHeaders(HttpHeadersFactory factory) {
    this.factory = factory;
  }

  /** A factory of maps that make their storage with {@code storage} when first added to. */
  static HttpHeadersFactory factory(HttpHeadersFactory storage) {
    return new HttpHeadersFactory() {
      @Override
      public HttpHeaders newHeaders() {
        return new LazyHeaders(storage);
      }

      @Override
      public HttpHeaders newEmptyHeaders() {
        return new LazyHeaders(storage);
      }
    };
  }

  private HttpHeaders read() {
    return storage == null ? EmptyHttpHeaders.INSTANCE : storage;
  }

  private HttpHeaders write() {
    if (storage == null) {
      storage = factory.newHeaders();
    }
    return storage;
  }

  @Override
  public String get(String name) {
    return read().get(name);
  }

  @Override
  public String get(CharSequence name) {
    return read().get(name);
  }

  @Override
  public Integer getInt(CharSequence name) {
    return read().getInt(name);
  }

  @Override
  public int getInt(CharSequence name, int defaultValue) {
    return read().getInt(name, defaultValue);
  }

  @Override
  public Short getShort(CharSequence name) {
    return read().getShort(name);
  }

  @Override
  public short getShort(CharSequence name, short defaultValue) {
    return read().getShort(name, defaultValue);
  }

  @Override
  public Long getTimeMillis(CharSequence name) {
    return read().getTimeMillis(name);
  }

  @Override
  public long getTimeMillis(CharSequence name, long defaultValue) {
    return read().getTimeMillis(name, defaultValue);
  }

  @Override
  public List<String> getAll(String name) {
    return read().getAll(name);
  }

  @Override
  public List<String> getAll(CharSequence name) {
    return read().getAll(name);
  }

  @Override
  public List<Map.Entry<String, String>> entries() {
    return read().entries();
  }

  @Override
  public boolean contains(String name) {
    return read().contains(name);
  }

  @Override
  public boolean contains(CharSequence name) {
    return read().contains(name);
  }

  @Override
  public boolean contains(String name, String value, boolean ignoreCase) {
    return read().contains(name, value, ignoreCase);
  }

  @Override
  public boolean contains(CharSequence name, CharSequence value, boolean ignoreCase) {
    return read().contains(name, value, ignoreCase);
  }

  @Override
  public boolean containsValue(CharSequence name, CharSequence value, boolean ignoreCase) {
    return read().containsValue(name, value, ignoreCase);
  }

  @Override
  public Iterator<Map.Entry<String, String>> iterator() {
    return read().iterator();
  }

  @Override
  public Iterator<Map.Entry<CharSequence, CharSequence>> iteratorCharSequence() {
    return read().iteratorCharSequence();
  }

  @Override
  public Iterator<String> valueStringIterator(CharSequence name) {
    return read().valueStringIterator(name);
  }

  @Override
  public Iterator<? extends CharSequence> valueCharSequenceIterator(CharSequence name) {
    return read().valueCharSequenceIterator(name);
  }

  @Override
  public boolean isEmpty() {
    return read().isEmpty();
  }

  @Override
  public int size() {
    return read().size();
  }

  @Override
  public Set<String> names() {
    return read().names();
  }

  @Override
  public HttpHeaders add(String name, Object value) {
    write().add(name, value);
    return this;
  }

  @Override
  public HttpHeaders add(CharSequence name, Object value) {
    write().add(name, value);
    return this;
  }

  @Override
  public HttpHeaders add(String name, Iterable<?> values) {
    write().add(name, values);
    return this;
  }

  @Override
  public HttpHeaders add(CharSequence name, Iterable<?> values) {
    write().add(name, values);
    return this;
  }

  @Override
  public HttpHeaders add(HttpHeaders headers) {
    if (headers != this) {
      write().add(headers);
    }
    return this;
  }

  @Override
  public HttpHeaders addInt(CharSequence name, int value) {
    write().addInt(name, value);
    return this;
  }

  @Override
  public HttpHeaders addShort(CharSequence name, short value) {
    write().addShort(name, value);
    return this;
  }

  @Override
  public HttpHeaders set(String name, Object value) {
    write().set(name, value);
    return this;
  }

  @Override
  public HttpHeaders set(CharSequence name, Object value) {
    write().set(name, value);
    return this;
  }

  @Override
  public HttpHeaders set(String name, Iterable<?> values) {
    write().set(name, values);
    return this;
  }

  @Override
  public HttpHeaders set(CharSequence name, Iterable<?> values) {
    write().set(name, values);
    return this;
  }

  @Override
  public HttpHeaders set(HttpHeaders headers) {
    if (headers != this) {
      write().set(headers);
    }
    return this;
  }

  @Override
  public HttpHeaders setAll(HttpHeaders headers) {
    if (headers != this) {
      write().setAll(headers);
    }
    return this;
  }

  @Override
  public HttpHeaders setInt(CharSequence name, int value) {
    write().setInt(name, value);
    return this;
  }

  @Override
  public HttpHeaders setShort(CharSequence name, short value) {
    write().setShort(name, value);
    return this;
  }

  @Override
  public HttpHeaders remove(String name) {
    if (storage != null) {
      storage.remove(name);
    }
    return this;
  }

  @Override
  public HttpHeaders remove(CharSequence name) {
    if (storage != null) {
      storage.remove(name);
    }
    return this;
  }

  @Override
  public HttpHeaders clear() {
    if (storage != null) {
      storage.clear();
    }
    return this;
  }

  @Override
  public HttpHeaders copy() {
    return storage == null ? factory.newHeaders() : storage.copy();
  }

  @Override
  public String toString() {
    return storage == null ? super.toString() : storage.toString();
  }
}
