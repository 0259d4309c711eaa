package io.prwrelay.bench.load;

import com.github.luben.zstd.Zstd;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

/**
 * Distinct compressed PRW 1.0 request bodies, generated before a run with the testkit's {@link
 * WriteRequestEncoder} so that generation is not measured, with the series count of every tenant in
 * each body. Bodies are handed out round-robin; each is held once in direct memory and sent as a
 * duplicate that cannot be released, so any number of connections can send it concurrently without
 * copying. {@link #close()} frees them.
 *
 * <p>Each series carries {@code __name__}, the tenant label (value {@code tenant-<i>}, the tenant
 * chosen at random per series) and {@code labels - 2} further labels, sorted by name as Prometheus
 * sends them, and one sample. From three labels on, the {@code instance} label is unique per body
 * and series.
 */
public final class RequestPool implements AutoCloseable {
  private static final String[] METRICS = {
    "http_requests_total",
    "http_request_duration_seconds_bucket",
    "process_cpu_seconds_total",
    "go_goroutines",
    "node_network_receive_bytes_total",
    "container_memory_working_set_bytes",
    "grpc_server_handled_total",
    "up"
  };
  private static final String[] LABEL_NAMES = {
    "instance", "job", "pod", "namespace", "cluster", "code", "method", "region", "le", "container"
  };

  /** One request body. */
  public static final class Body {
    private final ByteBuf direct;
    private final ByteBuf content;
    private final int uncompressedBytes;
    private final int series;
    private final int[] tenantIndexes;
    private final int[] tenantSeries;

    /** Takes ownership of {@code direct}, the compressed body. */
    Body(ByteBuf direct, int uncompressedBytes, int[] seriesPerTenant) {
      this.direct = direct;
      this.content = Unpooled.unreleasableBuffer(direct);
      this.uncompressedBytes = uncompressedBytes;
      this.series = Arrays.stream(seriesPerTenant).sum();
      int present = (int) Arrays.stream(seriesPerTenant).filter(n -> n > 0).count();
      this.tenantIndexes = new int[present];
      this.tenantSeries = new int[present];
      for (int t = 0, i = 0; t < seriesPerTenant.length; t++) {
        if (seriesPerTenant[t] > 0) {
          tenantIndexes[i] = t;
          tenantSeries[i++] = seriesPerTenant[t];
        }
      }
    }

    /** A view of the compressed body for one request; releasing it does nothing. */
    public ByteBuf content() {
      return content.duplicate();
    }

    public int compressedBytes() {
      return direct.readableBytes();
    }

    public int uncompressedBytes() {
      return uncompressedBytes;
    }

    public int series() {
      return series;
    }

    /** Indexes into {@link RequestPool#tenants()} of the tenants in this body; do not modify. */
    int[] tenantIndexes() {
      return tenantIndexes;
    }

    /** Series of each tenant in {@link #tenantIndexes()}, in the same order; do not modify. */
    int[] tenantSeries() {
      return tenantSeries;
    }
  }

  private final Body[] bodies;
  private final List<String> tenants;
  private final AtomicInteger next = new AtomicInteger();

  private RequestPool(Body[] bodies, List<String> tenants) {
    this.bodies = bodies;
    this.tenants = tenants;
  }

  /** Generates {@link Options#poolSize()} bodies as the options describe. */
  public static RequestPool generate(Options options) {
    List<String> tenants = new ArrayList<>(options.tenants());
    for (int t = 0; t < options.tenants(); t++) {
      tenants.add("tenant-" + t);
    }
    Labels labels = new Labels(options.tenantLabel(), options.labels() - 2);
    WriteRequestEncoder encoder = new WriteRequestEncoder(options.seriesPerRequest() * 160);
    Body[] bodies = new Body[options.poolSize()];
    try {
      for (int b = 0; b < bodies.length; b++) {
        bodies[b] = body(options, tenants, labels, encoder, b);
      }
    } catch (RuntimeException e) {
      for (Body body : bodies) {
        if (body != null) {
          body.direct.release();
        }
      }
      throw e;
    }
    return new RequestPool(bodies, Collections.unmodifiableList(tenants));
  }

