package io.prwrelay.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.Test;

/** The build's leak guard works: paranoid detection is on and a dropped buffer fails the check. */
class LeakCheckExtensionTest {
  @Test
  void leakDetectionIsParanoid() {
    assertEquals(ResourceLeakDetector.Level.PARANOID, ResourceLeakDetector.getLevel());
  }

  @Test
  void anUnreleasedBufferIsReportedAsAFailure() {
    LeakCheckExtension.assertALeakIsReported();
  }
}
