package io.prwrelay.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class GcPausesTest {
  @Test
  void countsPauseLinesOnceWhateverTheCollector() {
    GcPauses p =
        GcPauses.parse(
            Stream.of(
                "[0.709s][info][gc,start    ] GC(0) Pause Young (Normal) (G1 Evacuation Pause)",
                "[0.720s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause)"
                    + " 19M->7M(388M) 11.367ms",
                "[0.721s][info][gc,cpu      ] GC(0) User=0.02s Sys=0.00s Real=0.01s",
                "[1.572s][info][gc             ] GC(7) Pause Full (System.gc()) 497M->13M(68M)"
                    + " 30.450ms",
                "[1.800s][info][gc          ] GC(8) Concurrent Mark Cycle 12.000ms",
                "[1.378s][info][gc,phases   ] GC(9) Pause Mark Start 0.010ms"));
    assertEquals(3, p.count());
    assertEquals(11.367 + 30.450 + 0.010, p.totalMillis(), 1e-9);
    assertEquals(30.450, p.maxMillis(), 1e-9);
  }
}
