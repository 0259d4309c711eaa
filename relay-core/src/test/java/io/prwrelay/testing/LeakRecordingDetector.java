package io.prwrelay.testing;

import io.netty.util.ResourceLeakDetector;
import java.util.ArrayList;
import java.util.List;

/**
 * Netty leak detector for tests: records every leak report so {@link LeakCheckExtension} can fail
 * the test class that leaked. Installed by {@code -Dio.netty.customResourceLeakDetector} in every
 * test JVM.
 */
public final class LeakRecordingDetector<T> extends ResourceLeakDetector<T> {
  private static final List<String> LEAKS = new ArrayList<>();

  public LeakRecordingDetector(Class<?> resourceType, int samplingInterval) {
    super(resourceType, samplingInterval);
  }

  public LeakRecordingDetector(Class<?> resourceType, int samplingInterval, long maxActive) {
    super(resourceType, samplingInterval);
  }

  @Override
  protected boolean needReport() {
    return true;
  }

  @Override
  protected void reportTracedLeak(String resourceType, String records) {
    record("LEAK: " + resourceType + " was not released." + records);
  }

  @Override
  protected void reportUntracedLeak(String resourceType) {
    record("LEAK: " + resourceType + " was not released (no records).");
  }

  private static void record(String report) {
    synchronized (LEAKS) {
      LEAKS.add(report);
    }
  }

  /** Returns and forgets the leaks reported so far. */
  public static List<String> drain() {
    synchronized (LEAKS) {
      List<String> copy = new ArrayList<>(LEAKS);
      LEAKS.clear();
      return copy;
    }
  }
}
