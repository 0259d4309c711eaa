package io.prwrelay.core.encode;

import io.netty.buffer.ByteBuf;

/**
 * One tenant's share of a request: a valid, uncompressed request holding exactly that tenant's
 * series, in request order, plus the counts the relay reports (the {@code
 * X-Prometheus-Remote-Write-*-Written} headers included; a PRW 1.0 router counts samples, exemplars
 * and histograms only under {@code TenantRules#countSamples()}, otherwise they are 0). The request
 * is a PRW 1.0 {@code WriteRequest} from {@code TenantRouter}; from {@code V2TenantRouter} it is in
 * the router's {@link V2BatchEncoder.Format}: a PRW 2.0 {@code Request} with the tenant's own
 * symbols table, or a PRW 1.0 {@code WriteRequest} converted from 2.0.
 *
 * <p>The batch owns {@link #content()} until {@link #takeContent()} hands it over; whatever was not
 * taken is released when the owning {@code RouteResult} is cleared. A batch object is reused across
 * requests.
 */
public final class TenantBatch {
  String tenant;
  ByteBuf content;
  int series;
  long samples;
  long exemplars;
  long histograms;
  int metadata;

  /** The tenant ID to send in the tenant header, prefix included. Validated; safe for a header. */
  public String tenant() {
    return tenant;
  }

  /** The batch bytes, still owned by this batch; {@code null} once taken. */
  public ByteBuf content() {
    return content;
  }

  /** Hands the batch bytes to the caller, who must release them exactly once. */
  public ByteBuf takeContent() {
    ByteBuf c = content;
    content = null;
    return c;
  }

  /** Number of series in the batch. */
  public int series() {
    return series;
  }

  /** Number of samples in the batch, counted from tags. */
  public long samples() {
    return samples;
  }

  /** Number of exemplars in the batch, counted from tags. */
  public long exemplars() {
    return exemplars;
  }

  /** Number of native histogram samples in the batch, counted from tags. */
  public long histograms() {
    return histograms;
  }

  /** Series, samples, exemplars and histograms of the batch as one value. */
  public SeriesCounts counts() {
    return new SeriesCounts(series, samples, exemplars, histograms);
  }

  /**
   * Number of metadata in the batch: PRW 1.0 {@code metadata} fields (copied, or converted from PRW
   * 2.0 series metadata, one per distinct metadata), or for PRW 2.0 the series' {@code metadata}
   * fields.
   */
  public int metadata() {
    return metadata;
  }

  void release() {
    if (content != null) {
      content.release();
      content = null;
    }
  }
}