  /**
   * The label names of every series, in the order they are written (sorted, as Prometheus sends
   * them), and their values for the series being encoded: {@code __name__} at {@link #NAME}, the
   * tenant label at {@link #TENANT}, then further names that never collide with either.
   */
  private static final class Labels {
    static final int NAME = 0;
    static final int TENANT = 1;
    final String[] names;
    final String[] values;
    final int[] sorted;

    Labels(String tenantLabel, int extra) {
      List<String> all = new ArrayList<>(List.of("__name__", tenantLabel));
      for (int i = 0; all.size() < extra + 2; i++) {
        String name = i < LABEL_NAMES.length ? LABEL_NAMES[i] : "label_" + i;
        if (!name.equals(tenantLabel)) {
          all.add(name);
        }
      }
      names = all.toArray(String[]::new);
      values = new String[names.length];
      sorted =
          IntStream.range(0, names.length)
              .boxed()
              .sorted(Comparator.comparing(i -> names[i]))
              .mapToInt(Integer::intValue)
              .toArray();
    }
  }

  private static Body body(
      Options options, List<String> tenants, Labels labels, WriteRequestEncoder encoder, int b) {
    Random random = new Random(options.seed() * 1_000_003L + b);
    int[] perTenant = new int[tenants.size()];
    long timestamp = 1_700_000_000_000L + b * 15_000L;
    encoder.reset();
    for (int i = 0; i < options.seriesPerRequest(); i++) {
      int tenant = random.nextInt(tenants.size());
      perTenant[tenant]++;
      labels.values[Labels.NAME] = METRICS[i % METRICS.length];
      labels.values[Labels.TENANT] = tenants.get(tenant);
      for (int l = 2; l < labels.names.length; l++) {
        labels.values[l] = value(labels.names[l], b, i, l - 2, random);
      }
      encoder.beginSeries();
      for (int l : labels.sorted) {
        encoder.label(labels.names[l], labels.values[l]);
      }
      encoder.sample(random.nextInt(1_000_000) / 8.0, timestamp).endSeries();
    }
    ByteBuf direct;
    if (options.encoding() == Options.Encoding.ZSTD) {
      byte[] zstd = Zstd.compress(encoder.toByteArray(), 3);
      direct = Unpooled.directBuffer(zstd.length).writeBytes(zstd);
    } else {
      direct = encoder.snappy(UnpooledByteBufAllocator.DEFAULT);
    }
    return new Body(direct, encoder.size(), perTenant);
  }

  /** A plausible value for a label; {@code instance} identifies the body and the series. */
  private static String value(String name, int body, int series, int l, Random random) {
    switch (name) {
      case "instance":
        return "10." + (body & 0xff) + "." + (series >> 8 & 0xff) + "." + (series & 0xff) + ":9100";
      case "job":
        return "job-" + series % 7;
      case "pod":
        return "pod-" + Integer.toHexString(random.nextInt(1 << 24));
      case "namespace":
        return "ns-" + series % 5;
      case "cluster":
        return "eu-west-" + series % 3;
      case "code":
        return Integer.toString(200 + series % 4 * 100);
      case "method":
        return series % 2 == 0 ? "GET" : "POST";
      case "region":
        return "region-" + series % 4;
      case "le":
        return Double.toString(Math.pow(2, series % 12) / 1000);
      case "container":
        return "app";
      default:
        return "value-" + l + "-" + random.nextInt(1000);
    }
  }

  /** The next body, round-robin. */
  public Body next() {
    return bodies[Math.floorMod(next.getAndIncrement(), bodies.length)];
  }

  /** Tenant IDs; {@link Body#tenantIndexes()} index this list. */
  public List<String> tenants() {
    return tenants;
  }

  public int size() {
    return bodies.length;
  }

  /** Average compressed size of a body. */
  public double averageCompressedBytes() {
    return Arrays.stream(bodies).mapToLong(Body::compressedBytes).average().orElse(0);
  }

  /** Average uncompressed size of a body. */
  public double averageUncompressedBytes() {
    return Arrays.stream(bodies).mapToLong(Body::uncompressedBytes).average().orElse(0);
  }

  /** Frees the bodies; call only when no request is being written any more. */
  @Override
  public void close() {
    for (Body body : bodies) {
      if (body.direct.refCnt() > 0) {
        body.direct.release();
      }
    }
  }
}
