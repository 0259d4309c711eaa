package io.prwrelay.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class ResidentMemoryTest {
  @Test
  void readsPeakAndCurrentResidentSizeInBytes() {
    String status =
        "Name:\tjava\nVmPeak:\t 7864210 kB\nVmHWM:\t  366500 kB\nVmRSS:\t  240100 kB\nThreads:\t22\n";
    assertEquals(
        Optional.of(new ResidentMemory(366_500L * 1024, 240_100L * 1024)),
        ResidentMemory.parse(status));
  }

  @Test
  void aStatusWithoutTheFieldsIsUnknown() {
    assertEquals(Optional.empty(), ResidentMemory.parse("Name:\tkthreadd\nState:\tS (sleeping)\n"));
  }

  @Test
  void readsThisProcess() {
    ResidentMemory m = ResidentMemory.of(ProcessHandle.current().pid()).orElseThrow();
    assertTrue(m.peakBytes() >= m.currentBytes() && m.currentBytes() > 0, m.toString());
  }
}
