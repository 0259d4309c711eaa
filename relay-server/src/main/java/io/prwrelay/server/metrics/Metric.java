package io.prwrelay.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * One metric the relay exports: its Micrometer name, type, base unit, help text and tag names.
 * Every {@code relay_*} metric is declared once, in {@link MetricCatalogue}, and built only through
 * the methods here, so the exported name, help and tags cannot drift from the catalogue; the table
 * of docs/metrics.md, the alert rules and the dashboard are checked against it.
 *
 * <p>Tag values are given in the order of {@link #tags}: {@code REQUESTS.counter(registry, "204")}.
 *
 * @param name the Micrometer name ({@code relay.requests}); {@link #exportedName} is the Prometheus
 *     one
 * @param unit the base unit ({@code bytes}, {@code seconds}), or null
 * @param longest for a {@link Type#HISTOGRAM}, the longest duration its buckets resolve; else null
 */
public record Metric(
    String name, Type type, String unit, String help, List<String> tags, Duration longest) {

  /** How a metric is exported. */
  public enum Type {
    /** A monotonic count: exported with the suffix {@code _total}. */
    COUNTER,
    /** A value read when scraped. */
    GAUGE,
    /**
     * A timer with a histogram of durations from 1 ms to {@link #longest}: exported in seconds, as
     * a histogram ({@code _bucket}, {@code _count}, {@code _sum}) and a gauge ({@code _max}).
     */
    HISTOGRAM
  }

  private static final Duration SHORTEST = Duration.ofMillis(1);

  public Metric {
    tags = List.copyOf(tags);
  }

  /**
   * The name of the metric family in the Prometheus exposition, as Micrometer's Prometheus naming
   * derives it: dots become underscores, the unit is appended unless the name ends with it, a
   * counter ends with {@code _total}, a histogram with {@code _seconds}.
   */
  public String exportedName() {
    String snake = name.replace('.', '_');
    return switch (type) {
      case COUNTER -> withUnit(snake) + "_total";
      case GAUGE -> withUnit(snake);
      case HISTOGRAM -> snake + "_seconds";
    };
  }

  /**
   * The metric families this metric exports: its {@link #exportedName}, and for a histogram also
   * the {@code _max} gauge Micrometer adds.
   */
  public List<String> exportedFamilies() {
    String exported = exportedName();
    return type == Type.HISTOGRAM ? List.of(exported, exported + "_max") : List.of(exported);
  }

  private String withUnit(String snake) {
    return unit == null || snake.endsWith("_" + unit) ? snake : snake + "_" + unit;
  }

  /** The counter with these tag values, registered on first use. */
  public Counter counter(MeterRegistry registry, String... tagValues) {
    expect(Type.COUNTER);
    return Counter.builder(name)
        .description(help)
        .baseUnit(unit)
        .tags(tagged(tagValues))
        .register(registry);
  }

  /**
   * A counter whose value is read from {@code state} when scraped. The registry keeps {@code state}
   * reachable.
   */
  public <T> FunctionCounter counter(
      MeterRegistry registry, T state, ToDoubleFunction<T> value, String... tagValues) {
    expect(Type.COUNTER);
    return FunctionCounter.builder(name, state, value)
        .description(help)
        .baseUnit(unit)
        .tags(tagged(tagValues))
        .register(registry);
  }

  /**
   * The gauge of {@code value} applied to {@code state}, read when scraped. The gauge holds {@code
   * state} strongly: a gauge of an object only it refers to still reports.
   */
  public <T> Gauge gauge(
      MeterRegistry registry, T state, ToDoubleFunction<T> value, String... tagValues) {
    expect(Type.GAUGE);
    return Gauge.builder(name, state, value)
        .strongReference(true)
        .description(help)
        .baseUnit(unit)
        .tags(tagged(tagValues))
        .register(registry);
  }

  /**
   * A gauge whose series (tag values and values) are replaced together ({@link
   * MultiGauge#register}), each made with {@link #row}: for tag values that change, such as a
   * tenant's top metric names.
   */
  public MultiGauge multiGauge(MeterRegistry registry) {
    expect(Type.GAUGE);
    return MultiGauge.builder(name).description(help).baseUnit(unit).register(registry);
  }

  /** One series of a {@link #multiGauge}: {@code value} with these tag values. */
  public MultiGauge.Row<?> row(double value, String... tagValues) {
    return MultiGauge.Row.of(tagged(tagValues), value);
  }

  /** The timer with its histogram, registered on first use. */
  public Timer timer(MeterRegistry registry, String... tagValues) {
    expect(Type.HISTOGRAM);
    return Timer.builder(name)
        .description(help)
        .tags(tagged(tagValues))
        .publishPercentileHistogram()
        .minimumExpectedValue(SHORTEST)
        .maximumExpectedValue(longest)
        .register(registry);
  }

  private void expect(Type built) {
    if (type != built) {
      throw new IllegalStateException(name + " is a " + type + ", not a " + built);
    }
  }

  private Tags tagged(String[] values) {
    if (values.length != tags.size()) {
      throw new IllegalArgumentException(
          name + " has the tags " + tags + ", given the values " + Arrays.toString(values));
    }
    String[] pairs = new String[values.length * 2];
    for (int i = 0; i < values.length; i++) {
      pairs[2 * i] = tags.get(i);
      pairs[2 * i + 1] = values[i];
    }
    return Tags.of(pairs);
  }
}
