package io.prwrelay.server.queue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Helpers shared by the queue tests. */
final class QueueTesting {
  static final long T0 = 1_700_000_000_000L;

  private QueueTesting() {}

  /** A pooled buffer holding {@code text}; the caller releases it. */
  static ByteBuf payload(String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length);
    return buf.writeBytes(bytes);
  }

  /** Appends {@code text} and waits until it is on disk. */
  static void append(FileTenantQueue q, String text, int series, long nowMillis) throws Exception {
    ByteBuf p = payload(text);
    try {
      get(q.append(p, series, nowMillis));
    } finally {
      p.release();
    }
  }

  /** Appends {@code text} without waiting; the payload reference is released at once. */
  static CompletableFuture<Void> appendAsync(FileTenantQueue q, String text, long nowMillis) {
    ByteBuf p = payload(text);
    try {
      return q.append(p, 1, nowMillis);
    } finally {
      p.release();
    }
  }

  /** Reads up to {@code max} records, releases their payloads, and returns them as text. */
  static List<String> peek(FileTenantQueue q, int max) throws Exception {
    List<QueuedRecord> records = get(q.read(max, Long.MAX_VALUE, PooledByteBufAllocator.DEFAULT));
    return texts(records);
  }

  /** Every queued record as text, without consuming any. */
  static List<String> peekAll(FileTenantQueue q) throws Exception {
    return peek(q, Integer.MAX_VALUE);
  }

  /** Reads up to {@code max} records, acknowledges them, and returns them as text. */
  static List<String> take(FileTenantQueue q, int max) throws Exception {
    List<QueuedRecord> records = get(q.read(max, Long.MAX_VALUE, PooledByteBufAllocator.DEFAULT));
    get(q.ack(records));
    return texts(records);
  }

  static List<String> texts(List<QueuedRecord> records) {
    List<String> out = new ArrayList<>();
    for (QueuedRecord r : records) {
      out.add(r.payload().toString(StandardCharsets.UTF_8));
      r.payload().release();
    }
    return out;
  }

  static <T> T get(CompletableFuture<T> f) throws Exception {
    try {
      return f.get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception) {
        throw (Exception) e.getCause();
      }
      throw e;
    }
  }

  /** The segment files of a tenant directory, oldest first. */
  static List<Path> segmentFiles(Path tenantDir) throws IOException {
    try (Stream<Path> s = Files.list(tenantDir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".seg")).sorted().toList();
    }
  }

  /** Copies a directory tree. */
  static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path p : (Iterable<Path>) s.sorted(Comparator.naturalOrder())::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }

  /** Records every drop and cut reported. */
  static final class RecordingListener implements QueueListener {
    final Map<String, long[]> drops = new ConcurrentHashMap<>();
    final List<String> cuts = new CopyOnWriteArrayList<>();
    volatile long cutBytes;

    @Override
    public void dropped(String tenant, DropReason reason, long records, long series, long bytes) {
      long[] sum = drops.computeIfAbsent(tenant + "/" + reason.label(), k -> new long[3]);
      sum[0] += records;
      sum[1] += series;
      sum[2] += bytes;
    }

    @Override
    public void tailCut(String tenant, Path segment, long bytes) {
      cuts.add(tenant + " " + segment.getFileName() + " " + bytes);
      cutBytes += bytes;
    }

    /** {records, series, bytes} dropped for tenant and reason, zeros if none. */
    long[] dropped(String tenant, DropReason reason) {
      return drops.getOrDefault(tenant + "/" + reason.label(), new long[3]);
    }
  }
}
