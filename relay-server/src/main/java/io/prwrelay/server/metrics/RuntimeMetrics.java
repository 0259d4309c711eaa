package io.prwrelay.server.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.config.MeterFilterReply;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.server.config.RelayVersion;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The process and JVM metrics, on the relay's registry next to its own: Micrometer's binders for
 * memory (heap, non-heap, and the JVM's buffer pools, {@code direct} among them), garbage
 * collection, threads, class loading, CPU, uptime and file descriptors; the resident memory of the
 * process (Linux); the memory the pooled buffer allocator has in use; and {@code relay_build_info}.
 *
 * <p>Every value is read when {@code /metrics} is scraped, never on the request path. Close it when
 * the relay stops: the GC binder listens to the JVM's GC notifications.
 */
public final class RuntimeMetrics implements AutoCloseable {
  private static final Path PROC_STATUS = Path.of("/proc/self/status");

  /**
   * Two of Micrometer's names that {@code promtool check metrics} objects to: {@code
   * process_cpu_time_ns_total} (an abbreviated unit; replaced by {@code process_cpu_seconds_total},
   * the name Prometheus' own client libraries use) and {@code system_cpu_count} (a {@code _count}
   * suffix outside a histogram; renamed {@code system_cpus}). Set on the registry before any meter
   * is registered ({@link RelayMetrics} does), as Micrometer requires.
   */
  static final MeterFilter PROMETHEUS_NAMES =
      new MeterFilter() {
        @Override
        public MeterFilterReply accept(Meter.Id id) {
          return id.getName().equals("process.cpu.time")
              ? MeterFilterReply.DENY
              : MeterFilterReply.NEUTRAL;
        }

        @Override
        public Meter.Id map(Meter.Id id) {
          return id.getName().equals("system.cpu.count") ? id.withName("system.cpus") : id;
        }
      };

  private final JvmGcMetrics gc = new JvmGcMetrics();

  private RuntimeMetrics() {}

  /**
   * Registers the runtime metrics on {@code registry}.
   *
   * @param allocator the relay's buffer allocator: its memory in use is reported when it is Netty's
   *     pooled one
   * @param transport the event loop transport ({@code epoll} or {@code nio}), a label of {@code
   *     relay_build_info}
   */
  public static RuntimeMetrics bind(
      MeterRegistry registry, ByteBufAllocator allocator, String transport) {
    RuntimeMetrics m = new RuntimeMetrics();
    new JvmMemoryMetrics().bindTo(registry);
    m.gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      FunctionCounter.builder("process.cpu", os, o -> o.getProcessCpuTime() / 1e9)
          .baseUnit("seconds")
          .description("CPU time used by the relay's process")
          .register(registry);
    }
    if (Files.isReadable(PROC_STATUS)) {
      Gauge.builder("process.resident.memory", RuntimeMetrics::residentBytes)
          .baseUnit("bytes")
          .description("resident set size of the relay's process (VmRSS of /proc/self/status)")
          .register(registry);
    }
    if (allocator instanceof PooledByteBufAllocator pooled) {
      MetricCatalogue.POOLED_MEMORY_IN_USE.gauge(
          registry, pooled, PooledByteBufAllocator::pinnedDirectMemory, "direct");
      MetricCatalogue.POOLED_MEMORY_IN_USE.gauge(
          registry, pooled, PooledByteBufAllocator::pinnedHeapMemory, "heap");
    }
    MetricCatalogue.BUILD_INFO.gauge(
        registry,
        1,
        Integer::doubleValue,
        RelayVersion.VERSION,
        Runtime.version().toString(),
        transport);
    return m;
  }

  /** VmRSS of /proc/self/status in bytes, or NaN when it cannot be read. */
  private static double residentBytes() {
    try {
      for (String line : Files.readAllLines(PROC_STATUS, StandardCharsets.US_ASCII)) {
        if (line.startsWith("VmRSS:")) {
          // "VmRSS:     123456 kB"
          String kb = line.substring(6).trim();
          int space = kb.indexOf(' ');
          return Long.parseLong(space < 0 ? kb : kb.substring(0, space)) * 1024.0;
        }
      }
    } catch (IOException | RuntimeException e) {
      // Not Linux, or the file changed its format: the gauge says NaN.
    }
    return Double.NaN;
  }

  @Override
  public void close() {
    gc.close();
  }
}
