package io.prwrelay.core.route;

import io.prwrelay.core.encode.BatchEncoder;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.remotewrite.RequestError;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * What {@link TenantRouter#route} (PRW 1.0) or {@link V2TenantRouter#route} (PRW 2.0) made of one
 * request: either an {@link #error()} or one {@link TenantBatch} per tenant, plus counts of series
 * that had no valid tenant, by {@link TenantProblem}.
 *
 * <p>Owned by the router and reused: valid until the next {@code route} call on the same router.
 * The batches own their buffers until taken with {@link TenantBatch#takeContent()}; {@link
 * #clear()} (also called by the next {@code route}) releases whatever was not taken.
 */
public final class RouteResult {
  final List<TenantBatch> batches = new ArrayList<>();
  private final List<TenantBatch> view = Collections.unmodifiableList(batches);
  final int[] defaulted = new int[TenantProblem.values().length];
  final int[] dropped = new int[TenantProblem.values().length];
  final SeriesDigests digests = new SeriesDigests();
  final SeriesDigests limited = new SeriesDigests();
  RequestError error;
  boolean whole;
  int seriesIn;
  int metadataIn;
  final int[] metadataRouted = new int[MetadataRoute.values().length];
  final int[] metadataDropped = new int[MetadataDrop.values().length];

  /**
   * {@code null} when the request was routed; otherwise why it was not (then there are no batches).
   */
  public RequestError error() {
    return error;
  }

  /** One batch per tenant, in order of each tenant's first series in the request. */
  public List<TenantBatch> batches() {
    return view;
  }

  /**
   * Label set hash and metric name of every routed series, by batch slot (the index of its batch in
   * {@link #batches()}); empty unless the router digests series.
   */
  public SeriesDigests digests() {
    return digests;
  }

  /**
   * The series left out by their tenant's series limit ({@link SeriesLimits}), by batch slot, with
   * their label set hashes and (sampled, as in {@link #digests()}) metric names. A slot whose every
   * series was limited still has its batch, with no series.
   */
  public SeriesDigests limited() {
    return limited;
  }

  /** Series of batch slot {@code slot} left out by its tenant's series limit. */
  public int limitedSeries(int slot) {
    int n = 0;
    for (int e = limited.first(slot); e != SeriesDigests.END; e = limited.next(e)) {
      n++;
    }
    return n;
  }

  /**
   * Whether the request was its own batch: every series went to one tenant and nothing had to
   * change (no series dropped, no label removed, PRW 1.0 metadata kept as the policy says, no field
   * the protocol does not define). The one batch's content is then the request itself (a retained
   * slice of it, no copy, in the sender's field order), so a caller that holds the request's
   * compressed body may send that body as it came instead of compressing the batch again.
   */
  public boolean whole() {
    return whole;
  }

  /** Series read from the request. */
  public int seriesIn() {
    return seriesIn;
  }

  /**
   * Metadata fields read from the request: top-level {@code metadata} of PRW 1.0, the series'
   * {@code metadata} fields of PRW 2.0.
   */
  public int metadataIn() {
    return metadataIn;
  }

  /**
   * PRW 1.0 metadata fields not sent to any tenant, for every {@link MetadataDrop} reason together.
   */
  public int metadataDropped() {
    int n = 0;
    for (int d : metadataDropped) {
      n += d;
    }
    return n;
  }

  /** PRW 1.0 metadata fields not sent to any tenant because of {@code reason}. */
  public int metadataDropped(MetadataDrop reason) {
    return metadataDropped[reason.ordinal()];
  }

  /**
   * PRW 1.0 metadata fields sent to their tenants {@code how} (each counted once, however many
   * tenants it went to; each batch's {@link TenantBatch#metadata()} counts its own copies). PRW 2.0
   * metadata travels inside its series and is not counted here.
   */
  public int metadataRouted(MetadataRoute how) {
    return metadataRouted[how.ordinal()];
  }

  /** Series sent to the default tenant because of {@code problem}. */
  public int defaulted(TenantProblem problem) {
    return defaulted[problem.ordinal()];
  }

  /** Series dropped because of {@code problem}. */
  public int dropped(TenantProblem problem) {
    return dropped[problem.ordinal()];
  }

  /** Total series dropped for want of a valid tenant. */
  public int droppedTotal() {
    int n = 0;
    for (int d : dropped) {
      n += d;
    }
    return n;
  }

  /** Releases every batch buffer not yet taken and resets the result. */
  public void clear() {
    BatchEncoder.releaseAll(batches);
    Arrays.fill(defaulted, 0);
    Arrays.fill(dropped, 0);
    digests.clear();
    limited.clear();
    error = null;
    whole = false;
    seriesIn = 0;
    metadataIn = 0;
    Arrays.fill(metadataRouted, 0);
    Arrays.fill(metadataDropped, 0);
  }
}
