package io.prwrelay.testing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * What the PRW 1.0 and PRW 2.0 request generators share: the knobs a property test turns, the
 * series' labels (0-40 extra labels with UTF-8 and empty values, tenant labels present, absent,
 * empty or invalid, sorted or shuffled) and random text. Deterministic for a seed.
 */
public abstract class AbstractRequestGenerator {
  /** Tenant values that are valid Cortex tenant IDs. */
  public static final List<String> VALID_TENANTS =
      List.of("team-a", "team-b", "svc.c", "T_(1)", "x", "a!b*c'd", "anonymous", "z9");

  /** Tenant values that Cortex would reject (each for a different reason). */
  public static final List<String> INVALID_TENANTS =
      List.of(
          "a|b",
          "a/b",
          "host:9100",
          "line\r\nX-Injected: 1",
          "ünïcode",
          "sp ace",
          "x".repeat(151),
          ".",
          "..",
          "__markers__",
          "user-index.json.gz");

  /** Draws everything but {@link #text}. */
  final Random random;

  private final Random textRandom;

  /** Probability that a given tenant label is present in a series. */
  public double tenantLabelPresence = 0.7;

  /** Probability that a present tenant label gets an invalid value. */
  public double invalidTenantValue = 0.05;

  /** Probability that a present tenant label gets an empty value. */
  public double emptyTenantValue = 0.03;

  /**
   * Whether labels are sorted by name, as senders must; unsorted labels test order independence.
   */
  public boolean sortLabels = true;

  public int maxExtraLabels = 40;
  public int maxSamples = 4;
  public double exemplarProbability = 0.2;
  public double histogramProbability = 0.2;

  /**
   * @param random draws everything but text
   * @param textRandom draws {@link #text}; may be {@code random}
   */
  AbstractRequestGenerator(Random random, Random textRandom) {
    this.random = random;
    this.textRandom = textRandom;
  }

  public Random random() {
    return random;
  }

  /**
   * One series' labels as (name, value) in the order they are sent: {@code __name__}, extra labels
   * and some of {@code tenantLabels}, names unique, sorted by name when {@link #sortLabels}.
   */
  final List<Map.Entry<String, String>> labels(List<String> tenantLabels) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("__name__", "metric_" + random.nextInt(50));
    int extra = random.nextInt(maxExtraLabels + 1);
    for (int i = 0; i < extra; i++) {
      String name = labelName();
      if (!tenantLabels.contains(name)) {
        labels.put(name, random.nextInt(10) == 0 ? "" : text(0, 30));
      }
    }
    for (String t : tenantLabels) {
      if (random.nextDouble() < tenantLabelPresence) {
        labels.put(t, tenantValue());
      }
    }
    List<Map.Entry<String, String>> list = new ArrayList<>(labels.entrySet());
    if (sortLabels) {
      list.sort(Map.Entry.comparingByKey());
    } else {
      Collections.shuffle(list, random);
    }
    return list;
  }

  private String tenantValue() {
    double r = random.nextDouble();
    if (r < emptyTenantValue) {
      return "";
    }
    if (r < emptyTenantValue + invalidTenantValue) {
      return INVALID_TENANTS.get(random.nextInt(INVALID_TENANTS.size()));
    }
    return VALID_TENANTS.get(random.nextInt(VALID_TENANTS.size()));
  }

  private String labelName() {
    switch (random.nextInt(4)) {
      case 0:
        return "job";
      case 1:
        return "instance";
      default:
        return "l" + random.nextInt(200);
    }
  }

  /** Random UTF-8 text, including multi-byte and supplementary characters. */
  public String text(int min, int max) {
    int n = min + textRandom.nextInt(max - min + 1);
    StringBuilder sb = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      int k = textRandom.nextInt(20);
      if (k < 14) {
        sb.append((char) ('a' + textRandom.nextInt(26)));
      } else if (k < 16) {
        sb.append("-_./:|= ".charAt(textRandom.nextInt(8)));
      } else if (k < 18) {
        sb.append((char) (0xC0 + textRandom.nextInt(0x200)));
      } else if (k < 19) {
        sb.appendCodePoint(0x1F600 + textRandom.nextInt(50));
      } else {
        sb.append((char) ('0' + textRandom.nextInt(10)));
      }
    }
    return sb.toString();
  }
}
