package io.prwrelay.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty reported a buffer leak while it ran. Registered for every test
 * class via JUnit's extension auto-detection. Netty reports a leak only after the garbage collector
 * has found the unreleased buffer and a later allocation polls for it, so this forces both before
 * looking.
 */
public final class LeakCheckExtension implements AfterAllCallback {
  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    check(context.getDisplayName());
  }

  /** Collects garbage, lets Netty poll for leaks, and throws when any was reported. */
  public static void check(String what) throws InterruptedException {
    for (int round = 0; round < 3; round++) {
      System.gc();
      System.runFinalization();
      Thread.sleep(20);
      for (int i = 0; i < 8; i++) {
        ByteBuf a = PooledByteBufAllocator.DEFAULT.heapBuffer(8);
        a.release();
        ByteBuf b = UnpooledByteBufAllocator.DEFAULT.directBuffer(8);
        b.release();
      }
    }
    List<String> leaks = LeakRecordingDetector.drain();
    if (!leaks.isEmpty()) {
      throw new AssertionError(
          leaks.size()
              + " Netty buffer leak(s) detected while running "
              + what
              + ":\n"
              + String.join("\n", leaks));
    }
  }

  /**
   * Asserts that leak detection is {@code paranoid} in this test JVM and that a buffer dropped
   * without its release is reported by {@link #check}: what every module's tests rely on.
   */
  public static void assertALeakIsReported() {
    assertEquals(ResourceLeakDetector.Level.PARANOID, ResourceLeakDetector.getLevel());
    leakOneBuffer();
    AssertionError e = assertThrows(AssertionError.class, () -> check("leak probe"));
    assertTrue(e.getMessage().contains("LEAK: ByteBuf"), e.getMessage());
  }

  /**
   * Drops a written pooled buffer without releasing it; its last reference dies with this frame.
   */
  private static void leakOneBuffer() {
    ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(64);
    leaked.writeLong(42);
  }
}
