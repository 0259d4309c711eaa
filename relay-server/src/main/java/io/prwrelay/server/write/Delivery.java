package io.prwrelay.server.write;

import io.netty.buffer.ByteBuf;
import io.prwrelay.server.lane.BatchResult;
import io.prwrelay.server.lane.DeliveryLedger;
import io.prwrelay.server.lane.Fragment;
import io.prwrelay.server.lane.FragmentOutcome;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import io.prwrelay.server.lane.Lanes;
import io.prwrelay.server.lane.LedgerKey;
import io.prwrelay.server.lane.SenderRequest;
import io.prwrelay.server.limits.TenantLimits;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.protocol.Protocol;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The last stage of a write request ({@link WriteProcessor}): hands every tenant batch to its lane
 * ({@link Lanes}) as a {@link Fragment} of one {@link SenderRequest}, and answers the sender once
 * every fragment has its outcome ({@link AnswerPolicy}). Every answer to a PRW 2.0 sender carries
 * the {@code *-Written} headers ({@link AnswerPolicy#written}).
 *
 * <p>Both ledgers of the {@link DeliveryLedger} are keyed by the sender and the body ({@link
 * LedgerKey}): a second sender's byte-identical body is delivered and answered as its own.
 *
 * <p>The {@link DeliveryLedger} matters only when a request has several tenants: one may be
 * delivered while another fails. When the ledger may know the body, the body is hashed at once, and
 * a tenant the ledger knows was delivered by an earlier attempt of the same body is settled without
 * being sent. Otherwise the body is kept until the answer and hashed only if the answer asks for a
 * retry (or is a 429 whose repeats {@code relay.delivery.throttled.policy} counts: past the limit
 * the request is dropped and answered 400). When the answer asks for a retry, the tenants that were
 * delivered are written to the ledger under the body's hash, so the retry sends only the rest.
 *
 * <p>A request that is its own batch, received as snappy, goes to its lane as the body it came in
 * ({@link Fragment#forwardAs}): the downstream is sent the sender's bytes, and nothing is encoded
 * or compressed again ({@code relay_requests_forwarded_whole_total}).
 */
final class Delivery {
  private final Lanes lanes;
  private final DeliveryLedger ledger;
  private final long timeoutNanos;
  private final RelayMetrics metrics;
  private final ThrottledDropLog throttledLog;

  /** The per-tenant samples-per-second limits, or {@code null} when none is configured. */
  private volatile TenantLimits limits;

  /**
   * @param timeoutNanos deadline of a sender request in the lanes, from its start
   */
  Delivery(Lanes lanes, DeliveryLedger ledger, long timeoutNanos, RelayMetrics metrics) {
    this.lanes = lanes;
    this.ledger = ledger;
    this.timeoutNanos = timeoutNanos;
    this.metrics = metrics;
    this.throttledLog = new ThrottledDropLog(metrics);
  }

  /** Has every tenant batch pass its tenant's samples-per-second limit before it goes to a lane. */
  void limits(TenantLimits limits) {
    this.limits = limits;
  }

  /**
   * Binds every batch to one {@link SenderRequest} and hands it to its lane; {@code done} gets the
   * answer once all have their outcome.
   *
   * @param in the request: its body borrowed (what needs it after this call takes a reference of
   *     its own: the fragment forwarding it as it came, the answer that may need its hash); its
   *     sender's ledgers ({@link LedgerKey}), charged for the new tenant lanes its batches cause;
   *     its {@code Retry-Attempt}, told to the downstream with every send of its batches
   * @param routed takes ownership of every batch, unbound ({@link Fragment#unbound}), and of the
   *     list, which the request's {@link SenderRequest} reports to the answer; not empty. Its
   *     series left out by the route step's series limits are named in the answer
   * @param done receives the answer, on the input's loop, after the body's reference kept for it
   *     was released; with the {@code *-Written} counts for a PRW 2.0 sender
   */
  void deliver(WriteInput in, Routed.Batches routed, Consumer<Answer> done) {
    ByteBuf body = in.body();
    SenderKey sender = in.sender();
    Protocol input = in.head().protocol();
    int senderRetries = in.head().senderRetries();
    List<Fragment> batches = routed.list();
    List<LimitedSeries> limited = routed.limited();
    int n = batches.size();
    boolean several = ledger.enabled() && n > 1;
    long senderId = sender.id();
    LedgerKey known = several && !ledger.isEmpty() ? LedgerKey.of(senderId, body) : null;
    // Hashed only if the answer asks for a retry (or is a 429 whose repeats are counted).
    ByteBuf kept = known == null && (several || ledger.countsThrottled()) ? body.retain() : null;
    SenderRequest request =
        new SenderRequest(
            in.loop(),
            batches,
            results -> answer(results, senderId, known, kept, several, input, limited, done),
            sender == SenderKey.UNKNOWN ? null : sender);
    long deadline = in.startNanos() + timeoutNanos;
    List<Fragment> toLanes = batches;
    TenantLimits limits = this.limits;
    try {
      if (n == 1 && routed.whole() && in.head().encoding() == BodyEncoding.SNAPPY) {
        Fragment f = batches.get(0);
        metrics.tenantIn(f.tenant(), f.series(), f.samples(), f.size());
        f.bind(deadline, request, senderRetries);
        if (overRate(limits, f)) {
          request.settled(f, overRateOutcome(limits, f.tenant()));
          toLanes = List.of();
        } else {
          lanes.readHaKey(f); // from the decompressed request, before it is let go
          f.forwardAs(body.retain());
          metrics.forwardedWhole();
        }
      } else if (known == null && limits == null) {
        for (int i = 0; i < n; i++) {
          Fragment f = batches.get(i);
          metrics.tenantIn(f.tenant(), f.series(), f.samples(), f.size());
          f.bind(deadline, request, senderRetries);
        }
      } else {
        toLanes = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          Fragment f = batches.get(i);
          metrics.tenantIn(f.tenant(), f.series(), f.samples(), f.size());
          f.bind(deadline, request, senderRetries);
          if (known != null && ledger.delivered(known, f.tenant())) {
            metrics.ledgerSkipped(f.tenant(), f.series());
            request.settled(f, DELIVERED_EARLIER);
          } else if (overRate(limits, f)) {
            request.settled(f, overRateOutcome(limits, f.tenant()));
          } else {
            toLanes.add(f);
          }
        }
      }
    } catch (RuntimeException | Error e) {
      // Nothing was handed to a lane yet: everything this call owns is released here (a fragment
      // settled from the ledger already released its body).
      for (Fragment f : batches) {
        f.discard();
      }
      if (kept != null) {
        kept.release();
      }
      throw e;
    }
    if (!toLanes.isEmpty()) {
      lanes.submit(toLanes);
    }
  }

  /**
   * Whether {@code f} is over its tenant's samples-per-second limit (counted then): its samples, or
   * its series when samples are not counted (PRW 1.0 without {@code relay.metrics.count-samples}:
   * every series carries at least one sample).
   */
  private boolean overRate(TenantLimits limits, Fragment f) {
    if (limits == null) {
      return false;
    }
    long samples = Math.max(f.samples(), f.series());
    if (limits.takeSamples(f.tenant(), samples)) {
      return false;
    }
    metrics.tenantLimited(f.tenant(), "samples_rate", f.series());
    return true;
  }

  /**
   * The outcome of a batch over its tenant's samples-per-second limit: a 429 of that tenant, as the
   * downstream's ingestion rate limit answers, so that {@code relay.delivery.throttled.policy}
   * decides what its sender is told.
   */
  private static FragmentOutcome overRateOutcome(TenantLimits limits, String tenant) {
    var l = limits.limitsOf(tenant);
    return new FragmentOutcome(
        Kind.THROTTLED,
        429,
        "over the tenant's samples-per-second limit at the relay ("
            + l.samplesPerSecond()
            + " samples/s, burst "
            + l.samplesBurst()
            + "; relay.limits.samples-per-second)",
        -1,
        0);
  }

  private static final FragmentOutcome DELIVERED_EARLIER =
      new FragmentOutcome(
          Kind.DELIVERED, 200, "delivered by an earlier attempt of this request", -1, 0);

  /**
   * Answers a request from its fragments' {@code results}, writing the ledger when the sender will
   * retry it.
   *
   * @param sender the sender's id, the first part of the ledger key
   * @param known the body's ledger key when it was hashed up front, else {@code null}
   * @param kept takes ownership; the body's reference kept for hashing it now, or {@code null}
   * @param several whether the ledger keeps what this request delivered
   */
  private void answer(
      List<? extends BatchResult> results,
      long sender,
      LedgerKey known,
      ByteBuf kept,
      boolean several,
      Protocol input,
      List<LimitedSeries> limited,
      Consumer<Answer> done) {
    Answer answer = AnswerPolicy.fromResults(results);
    LedgerKey key = known;
    if (answer.status() >= 300 && key == null && kept != null) {
      key = LedgerKey.of(sender, kept);
    }
    boolean dropped = false;
    if (answer.status() == 429 && ledger.countsThrottled()) {
      DeliveryLedger.Throttling t = ledger.throttled(key);
      if (t.drop()) {
        answer = AnswerPolicy.throttledDropped(results, t.answers(), t.sinceNanos());
        throttledLog.dropped(results);
        dropped = true;
      }
    }
    if (answer.status() >= 300 && !dropped && several) {
      remember(key, results);
    }
    // After the ledger: a request whose only failure is its limited series is not to be retried.
    answer = AnswerPolicy.withLimited(answer, limited);
    if (input == Protocol.V2) {
      answer = answer.withWritten(AnswerPolicy.written(results));
    }
    if (kept != null) {
      kept.release();
    }
    done.accept(answer);
  }

  /**
   * Writes which tenants of a request that the sender will retry were delivered into the ledger.
   */
  private void remember(LedgerKey key, List<? extends BatchResult> results) {
    List<String> delivered = new ArrayList<>();
    List<String> notDelivered = new ArrayList<>();
    for (BatchResult r : results) {
      (r.outcome().accepted() ? delivered : notDelivered).add(r.tenant());
    }
    ledger.record(key, delivered, notDelivered);
  }
}
