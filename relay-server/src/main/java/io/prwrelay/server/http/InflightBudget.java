package io.prwrelay.server.http;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * The memory budget of request bodies ({@code relay.server.max-inflight-bytes}): a request's
 * declared body size is admitted against it before its body buffer is allocated, and held until the
 * request is answered (or abandoned). One client address may hold at most {@code perClientLimit} of
 * it, so that one host stalling many large bodies cannot lock every other sender out. Thread-safe:
 * connections on every event loop share one budget.
 */
final class InflightBudget {
  /** Why a request was not admitted; the tag is the metric label. */
  enum Refusal {
    /** The whole budget is in use. */
    TOTAL("total"),
    /** The client's share of the budget is in use. */
    CLIENT("client");

    final String tag;

    Refusal(String tag) {
      this.tag = tag;
    }
  }

  private final long limit;
  private final long perClientLimit;
  private long inUse;
  private final Map<InetAddress, Long> byClient = new HashMap<>();

  /**
   * @param limit bytes admitted at once
   * @param perClientLimit bytes one client address may hold, at most {@code limit}
   */
  InflightBudget(long limit, long perClientLimit) {
    this.limit = limit;
    this.perClientLimit = Math.min(limit, perClientLimit);
  }

  /** What {@link #admit} decided: a reservation to release exactly once, or why there is none. */
  record Admission(Reservation reservation, Refusal refusal) {}

  /**
   * Admits {@code bytes} for {@code client}.
   *
   * @param client the sender's address, or {@code null} when unknown (only the total applies)
   */
  synchronized Admission admit(InetAddress client, long bytes) {
    if (inUse + bytes > limit) {
      return new Admission(null, Refusal.TOTAL);
    }
    if (client != null && byClient.getOrDefault(client, 0L) + bytes > perClientLimit) {
      return new Admission(null, Refusal.CLIENT);
    }
    inUse += bytes;
    if (client != null) {
      byClient.merge(client, bytes, Long::sum);
    }
    return new Admission(new Reservation(client, bytes), null);
  }

  private synchronized void release(Reservation r) {
    inUse -= r.bytes;
    if (r.client != null) {
      byClient.computeIfPresent(r.client, (k, held) -> held == r.bytes ? null : held - r.bytes);
    }
  }

  /** Bytes admitted and not yet released. */
  synchronized long inUse() {
    return inUse;
  }

  long limit() {
    return limit;
  }

  long perClientLimit() {
    return perClientLimit;
  }

  /** Bytes admitted for one request; released once, further releases do nothing. */
  final class Reservation {
    private final InetAddress client;
    private final long bytes;
    private boolean released;

    private Reservation(InetAddress client, long bytes) {
      this.client = client;
      this.bytes = bytes;
    }

    /** Returns the bytes to the budget, the first time only. */
    void release() {
      synchronized (InflightBudget.this) {
        if (released) {
          return;
        }
        released = true;
        InflightBudget.this.release(this);
      }
    }
  }
}
