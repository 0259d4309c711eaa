package io.prwrelay.server.insight;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The bottom-k sample against an exact oracle (every distinct key seen, sorted): after any stream
 * of keys, repeated or not, in any order, it holds exactly the {@link SeriesSample#CAPACITY}
 * smallest distinct keys, each with the name it was first added with.
 */
class SeriesSampleTest {
  private static Map<Long, Long> held(SeriesSample s) {
    Map<Long, Long> out = new HashMap<>();
    for (int i = 0; i < s.size(); i++) {
      out.put(s.key(i), s.name(i));
    }
    return out;
  }

  private static Map<Long, Long> smallest(TreeMap<Long, Long> all) {
    Map<Long, Long> out = new HashMap<>();
    for (Map.Entry<Long, Long> e : all.entrySet()) {
      if (out.size() == SeriesSample.CAPACITY) {
        break;
      }
      out.put(e.getKey(), e.getValue());
    }
    return out;
  }

  @Test
  void holdsExactlyTheSmallestDistinctKeysWhateverTheStream() {
    SplittableRandom random = new SplittableRandom(31);
    for (int trial = 0; trial < 50; trial++) {
      SeriesSample sample = new SeriesSample();
      TreeMap<Long, Long> all = new TreeMap<>();
      int distinct = 1 + random.nextInt(5_000);
      long[] keys = new long[distinct];
      for (int i = 0; i < distinct; i++) {
        // Few low bits in some trials, so that keys share home slots and probe past each other.
        keys[i] =
            trial % 2 == 0
                ? SeriesSample.key(random.nextLong())
                : (random.nextLong() >>> 1) & ~0x1FFL | random.nextInt(4);
      }
      for (int step = 0; step < distinct * 3; step++) {
        long key = keys[random.nextInt(distinct)];
        long name = key % 7;
        sample.add(key, name);
        all.putIfAbsent(key, name);
        if (step % 997 == 0) {
          assertEquals(smallest(all), held(sample), "trial " + trial + ", step " + step);
        }
      }
      assertEquals(smallest(all), held(sample), "trial " + trial);
      sample.clear();
      assertEquals(0, sample.size());
      sample.add(5, 1);
      assertEquals(Map.of(5L, 1L), held(sample));
    }
  }

  @Test
  void theSmallestKeysOfSeveralBucketsAreTheSmallestOfTheirUnion() {
    SplittableRandom random = new SplittableRandom(32);
    SeriesSample[] buckets = new SeriesSample[10];
    TreeMap<Long, Long> union = new TreeMap<>();
    long[] steady = new long[3000];
    for (int i = 0; i < steady.length; i++) {
      steady[i] = SeriesSample.key(random.nextLong());
    }
    for (int b = 0; b < buckets.length; b++) {
      buckets[b] = new SeriesSample();
      for (long k : steady) {
        buckets[b].add(k, 1);
        union.putIfAbsent(k, 1L);
      }
      for (int i = 0; i < 2000; i++) {
        long k = SeriesSample.key(random.nextLong());
        buckets[b].add(k, 2);
        union.putIfAbsent(k, 2L);
      }
    }
    MetricBreakdown merged = new MetricBreakdown();
    TopNames none = new TopNames();
    none.add(1);
    for (int b = 0; b < buckets.length; b++) {
      merged.add(b, buckets[b], none, 0);
    }
    MetricNames names = new MetricNames(16, 1 << 10);
    names.learn(1, "steady".getBytes(), 0, 6);
    names.learn(2, "exploding".getBytes(), 0, 9);
    long steadyInSample = smallest(union).values().stream().filter(n -> n == 1).count();
    var top = merged.top(Long.MAX_VALUE, 0, names);
    // 3,000 steady series and 20,000 others: the exact sample's shares, whatever the buckets.
    assertEquals("exploding", top.get(0).name());
    assertEquals(1 - (double) steadyInSample / SeriesSample.CAPACITY, top.get(0).share(), 1e-12);
    assertEquals((double) steadyInSample / SeriesSample.CAPACITY, top.get(1).share(), 1e-12);
  }
}
