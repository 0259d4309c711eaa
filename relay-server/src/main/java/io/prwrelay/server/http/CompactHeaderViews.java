package io.prwrelay.server.http;

import java.util.AbstractSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * The iterators and the name set of a {@link CompactHeaders}, read through it: they see the map as
 * it is when they step, as Netty's do.
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
}
