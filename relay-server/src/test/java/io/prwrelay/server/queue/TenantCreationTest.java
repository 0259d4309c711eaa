package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.QueueTesting.T0;
import static io.prwrelay.server.queue.QueueTesting.append;
import static io.prwrelay.server.queue.QueueTesting.appendAsync;
import static io.prwrelay.server.queue.QueueTesting.get;
import static io.prwrelay.server.queue.QueueTesting.peekAll;
import static io.prwrelay.server.queue.QueueTesting.take;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * New tenants' directories are made off the I/O thread ({@link TenantCreation}): while they are
 * being made, the appends of tenants whose queues exist are written and answered; the new tenants'
 * appends wait, in order, and are written once their files are there.
 */
class TenantCreationTest {
  @TempDir Path dir;

  /** Holds every new tenant file's creation until released. */
  static final class HeldCreation implements SegmentIo {
    final CountDownLatch held = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    @Override
    public FileChannel open(Path path, Set<? extends OpenOption> options) throws IOException {
      if (path.getFileName().toString().startsWith(RecordLayout.TENANT_FILE + ".")) {
        held.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return SegmentIo.super.open(path, options);
    }
  }

  @Test
  void appendsOfKnownTenantsAreAnsweredWhileNewTenantsFilesAreBeingMade() throws Exception {
    HeldCreation io = new HeldCreation();
    Path known = dir.resolve("known");
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE, io)) {
      io.release.countDown();
      append(store.queue("known"), "known-0", 1, T0);
      assertTrue(Files.isDirectory(known));
    }
    HeldCreation held = new HeldCreation();
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE, held)) {
      List<CompletableFuture<Void>> fresh = new ArrayList<>();
      for (int t = 0; t < 50; t++) {
        FileTenantQueue q = store.queue("fresh" + t);
        assertFalse(q.created());
        fresh.add(appendAsync(q, "fresh-" + t + "-a", T0));
        fresh.add(appendAsync(q, "fresh-" + t + "-b", T0));
      }
      assertTrue(held.held.await(30, TimeUnit.SECONDS), "a new tenant's files are being made");
      for (int i = 1; i <= 20; i++) {
        append(store.queue("known"), "known-" + i, 1, T0);
      }
      assertEquals(21, store.queue("known").records(), "written while creation is held");
      assertTrue(fresh.stream().noneMatch(CompletableFuture::isDone), "new tenants wait");

      held.release.countDown();
      for (CompletableFuture<Void> f : fresh) {
        get(f);
      }
      for (int t = 0; t < 50; t++) {
        FileTenantQueue q = store.queue("fresh" + t);
        assertEquals(List.of("fresh-" + t + "-a", "fresh-" + t + "-b"), peekAll(q), "in order");
        assertTrue(q.created());
      }
    }
  }

  @Test
  void closingWhileANewTenantsFilesAreBeingMadeWritesItsAppendsOnceTheyAre() throws Exception {
    HeldCreation held = new HeldCreation();
    QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE, held);
    FileTenantQueue q = store.queue("fresh");
    List<CompletableFuture<Void>> appends = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      appends.add(appendAsync(q, "fresh-" + i, T0));
    }
    assertTrue(held.held.await(30, TimeUnit.SECONDS), "the tenant's files are being made");
    Thread closer = new Thread(store::close, "closer");
    closer.start();
    closer.join(200);
    assertTrue(closer.isAlive(), "close waits for the files being made");
    held.release.countDown();
    closer.join(TimeUnit.SECONDS.toMillis(30));
    assertFalse(closer.isAlive());
    for (CompletableFuture<Void> f : appends) {
      get(f);
    }
    try (QueueStore reopened = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        expected.add("fresh-" + i);
      }
      assertEquals(expected, peekAll(reopened.queue("fresh")), "written before the store closed");
    }
  }

  @Test
  void aNewTenantWhoseDirectoryCannotBeMadeFailsItsAppendsAndOthersGoOn() throws Exception {
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      Files.writeString(dir.resolve("broken"), "a file where the directory belongs");
      CompletableFuture<Void> first = appendAsync(store.queue("broken"), "broken-1", T0);
      CompletableFuture<Void> second = appendAsync(store.queue("broken"), "broken-2", T0);
      append(store.queue("fine"), "fine-1", 1, T0);
      IOException e = assertThrows(IOException.class, () -> get(first));
      assertTrue(e.getMessage().contains("cannot create queue directory"), e.getMessage());
      assertThrows(IOException.class, () -> get(second));
      assertEquals(0, store.queue("broken").records());
      assertEquals(List.of("fine-1"), peekAll(store.queue("fine")));
    }
  }

  @Test
  void aDrainedTenantWhoseFilesWereRemovedIsMadeAgainAndStaysCreated() throws Exception {
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      FileTenantQueue q = store.queue("t");
      append(q, "record-1", 1, T0);
      take(q, 1);
      get(store.expire(T0));
      assertFalse(Files.exists(dir.resolve("t")), "drained: its directory removed");
      assertTrue(q.created());
      append(q, "record-2", 1, T0);
      assertEquals(List.of("record-2"), peekAll(q));
      assertTrue(Files.isDirectory(dir.resolve("t")));
    }
  }

  @Test
  void aForgottenLanesQueueIsForgottenOnlyWhenItHoldsNothingAndHasNoFiles() throws Exception {
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      FileTenantQueue never = store.queue("never");
      store.release("never");
      assertEquals(null, store.find("never"), "a name seen, nothing queued: forgotten");

      FileTenantQueue holding = store.queue("holding");
      append(holding, "record-1", 1, T0);
      store.release("holding");
      assertTrue(store.find("holding") == holding, "records queued: kept");
      take(holding, 1);
      store.release("holding");
      assertTrue(store.find("holding") == holding, "drained, files still there: kept");
      get(store.expire(T0));
      store.release("holding");
      assertEquals(null, store.find("holding"), "drained and its files removed: forgotten");
      FileTenantQueue again = store.queue("holding");
      assertFalse(again.created(), "a new queue, counted as new");
      append(again, "record-2", 1, T0);
      assertEquals(List.of("record-2"), peekAll(again));
      assertFalse(never.created());
    }
  }

  @Test
  void closingFailsTheAppendsOfATenantWhoseFilesAreStillBeingMade() throws Exception {
    HeldCreation held = new HeldCreation();
    QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE, held);
    CompletableFuture<Void> waiting = appendAsync(store.queue("new"), "new-1", T0);
    assertTrue(held.held.await(30, TimeUnit.SECONDS));
    store.close();
    IOException e = assertThrows(IOException.class, () -> get(waiting));
    assertTrue(e.getMessage().contains("is closed"), e.getMessage());
    held.release.countDown();
  }
}
