package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import java.util.List;

/**
 * The keys of the per-tenant limits at the ingest edge ({@code relay.limits.*}): the defaults every
 * tenant has, the overrides file that changes them per tenant while the relay runs, and the memory
 * the series limits may take.
 *
 * <p>One group of the catalogue: {@link ConfigKeys} names each of these keys and lists them, in the
 * order of {@link #KEYS}, for {@code --help}, docs/configuration.md and the loaders.
 */
final class LimitsKeys {
  private LimitsKeys() {}

  static final ConfigKey MAX_SERIES =
      key(
          "relay.limits.max-series-per-tenant",
          "0",
          "active series a tenant may have (0: no limit): a series new to the tenant beyond it is"
              + " dropped, series already active keep flowing; active means sent in the current or"
              + " the previous relay.limits.active-series-window");

  static final ConfigKey ACTIVE_SERIES_WINDOW =
      key(
          "relay.limits.active-series-window",
          "10m",
          "window of the series limit: a series not sent for one to two windows stops counting");

  static final ConfigKey SAMPLES_PER_SECOND =
      key(
          "relay.limits.samples-per-second",
          "0",
          "samples a tenant may send per second (0: no limit); a tenant batch over it is answered"
              + " as a downstream 429 for that tenant alone (relay.delivery.throttled.policy)");

  static final ConfigKey SAMPLES_BURST =
      key(
          "relay.limits.samples-burst",
          "200000",
          "samples a tenant may send at once above its rate (the token bucket's size); a batch"
              + " larger than this is refused every time");

  static final ConfigKey OVERRIDES_FILE =
      key(
          "relay.limits.overrides-file",
          "",
          "file of per-tenant limits (lines tenant.max-series-per-tenant = N,"
              + " tenant.samples-per-second = N, tenant.samples-burst = N), re-read while running"
              + " when it changes; a bad file keeps the last good one");

  static final ConfigKey RELOAD_PERIOD =
      key(
          "relay.limits.reload-period",
          "10s",
          "how often the overrides file's modification time and size are checked");

  static final ConfigKey MAX_MEMORY_BYTES =
      key(
          "relay.limits.max-memory-bytes",
          "64MiB",
          "memory the series limits' filters may take, all tenants together; at the bound a new"
              + " tenant is not series-limited and a filter stops growing (counted)");

  /** The keys of this group, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS =
      List.of(
          MAX_SERIES,
          ACTIVE_SERIES_WINDOW,
          SAMPLES_PER_SECOND,
          SAMPLES_BURST,
          OVERRIDES_FILE,
          RELOAD_PERIOD,
          MAX_MEMORY_BYTES);
}
