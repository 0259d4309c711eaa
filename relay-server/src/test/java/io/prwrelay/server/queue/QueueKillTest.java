package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.QueueTesting.peekAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real {@code kill -9} of a JVM that is appending: every acknowledged record survives. */
class QueueKillTest {
  private static final int ACKS_BEFORE_KILL = 2_000;

  @TempDir Path dir;

  @Test
  void everyAcknowledgedRecordSurvivesKillNine() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child =
        new ProcessBuilder(
                java,
                "-Xmx128m",
                "-cp",
                System.getProperty("java.class.path"),
                QueueKillChild.class.getName(),
                dir.toString())
            .redirectErrorStream(true)
            .start();
    Set<Long> acked = new HashSet<>();
    List<String> other = new ArrayList<>();
    CountDownLatch enough = new CountDownLatch(1);
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                  if (line.startsWith("acked ")) {
                    synchronized (acked) {
                      acked.add(Long.parseLong(line.substring(6)));
                      if (acked.size() >= ACKS_BEFORE_KILL) {
                        enough.countDown();
                      }
                    }
                  } else {
                    other.add(line);
                  }
                }
              } catch (Exception e) {
                other.add(e.toString());
              }
            });
    reader.start();
    try {
      assertTrue(
          enough.await(120, TimeUnit.SECONDS), () -> "child did not acknowledge enough: " + other);
    } finally {
      child.destroyForcibly();
      child.waitFor(30, TimeUnit.SECONDS);
      reader.join(30_000);
    }

    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      List<String> found = peekAll(store.queue("t"));
      Set<Long> ids = new HashSet<>();
      for (int i = 0; i < found.size(); i++) {
        assertEquals(Long.toString(i), found.get(i), "records in order, from 0, without gaps");
        ids.add((long) i);
      }
      synchronized (acked) {
        assertTrue(acked.size() >= ACKS_BEFORE_KILL);
        assertTrue(
            ids.containsAll(acked),
            "acknowledged " + acked.size() + ", found " + found.size() + " records");
      }
    }
  }
}
