package io.prwrelay.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.util.ResourceLeakDetector;
import io.prwrelay.testing.LeakCheckExtension;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * Netty's buffer leak detection: off in the relay's own process unless the user chose a level, and
 * at its strictest in this module's tests, where a dropped buffer still fails the build.
 */
class LeakDetectionTest {
  @Test
  void theRelayTurnsLeakDetectionOff() {
    assertEquals(ResourceLeakDetector.Level.DISABLED, Main.leakDetection(new Properties()));
  }

  @Test
  void aLevelTheUserChoseIsLeftToNetty() {
    for (String name : Main.LEAK_DETECTION_PROPERTIES) {
      Properties p = new Properties();
      p.setProperty(name, "simple");
      assertNull(Main.leakDetection(p), name);
    }
  }

  @Test
  void theServerTestsRunParanoidAndALeakIsReported() {
    LeakCheckExtension.assertALeakIsReported();
  }
}
