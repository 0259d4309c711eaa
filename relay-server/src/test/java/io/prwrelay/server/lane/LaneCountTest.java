package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lane count of every loop together never passes its bound, however the loops race. */
@Timeout(30)
class LaneCountTest {
  @Test
  void racingTakersGetExactlyTheBoundAndNoMore() throws Exception {
    int max = 10_000;
    int threads = 8;
    for (int round = 0; round < 20; round++) {
      LaneCount count = new LaneCount(max);
      AtomicInteger granted = new AtomicInteger();
      CyclicBarrier start = new CyclicBarrier(threads);
      List<Thread> all = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Thread th =
            new Thread(
                () -> {
                  try {
                    start.await();
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                  for (int i = 0; i < max; i++) {
                    if (count.tryTake()) {
                      granted.incrementAndGet();
                    }
                  }
                });
        th.start();
        all.add(th);
      }
      for (Thread th : all) {
        th.join();
      }
      assertEquals(max, granted.get(), "round " + round);
      assertEquals(max, count.get(), "round " + round);
    }
  }

  @Test
  void aPlaceGivenBackIsTakenOnceAgain() {
    LaneCount count = new LaneCount(1);
    assertEquals(true, count.tryTake());
    assertEquals(false, count.tryTake());
    count.give();
    assertEquals(true, count.tryTake());
    assertEquals(false, count.tryTake());
    assertEquals(1, count.get());
  }
}
