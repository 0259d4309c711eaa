package io.prwrelay.server.queue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The in-memory twin of {@link FileTenantQueue} (as Tape's {@code InMemoryObjectQueue} twins its
 * {@code QueueFile}): records kept as byte arrays, and every operation done by a task on one event
 * loop, which completes its future there, in the order the operations were called. On a {@link
 * io.prwrelay.server.downstream.SimulatedLoop} nothing is stored, read or acknowledged until the
 * test runs the loop, so a lane's decisions about its queue can be tested in simulated time, each
 * interleaving chosen by the test.
 *
 * <p>Like the file queue it counts an append once its future completes, reads without consuming,
 * and acknowledges cumulatively. It keeps no bounds, so it never drops a record, and it survives
 * the lanes that use it: lanes opened again over it find what was not acknowledged, as after a
 * restart. Touched only on its loop.
 */
public final class InMemoryTenantQueue implements TenantQueue {
  private final String tenant;
  private final EventLoop loop;
  private final ArrayDeque<Stored> records = new ArrayDeque<>();
  private long nextOffset;
  private long appended;
  private volatile boolean created;
  private String refusal;

  /** One record: its position in this queue (its number) and what was appended. */
  private record Stored(
      long offset, long appendMillis, int series, boolean remoteWrite2, byte[] payload) {}

  InMemoryTenantQueue(String tenant, EventLoop loop) {
    this.tenant = tenant;
    this.loop = loop;
  }

  @Override
  public String tenant() {
    return tenant;
  }

  @Override
  public boolean isEmpty() {
    return records.isEmpty();
  }

  @Override
  public long records() {
    return records.size();
  }

  @Override
  public boolean created() {
    return created;
  }

  /** Records appended since this queue was made, acknowledged or not. */
  public long appended() {
    return appended;
  }

  /**
   * From now on appends fail with an {@link IOException} saying {@code reason}, as a full or
   * unwritable disk fails the file queue's; {@code null} takes them again.
   */
  public void refuseAppends(String reason) {
    refusal = reason;
  }

  /**
   * {@inheritDoc}
   *
   * @param payload borrowed: its readable bytes are copied before this returns
   */
  @Override
  public CompletableFuture<Position> appendAt(
      ByteBuf payload, int series, boolean remoteWrite2, long nowMillis) {
    byte[] bytes = new byte[payload.readableBytes()];
    payload.getBytes(payload.readerIndex(), bytes);
    CompletableFuture<Position> done = new CompletableFuture<>();
    loop.execute(
        () -> {
          if (refusal != null) {
            done.completeExceptionally(new IOException(refusal));
            return;
          }
          long offset = nextOffset++;
          records.add(new Stored(offset, nowMillis, series, remoteWrite2, bytes));
          appended++;
          created = true;
          done.complete(new Position(0, offset));
        });
    return done;
  }

  @Override
  public CompletableFuture<List<QueuedRecord>> read(
      int maxRecords, long maxBytes, ByteBufAllocator alloc) {
    if (maxRecords < 1) {
      throw new IllegalArgumentException("maxRecords must be at least 1: " + maxRecords);
    }
    CompletableFuture<List<QueuedRecord>> done = new CompletableFuture<>();
    loop.execute(
        () -> {
          List<QueuedRecord> out = new ArrayList<>();
          long bytes = 0;
          for (Stored s : records) {
            if (out.size() >= maxRecords
                || (!out.isEmpty() && bytes + s.payload().length > maxBytes)) {
              break;
            }
            ByteBuf payload = alloc.buffer(s.payload().length).writeBytes(s.payload());
            out.add(
                new QueuedRecord(
                    this, 0, s.offset(), s.appendMillis(), s.series(), s.remoteWrite2(), payload));
            bytes += s.payload().length;
          }
          done.complete(out);
        });
    return done;
  }

  @Override
  public CompletableFuture<Void> ack(List<QueuedRecord> read) {
    long last = -1;
    for (QueuedRecord r : read) {
      if (r.queue() != this) {
        throw new IllegalArgumentException(
            "record of tenant " + r.queue().tenant() + " acknowledged on the queue of " + tenant);
      }
      last = Math.max(last, r.offset());
    }
    long through = last;
    CompletableFuture<Void> done = new CompletableFuture<>();
    loop.execute(
        () -> {
          consumeThrough(through);
          done.complete(null);
        });
    return done;
  }

  @Override
  public CompletableFuture<Boolean> ackFrom(Position first, Position last) {
    CompletableFuture<Boolean> done = new CompletableFuture<>();
    loop.execute(
        () -> {
          Stored head = records.peek();
          if (head != null && head.offset() < first.offset()) {
            done.complete(false);
            return;
          }
          consumeThrough(last.offset());
          done.complete(true);
        });
    return done;
  }

  private void consumeThrough(long offset) {
    while (!records.isEmpty() && records.peek().offset() <= offset) {
      records.poll();
    }
  }

  @Override
  public String toString() {
    return "in-memory queue of " + tenant + " (" + records.size() + " records)";
  }
}
