package io.prwrelay.server.limits;

import io.prwrelay.core.route.TenantIds;
import io.prwrelay.server.config.LimitsConfig.Limits;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the per-tenant overrides file ({@code relay.limits.overrides-file}): one setting a line,
 * {@code <tenant>.<setting> = <value>}, where the tenant is the ID sent downstream (the prefix
 * included) and the setting one of {@code max-series-per-tenant}, {@code samples-per-second} and
 * {@code samples-burst}; a setting not given is the default's. Blank lines and {@code #} comments
 * are skipped. Tenant IDs may contain dots: the setting is what follows the last one.
 *
 * <pre>
 *   # team-a exploded last week: 50k series, 20k samples/s
 *   team-a.max-series-per-tenant = 50000
 *   team-a.samples-per-second = 20000
 *   team-b.max-series-per-tenant = 0      # no series limit for team-b
 * </pre>
 *
 * A file with any line that does not parse is refused whole ({@link IOException} naming the line),
 * so a half-edited file never applies half its settings. At most {@value #MAX_BYTES} bytes.
 */
final class OverridesFile {
  /** Largest overrides file read: 16 MiB, about 300,000 settings. */
  static final long MAX_BYTES = 16L << 20;

  private OverridesFile() {}

  /** The file's limits by tenant, each setting not given taken from {@code defaults}. */
  static Map<String, Limits> read(Path file, Limits defaults) throws IOException {
    long size = Files.size(file);
    if (size > MAX_BYTES) {
      throw new IOException("is " + size + " bytes, more than " + MAX_BYTES);
    }
    return parse(Files.readAllLines(file, StandardCharsets.UTF_8), defaults);
  }

  static Map<String, Limits> parse(List<String> lines, Limits defaults) throws IOException {
    Map<String, long[]> set = new HashMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      int hash = line.indexOf('#');
      if (hash >= 0) {
        line = line.substring(0, hash);
      }
      line = line.strip();
      if (line.isEmpty()) {
        continue;
      }
      int eq = line.indexOf('=');
      int dot = eq < 0 ? -1 : line.lastIndexOf('.', eq);
      if (eq < 0 || dot <= 0) {
        throw bad(i, "is not <tenant>.<setting> = <value>");
      }
      String tenant = line.substring(0, dot).strip();
      String setting = line.substring(dot + 1, eq).strip();
      String value = line.substring(eq + 1).strip();
      if (TenantIds.problem(tenant) != null) {
        throw bad(i, "tenant " + tenant + " is not a valid tenant ID");
      }
      int which =
          switch (setting) {
            case "max-series-per-tenant" -> 0;
            case "samples-per-second" -> 1;
            case "samples-burst" -> 2;
            default ->
                throw bad(
                    i,
                    "unknown setting "
                        + setting
                        + " (max-series-per-tenant, samples-per-second or samples-burst)");
          };
      long v;
      try {
        v = Long.parseLong(value);
      } catch (NumberFormatException e) {
        throw bad(i, "value " + value + " is not a whole number");
      }
      long max = which == 0 ? Limits.MAX_SERIES : Integer.MAX_VALUE;
      if (v < (which == 2 ? 1 : 0) || v > max) {
        throw bad(i, setting + " must be between " + (which == 2 ? 1 : 0) + " and " + max);
      }
      set.computeIfAbsent(tenant, t -> new long[] {-1, -1, -1})[which] = v;
    }
    Map<String, Limits> out = new HashMap<>();
    set.forEach(
        (tenant, v) ->
            out.put(
                tenant,
                new Limits(
                    v[0] < 0 ? defaults.maxSeries() : v[0],
                    v[1] < 0 ? defaults.samplesPerSecond() : v[1],
                    v[2] < 0 ? defaults.samplesBurst() : v[2])));
    return out;
  }

  private static IOException bad(int index, String problem) {
    return new IOException("line " + (index + 1) + ": " + problem);
  }
}
