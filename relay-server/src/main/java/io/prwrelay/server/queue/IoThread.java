package io.prwrelay.server.queue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.logging.Logger;

/**
 * The one daemon thread of a store that does all its file work, in submission order, and the
 * store's closed state.
 *
 * <p>Closing has two flags: {@link #isClosed()} is set first, from any thread, so that no new work
 * is taken; {@link #isIoClosed()} is set on this thread after the last task given to {@link #close}
 * (which writes what is pending and closes the files), so that work queued before the close but run
 * after it fails instead of touching closed files.
 */
final class IoThread {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.queue");
  static final long CLOSE_WAIT_SECONDS = 10;

  private final Path dir;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final ThreadPoolExecutor executor;
  private volatile Thread thread;

  /** This thread only. */
  private boolean ioClosed;

  /**
   * @param dir the queue directory, named by the exception of work refused after closing
   */
  IoThread(Path dir) {
    this.dir = dir;
    this.executor =
        new ThreadPoolExecutor(
            1,
            1,
            0,
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "prw-relay-queue-io");
              t.setDaemon(true);
              thread = t;
              return t;
            });
  }

  /** Whether {@link #close} began: no new work is taken. Any thread. */
  boolean isClosed() {
    return closed.get();
  }

  /** Whether the files are closed. This thread only. */
  boolean isIoClosed() {
    return ioClosed;
  }

  /**
   * Runs {@code task} on this thread.
   *
   * @throws RejectedExecutionException when the thread is stopping
   */
  void execute(Runnable task) {
    executor.execute(task);
  }

  /**
   * Runs {@code task} on this thread and completes the future with its result or failure; fails it
   * at once when closed.
   *
   * @param discard releases a result nobody can take any more (the future was cancelled)
   */
  <T> CompletableFuture<T> submit(IoTask<T> task, Consumer<T> discard) {
    CompletableFuture<T> future = new CompletableFuture<>();
    if (closed.get()) {
      future.completeExceptionally(closedException());
      return future;
    }
    try {
      executor.execute(
          () -> {
            if (ioClosed) {
              future.completeExceptionally(closedException());
              return;
            }
            T result;
            try {
              result = task.run();
            } catch (IOException | RuntimeException e) {
              future.completeExceptionally(e);
              return;
            }
            if (!future.complete(result) && discard != null) {
              discard.accept(result);
            }
          });
    } catch (RejectedExecutionException e) {
      future.completeExceptionally(closedException());
    }
    return future;
  }

  /**
   * Takes no more work, runs {@code last} after the work already taken, then stops the thread,
   * waiting for it at most {@value #CLOSE_WAIT_SECONDS} s (unless called on it).
   *
   * @return false when already closed (nothing done)
   */
  boolean close(Runnable last) {
    if (!closed.compareAndSet(false, true)) {
      return false;
    }
    try {
      executor.execute(
          () -> {
            last.run();
            ioClosed = true;
          });
    } catch (RejectedExecutionException e) {
      // Already stopping.
    }
    executor.shutdown();
    if (Thread.currentThread() != thread) {
      try {
        if (!executor.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
          LOG.warning("queue I/O thread did not stop within " + CLOSE_WAIT_SECONDS + " s");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return true;
  }

  /** The failure of work refused because the store is closed. */
  IOException closedException() {
    return new IOException("queue store " + dir + " is closed");
  }

  /** Work for this thread. */
  @FunctionalInterface
  interface IoTask<T> {
    T run() throws IOException;
  }
}
