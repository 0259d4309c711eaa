package io.prwrelay.testing;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.TimeSeries;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Reference answers computed the slow, obvious way on oracle objects: which tenant a series belongs
 * to under the relay's rules. Independent of the relay's byte-level code.
 */
public final class Oracle {
  private static final Pattern TENANT = Pattern.compile("[a-zA-Z0-9!\\-_.*'()]+");
  private static final List<String> RESERVED =
      List.of(".", "..", "__markers__", "user-index.json.gz");

  private Oracle() {}

  /**
   * Result of resolving one series: tenant ID (null when none) and the label index that resolved
   * it.
   */
  public record Resolution(String tenant, int labelIndex, String problem) {}

  /**
   * Resolves a series: the first label of {@code tenantLabels} present with a non-empty value wins;
   * its value, prefixed, must be a valid Cortex tenant ID.
   */
  public static Resolution resolve(TimeSeries ts, List<String> tenantLabels, String prefix) {
    for (String name : tenantLabels) {
      List<Label> labels = ts.getLabelsList();
      for (int i = 0; i < labels.size(); i++) {
        Label l = labels.get(i);
        if (l.getName().equals(name) && !l.getValue().isEmpty()) {
          String id = prefix + l.getValue();
          String problem = problem(id);
          return problem == null ? new Resolution(id, i, null) : new Resolution(null, -1, problem);
        }
      }
    }
    return new Resolution(null, -1, "missing");
  }

  /** Why {@code id} is not a valid tenant ID, or null. */
  public static String problem(String id) {
    if (id.getBytes(StandardCharsets.UTF_8).length > 150) {
      return "too_long";
    }
    if (!TENANT.matcher(id).matches()) {
      return "invalid_character";
    }
    if (RESERVED.contains(id)) {
      return "reserved";
    }
    return null;
  }

  /** The series without label {@code index}. */
  public static TimeSeries withoutLabel(TimeSeries ts, int index) {
    return ts.toBuilder().removeLabels(index).build();
  }
}
