package io.prwrelay.server.insight;

import io.prwrelay.server.lane.Lane;
import java.util.Locale;

/**
 * One tenant as {@code /tenants} and {@code /api/v1/tenants} show it.
 *
 * @param tenant the tenant ID (any of Cortex's tenant ID characters, {@code '} {@code (} {@code *}
 *     included: escape it for HTML and JSON)
 * @param window its sliding window
 * @param lane its lane's last state change, or {@code null} when its lane never left healthy (or is
 *     not in memory)
 * @param queueBytes bytes in its on-disk queue; -1 in sync mode
 * @param oldestQueuedMillis wall-clock time its oldest queued batch was written; -1 when none
 * @param lastError its last failed downstream attempt, or {@code null}
 */
public record TenantRow(
    String tenant,
    TenantWindow.Snapshot window,
    TenantInsight.LaneStatus lane,
    long queueBytes,
    long oldestQueuedMillis,
    TenantInsight.LastError lastError) {
  public long activeSeries() {
    return window.activeSeries();
  }

  /** {@code healthy}, {@code backing_off}, {@code throttled} or {@code rejecting}. */
  public String laneState() {
    return (lane == null ? Lane.State.HEALTHY : lane.state()).name().toLowerCase(Locale.ROOT);
  }

  /**
   * Fewest new series per second that {@link #exploding} flags: 1,200 a minute (the alert's floor,
   * docker/alerts.yml), so that a small tenant's ordinary churn stays quiet.
   */
  public static final double EXPLODING_MIN_RATE = 20;

  /**
   * {@link #exploding} flags a tenant minting new series fast enough to make as many as it has
   * active within this many seconds (30 minutes): a tenant whose new series keep coming stays
   * flagged for as long as they come, since its active series grow only by the window's worth.
   */
  public static final double EXPLODING_HORIZON_SECONDS = 1800;

  /** New series per second ({@link TenantWindow.Snapshot#newSeriesPerSecond}); NaN when unknown. */
  public double newSeriesPerSecond() {
    return window.newSeriesPerSecond();
  }

  /**
   * Whether the tenant's series are exploding: at least {@link #EXPLODING_MIN_RATE} new series per
   * second, and at that rate as many new series as it has active within {@link
   * #EXPLODING_HORIZON_SECONDS}. The rule of the alert {@code PrwRelayTenantSeriesExploding}.
   */
  public boolean exploding() {
    double rate = window.newSeriesPerSecond();
    return rate >= EXPLODING_MIN_RATE && rate * EXPLODING_HORIZON_SECONDS > window.activeSeries();
  }

  /**
   * The active series now divided by the window's estimate a window ago (or as long ago as the
   * tenant has been tracked); NaN when unknown or when that was 0.
   */
  public double growth() {
    double ago = window.windowAgo();
    return Double.isNaN(ago) || ago <= 0 ? Double.NaN : window.activeSeries() / ago;
  }
}
