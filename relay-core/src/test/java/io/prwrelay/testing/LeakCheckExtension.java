package io.prwrelay.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
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
}
