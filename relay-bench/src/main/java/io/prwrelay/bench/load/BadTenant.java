package io.prwrelay.bench.load;

import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * The misbehaving tenant of a run ({@code --bad-tenant}): one more tenant, {@value #TENANT}, whose
 * series are mixed into a share of the requests and whose downstream answers every request badly,
 * while every other tenant's downstream answers {@code 200} at once.
 *
 * @param kind how its downstream answers
 * @param share fraction of the requests that carry its series, in (0, 1]
 * @param delay how long a {@link Kind#SLOW} downstream takes to answer {@code 200}
 * @param retryAfter the {@code Retry-After} of a {@link Kind#THROTTLED} or {@link Kind#FAILING}
 *     answer, in whole seconds; zero for none
 */
public record BadTenant(Kind kind, double share, Duration delay, Duration retryAfter) {
  /** The tenant ID of the bad tenant (never one of the {@code tenant-<i>} tenants). */
  public static final String TENANT = "tenant-bad";

  /** How the bad tenant's downstream answers. */
  public enum Kind {
    /** {@code 429}, as Mimir answers a tenant over its ingestion rate limit. */
    THROTTLED("429"),
    /** {@code 200}, but only after {@link BadTenant#delay()}. */
    SLOW("slow"),
    /** {@code 503}, as a failing ingester path answers. */
    FAILING("503");

    private final String option;

    Kind(String option) {
      this.option = option;
    }

    /** The {@code --bad-tenant} value. */
    public String option() {
      return option;
    }

    /**
     * The kind named by a {@code --bad-tenant} value.
     *
     * @throws IllegalArgumentException when it names none
     */
    static Kind of(String option) {
      for (Kind k : values()) {
        if (k.option.equals(option.toLowerCase(Locale.ROOT))) {
          return k;
        }
      }
      throw new IllegalArgumentException("'" + option + "' must be 429, slow or 503");
    }
  }

  /** The downstream's answer to every request of the bad tenant. */
  public Reply reply() {
    Map<String, String> headers =
        retryAfter.isZero()
            ? Map.of()
            : Map.of("Retry-After", Long.toString(Math.max(1, retryAfter.toSeconds())));
    switch (kind) {
      case THROTTLED:
        return new Reply(
            429, headers, "per-tenant ingestion rate limit exceeded", Duration.ZERO, false);
      case FAILING:
        return new Reply(503, headers, "ingester unavailable", Duration.ZERO, false);
      default:
        return Reply.slow(delay);
    }
  }

  /** How the options describe it, for the report header. */
  public String describe() {
    String how;
    switch (kind) {
      case SLOW:
        how = "answered 200 after " + delay.toMillis() + " ms";
        break;
      default:
        how =
            "answered "
                + kind.option()
                + (retryAfter.isZero()
                    ? " without Retry-After"
                    : " with Retry-After " + Math.max(1, retryAfter.toSeconds()) + " s");
    }
    return String.format("%s in %s of the requests, %s", TENANT, Summary.percent(share), how);
  }
}
