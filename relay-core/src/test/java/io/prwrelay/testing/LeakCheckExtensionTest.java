package io.prwrelay.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
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
    leakOneBuffer();
    AssertionError e =
        assertThrows(AssertionError.class, () -> LeakCheckExtension.check("leak probe"));
    assertTrue(e.getMessage().contains("LEAK: ByteBuf"), e.getMessage());
  }

  private static void leakOneBuffer() {
    ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(64);
    leaked.writeLong(42);
  }
}
