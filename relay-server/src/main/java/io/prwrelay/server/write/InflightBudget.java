package io.prwrelay.server.write;

import io.prwrelay.server.config.ServerConfig;
import java.util.HashMap;
import java.util.Map;

/**
 * The memory budget of request bodies ({@code relay.server.max-inflight-bytes}): a request's body
 * buffer is admitted against it before it is allocated, and held until the request is answered (or
 * abandoned). One sender ({@link SenderKey}) may hold at most {@code perClientLimit} of it, so that
 * one host stalling many large bodies cannot lock every other sender out. Thread-safe: connections
 * on every event loop share one budget.
 *
 * <p>Who owns what: the ingress admits each write request's body and owns the {@link Reservation}
 * it gets, releasing it exactly once (answered or abandoned); the write pipeline borrows the
 * reservation with the request ({@link WriteInput}) and grows it before it allocates ({@link
 * RequestGrant}).
 */
public final class InflightBudget {
  /** Why a request was not admitted; the tag is the metric label. */
  public enum Refusal {
    /** The whole budget is in use. */
    TOTAL("total"),
    /** The client's share of the budget is in use. */
    CLIENT("client");

    /** The {@code reason} label of {@code relay_inflight_rejected_total}. */
    public final String tag;

    Refusal(String tag) {
      this.tag = tag;
    }
  }

  private final long limit;
  private final long perClientLimit;
  private long inUse;

  /** Bytes each sender holds; a sender leaves when it holds none. */
  private final Map<SenderKey, Held> byClient = new HashMap<>();

  /** A client's bytes, changed in place (no boxed {@code Long} per request). */
  private static final class Held {
    long bytes;
  }

  /**
   * @param limit bytes admitted at once
   * @param perClientLimit bytes one sender may hold, at most {@code limit}
   */
  public InflightBudget(long limit, long perClientLimit) {
    this.limit = limit;
    this.perClientLimit = Math.min(limit, perClientLimit);
  }

  /**
   * What {@link #admit} decided: a reservation to release exactly once (the {@link Reservation}
   * itself), or why there is none (one shared {@link Refused} per refusal).
   */
  public sealed interface Admission permits Reservation, Refused {
    /** The reservation, or null when refused. */
    Reservation reservation();

    /** Why the budget refused, or null when admitted. */
    Refusal refusal();
  }

  /** An admission refused for {@code refusal}. */
  public record Refused(Refusal refusal) implements Admission {
    static final Refused TOTAL = new Refused(Refusal.TOTAL);
    static final Refused CLIENT = new Refused(Refusal.CLIENT);

    @Override
    public Reservation reservation() {
      return null;
    }
  }

  /**
   * Admits {@code bytes} for {@code client}.
   *
   * @param client the sender, or {@code null} when unknown (only the total applies)
   */
  public synchronized Admission admit(SenderKey client, long bytes) {
    if (inUse + bytes > limit) {
      return Refused.TOTAL;
    }
    if (client != null && held(client) + bytes > perClientLimit) {
      return Refused.CLIENT;
    }
    inUse += bytes;
    if (client != null) {
      add(client, bytes);
    }
    return new Reservation(client, bytes);
  }

  private synchronized void release(Reservation r) {
    inUse -= r.bytes;
    if (r.client != null) {
      Held h = byClient.get(r.client);
      if (h != null) {
        h.bytes -= r.bytes;
        if (h.bytes <= 0) {
          byClient.remove(r.client);
        }
      }
    }
  }

  /** Adds {@code more} bytes to {@code r} when the budget and the client's share allow. */
  private synchronized Refusal grow(Reservation r, long more) {
    if (inUse + more > limit) {
      return Refusal.TOTAL;
    }
    if (r.client != null && held(r.client) + more > perClientLimit) {
      return Refusal.CLIENT;
    }
    inUse += more;
    r.bytes += more;
    if (r.client != null) {
      add(r.client, more);
    }
    return null;
  }

  private long held(SenderKey client) {
    Held h = byClient.get(client);
    return h == null ? 0 : h.bytes;
  }

  private void add(SenderKey client, long bytes) {
    Held h = byClient.get(client);
    if (h == null) {
      h = new Held();
      byClient.put(client, h);
    }
    h.bytes += bytes;
  }

  /**
   * Whether {@code bytes} could ever be admitted for one request, with the whole budget (and the
   * client's share) free: a request that needs more is refused for good (413), not asked to retry.
   */
  boolean couldEverFit(long bytes) {
    return bytes <= perClientLimit;
  }

  /** Bytes admitted and not yet released. */
  public synchronized long inUse() {
    return inUse;
  }

  /** Bytes admitted at once: the whole budget. */
  public long limit() {
    return limit;
  }

  /** Seconds a sender refused by the memory budget is asked to wait. */
  static final long RETRY_AFTER_SECONDS = 5;

  /**
   * The answer to a request the budget refused now: 503, retry later.
   *
   * @param close whether the connection closes after it (its body was not read)
   */
  public Answer refused(Refusal refusal, boolean close) {
    String what =
        refusal == Refusal.TOTAL
            ? "the relay's request memory (" + ServerConfig.MAX_INFLIGHT_BYTES.setTo(limit) + ")"
            : "this client's share of the relay's request memory ("
                + describePerClientLimit()
                + ")";
    return new Answer(503, what + " is in use; retry later", RETRY_AFTER_SECONDS, close);
  }

  /** The per-client limit as {@code key=value}. */
  String describePerClientLimit() {
    return ServerConfig.MAX_INFLIGHT_BYTES_PER_CLIENT.setTo(perClientLimit);
  }

  long perClientLimit() {
    return perClientLimit;
  }

  /**
   * Bytes admitted for one request; may grow while the request is processed ({@link #growTo}: the
   * decompressed body, the tenant batches); released once, further releases do nothing.
   */
  public final class Reservation implements Admission {
    private final SenderKey client;
    private long bytes;
    private boolean released;

    private Reservation(SenderKey client, long bytes) {
      this.client = client;
      this.bytes = bytes;
    }

    /**
     * Grows the reservation to at least {@code total} bytes.
     *
     * @return {@code null} when it holds {@code total} bytes now, else why the budget refused (the
     *     reservation is then unchanged)
     */
    public Refusal growTo(long total) {
      synchronized (InflightBudget.this) {
        if (released || total <= bytes) {
          return null;
        }
        return InflightBudget.this.grow(this, total - bytes);
      }
    }

    /** This reservation: the admission admitted. */
    @Override
    public Reservation reservation() {
      return this;
    }

    @Override
    public Refusal refusal() {
      return null;
    }

    /** The budget this reservation is a share of. */
    InflightBudget budget() {
      return InflightBudget.this;
    }

    /** Bytes held now. */
    long bytes() {
      synchronized (InflightBudget.this) {
        return bytes;
      }
    }

    /** Returns the bytes to the budget, the first time only. */
    public void release() {
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
