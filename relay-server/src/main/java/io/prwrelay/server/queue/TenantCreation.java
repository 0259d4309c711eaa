package io.prwrelay.server.queue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Makes new tenants' directories off the I/O thread, so that appends of tenants whose queues exist
 * never wait for them. A new tenant's directory costs a directory, a {@code tenant} file, a first
 * segment and four flushes (the file, the directory twice, the queue directory): 2 ms or more on a
 * real disk, so 5,000 new tenants made one after another on the I/O thread held every other
 * tenant's append for 10 s. Here they are made by {@value #THREADS} threads of their own; the
 * appends of such a tenant wait, in order, parked beside it, and go back to the I/O thread in one
 * task once its files are there ({@link TenantLog#adopt}), ahead of appends that came later.
 *
 * <p>State, I/O thread only: the appends parked by tenant. Bound: they are appends the lanes handed
 * the store, each holding a slice of a request body that the ingress's in-flight budget already
 * counts until the request is answered; this class copies nothing.
 *
 * @param <T> a parked append
 */
final class TenantCreation<T> {
  /** Threads making directories at once: enough to share journal commits, few to stay cheap. */
  static final int THREADS = 4;

  private final IoThread ioThread;
  private final Consumer<List<T>> resume;
  private final BiConsumer<List<T>, IOException> fail;
  private final Map<TenantLog, List<T>> parked = new IdentityHashMap<>();
  private final ThreadPoolExecutor makers;

  /** The tenants whose files are being made, by tenant. I/O thread. */
  private final Map<TenantLog, Making> making = new IdentityHashMap<>();

  /**
   * @param resume takes the appends of a tenant whose files are ready, in order (I/O thread)
   * @param fail fails the appends of a tenant whose files could not be made (I/O thread)
   */
  TenantCreation(
      IoThread ioThread, Consumer<List<T>> resume, BiConsumer<List<T>, IOException> fail) {
    this.ioThread = ioThread;
    this.resume = resume;
    this.fail = fail;
    AtomicInteger ids = new AtomicInteger();
    this.makers =
        new ThreadPoolExecutor(
            THREADS,
            THREADS,
            10,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "prw-relay-queue-create-" + ids.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.makers.allowCoreThreadTimeOut(true);
  }

  /**
   * Parks {@code append} when its tenant's files are being made or must be (starting that); I/O
   * thread.
   *
   * @return false when the tenant's files are there: write the append now
   */
  boolean park(TenantLog log, T append) {
    List<T> waiting = parked.get(log);
    if (waiting == null) {
      if (!log.needsFiles()) {
        return false;
      }
      waiting = new ArrayList<>();
      parked.put(log, waiting);
      make(log);
    }
    waiting.add(append);
    return true;
  }

  /**
   * Waits for the tenants whose files are being made, at most {@code waitMillis} in all, and
   * resumes their appends as {@link #made} would; the store's last flush calls it so that appends
   * handed to the store before it closed are written, not failed, when their tenant is new. Appends
   * whose tenant's files are not made in time are left parked for {@link #failAll}. I/O thread.
   */
  void finishMaking(long waitMillis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
    for (Making m : new ArrayList<>(making.values())) {
      if (!m.claim()) {
        continue; // its result is being handled
      }
      long left = deadline - System.nanoTime();
      Made result;
      try {
        result = m.result.get(Math.max(0, left), TimeUnit.NANOSECONDS);
      } catch (TimeoutException | ExecutionException | InterruptedException e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        // Its appends fail with the others left parked; files made later are closed then.
        m.result.thenAccept(
            late -> {
              if (late.segment != null) {
                late.segment.closeChannel();
              }
            });
        continue;
      }
      made(m.log, result.segment, result.error);
    }
  }

  /** Fails every parked append with {@code e} (the store closes). I/O thread. */
  void failAll(IOException e) {
    for (List<T> waiting : parked.values()) {
      fail.accept(waiting, e);
    }
    parked.clear();
    making.clear();
  }

  /** Stops the threads; a directory being made is left for replay to find empty. */
  void close() {
    makers.shutdown();
  }

  private void make(TenantLog log) {
    long id = log.reserveSegmentId();
    Making m = new Making(log);
    making.put(log, m);
    Runnable task =
        () -> {
          Segment made = null;
          IOException error = null;
          try {
            made = log.makeFiles(id);
          } catch (IOException e) {
            error = e;
          } catch (RuntimeException e) {
            error =
                new IOException("cannot create the queue of tenant " + log.tenant + ": " + e, e);
          }
          Made result = new Made(made, error);
          m.result.complete(result);
          try {
            ioThread.execute(
                () -> {
                  if (m.claim()) {
                    made(log, result.segment, result.error);
                  }
                });
          } catch (RejectedExecutionException closed) {
            if (m.claim() && result.segment != null) {
              result.segment.closeChannel(); // the store closed and failed the parked appends
            }
          }
        };
    try {
      makers.execute(task);
    } catch (RejectedExecutionException closed) {
      m.claim();
      made(log, null, ioThread.closedException());
    }
  }

  /** The files of {@code log} were made ({@code s}) or not ({@code error}). I/O thread. */
  private void made(TenantLog log, Segment s, IOException error) {
    making.remove(log);
    List<T> waiting = parked.remove(log);
    if (ioThread.isIoClosed() || waiting == null) {
      if (s != null) {
        s.closeChannel();
      }
      if (waiting != null) {
        fail.accept(waiting, ioThread.closedException());
      }
      return;
    }
    if (error != null) {
      fail.accept(waiting, error);
      return;
    }
    log.adopt(s);
    resume.accept(waiting);
  }

  /** What making a tenant's files gave: the segment, or the failure. */
  private record Made(Segment segment, IOException error) {}

  /**
   * One tenant's files being made. Its result is taken once, by whichever comes first: the task the
   * maker hands the I/O thread, or the store's last flush ({@link #finishMaking}).
   */
  private static final class Making {
    final TenantLog log;
    final CompletableFuture<Made> result = new CompletableFuture<>();
    private final AtomicBoolean taken = new AtomicBoolean();

    Making(TenantLog log) {
      this.log = log;
    }

    boolean claim() {
      return taken.compareAndSet(false, true);
    }
  }
}
