package io.prwrelay.server.http;

import io.netty.handler.codec.DateFormatter;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Calendar;
import java.util.Collections;
import java.util.Date;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * The iterators and the name set of a {@link CompactHeaders}, read through it (they see the map as
 * it is when they step, as Netty's do), and the conversion of the values added to it.
 */
final class CompactHeaderViews {
  private CompactHeaderViews() {}

  static Iterator<Map.Entry<String, String>> entries(CompactHeaders h) {
    return new Iterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < h.size();
      }

      @Override
      public Map.Entry<String, String> next() {
        if (next >= h.size()) {
          throw new NoSuchElementException();
        }
        int i = next++;
        return Map.entry(h.nameAt(i).toString(), h.valueAt(i).toString());
      }
    };
  }

  static Iterator<Map.Entry<CharSequence, CharSequence>> charSequenceEntries(CompactHeaders h) {
    return new Iterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < h.size();
      }

      @Override
      public Map.Entry<CharSequence, CharSequence> next() {
        if (next >= h.size()) {
          throw new NoSuchElementException();
        }
        int i = next++;
        return Map.entry(h.nameAt(i), h.valueAt(i));
      }
    };
  }

  static Iterator<? extends CharSequence> values(CompactHeaders h, CharSequence name) {
    return new Iterator<CharSequence>() {
      private int next = advance(0);

      private int advance(int from) {
        for (int i = from; i < h.size(); i++) {
          if (CompactHeaders.sameName(h.nameAt(i), name)) {
            return i;
          }
        }
        return h.size();
      }

      @Override
      public boolean hasNext() {
        return next < h.size();
      }

      @Override
      public CharSequence next() {
        if (next >= h.size()) {
          throw new NoSuchElementException();
        }
        CharSequence v = h.valueAt(next);
        next = advance(next + 1);
        return v;
      }
    };
  }

  static Iterator<String> valueStrings(CompactHeaders h, CharSequence name) {
    Iterator<? extends CharSequence> values = values(h, name);
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return values.hasNext();
      }

      @Override
      public String next() {
        return values.next().toString();
      }
    };
  }

  /**
   * The names as added, each once, as Netty's map gives them: a name added once as a {@code String}
   * and once as an {@code AsciiString} is there twice.
   */
  static Set<String> names(CompactHeaders h) {
    Set<CharSequence> names = new LinkedHashSet<>(h.size());
    for (int i = 0; i < h.size(); i++) {
      names.add(h.nameAt(i));
    }
    return new AbstractSet<>() {
      @Override
      public Iterator<String> iterator() {
        Iterator<CharSequence> it = names.iterator();
        return new Iterator<>() {
          @Override
          public boolean hasNext() {
            return it.hasNext();
          }

          @Override
          public String next() {
            return it.next().toString();
          }
        };
      }

      @Override
      public int size() {
        return names.size();
      }
    };
  }

  /** An added value as Netty's map converts it (dates as HTTP dates), with its messages. */
  static CharSequence fromObject(CharSequence name, Object value) {
    if (value == null) {
      throw new NullPointerException("value");
    }
    try {
      if (value instanceof CharSequence cs) {
        return cs;
      }
      if (value instanceof Date d) {
        return DateFormatter.format(d);
      }
      if (value instanceof Calendar c) {
        return DateFormatter.format(c.getTime());
      }
      return value.toString();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "Failed to convert object value for header '" + name + '\'', e);
    }
  }

  /**
   * The values of {@code name} in order, from its first pair at {@code first} (-1: none); a name's
   * one value in a list of one. Read-only.
   */
  static List<String> values(CompactHeaders h, CharSequence name, int first) {
    if (first < 0) {
      return Collections.emptyList();
    }
    String value = h.valueAt(first).toString();
    List<String> values = null;
    for (int j = first + 1; j < h.size(); j++) {
      if (CompactHeaders.sameName(h.nameAt(j), name)) {
        if (values == null) {
          values = new ArrayList<>(4);
          values.add(value);
        }
        values.add(h.valueAt(j).toString());
      }
    }
    return values == null ? Collections.singletonList(value) : Collections.unmodifiableList(values);
  }

  /** Every header as a name and value pair of strings, in order. */
  static List<Map.Entry<String, String>> entryList(CompactHeaders h) {
    if (h.isEmpty()) {
      return Collections.emptyList();
    }
    List<Map.Entry<String, String>> entries = new ArrayList<>(h.size());
    for (Map.Entry<String, String> e : h) {
      entries.add(e);
    }
    return entries;
  }
}
