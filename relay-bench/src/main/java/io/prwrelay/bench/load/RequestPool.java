package io.prwrelay.bench.load;

import com.github.luben.zstd.Zstd;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * Compressed PRW 1.0 request bodies, generated before a run with the testkit's {@link
 * WriteRequestEncoder} so that generation is not measured, with the series count of every tenant in
 * each body. Each is held once in direct memory and sent through views that cannot be released, so
 * any number of connections can send it concurrently without copying. {@link #close()} frees them.
 *
 * <p>Each series carries {@code __name__}, the tenant label (value {@code tenant-<i>}) and {@code
 * labels - 2} further labels, sorted by name as Prometheus sends them, and one sample. From three
 * labels on, the {@code instance} label is unique per body and series. Which tenants a body carries
 * is the {@link Options.Shape}: every tenant, chosen at random per series ({@code interleaved});
 * one tenant per body, the bodies taking the tenants in turn ({@code single}, as a Prometheus whose
 * targets all carry one team's label sends); or four bodies in five of one tenant and the fifth
 * interleaved ({@code mix}). With a {@link BadTenant}, a second set of bodies also carries {@value
 * BadTenant#TENANT}; {@link #next()} hands those out for the configured share of the requests,
 * evenly spread, and the other bodies round-robin otherwise.
 *
 * <p><b>Every request is a distinct body</b>, as Prometheus's are (their samples differ): the relay
 * recognises a retry by the hash of the body's bytes, so a body sent again as a new request would
 * look like a retry. In a snappy body the first series' sample value is the request's number (as a
 * double), and the block is built so that those eight bytes can be patched without recompressing:
 * the rest of the request is compressed on its own and its elements follow one literal holding the
 * first series, so no copy refers back into it:
 *
 * <pre>
 *   varint(f + n) | literal head | first series (f bytes, value = nonce) | elements of snappy(rest, n bytes)
 *   \______________________ per request, f + 3-8 bytes _____________/ \_______ shared, read-only ______/
 * </pre>
 *
 * A snappy block's copies count back from where they are written, so the elements of the rest stay
 * valid behind the literal. The body holds nothing but series, as a Prometheus request does, so a
 * body of one tenant is one the relay forwards as it came. Zstd bodies are sent as generated (the
 * same bytes again each round).
 *
 * <p>With an exploding tenant ({@code --exploding-tenant N}), a second literal after the first
 * series holds {@code N} series of {@value #EXPLODING_TENANT}, metric {@value #EXPLODING_METRIC},
 * whose {@code request_id} label is the request number in 16 hex digits: every request brings
 * {@code N} series never sent before, as a crash-looping pod or a UUID label value does. In
 * interleaved bodies the tenant also has its share of the steady series, as one more tenant. They
 * are written into the per-request prefix, so the rest is still shared.
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

  /** The tenant of {@code --exploding-tenant}. */
  public static final String EXPLODING_TENANT = "tenant-exploding";

  /** The metric name of every series of {@value #EXPLODING_TENANT}. */
  public static final String EXPLODING_METRIC = "exploding_requests_total";

  /**
   * The first series' sample value while a body is generated: its eight bytes are found in the
   * series and replaced by each request's number.
   */
  private static final double NONCE_PLACEHOLDER = -1.2345678901234567e-300;

  /** One generated body. */
  public static final class Body {
    private final ByteBuf direct;
    private final ByteBuf content;
    private final byte[] prefix;
    private final int nonceAt;
    private final int[] requestIdAt;
    private final int uncompressedBytes;
    private final int series;
    private final boolean carriesBad;
    private final int[] tenantIndexes;
    private final int[] tenantSeries;

    /**
     * Takes ownership of {@code direct}: the whole compressed body when {@code prefix} is empty,
     * else the snappy elements that follow {@code prefix}.
     *
     * @param nonceAt where in {@code prefix} the eight bytes of the request's number go
     * @param requestIdAt where in {@code prefix} each exploding series' 16-digit {@code request_id}
     *     value starts
     */
    Body(
        ByteBuf direct,
        byte[] prefix,
        int nonceAt,
        int[] requestIdAt,
        int uncompressedBytes,
        int[] seriesPerTenant,
        boolean bad) {
      this.direct = direct;
      this.nonceAt = nonceAt;
      this.requestIdAt = requestIdAt;
      this.content = Unpooled.unreleasableBuffer(direct);
      this.prefix = prefix;
      this.uncompressedBytes = uncompressedBytes;
      this.carriesBad = bad;
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

    /**
     * The compressed body of the request numbered {@code nonce}: a new buffer whose release frees
     * only the few bytes made for this request (the shared part cannot be released).
     */
    public ByteBuf content(long nonce) {
      if (prefix.length == 0) {
        return content.duplicate();
      }
      byte[] head = prefix.clone();
      long value = Double.doubleToRawLongBits(nonce);
      for (int i = 0; i < Long.BYTES; i++) {
        head[nonceAt + i] = (byte) (value >>> (8 * i)); // a double is little-endian on the wire
      }
      for (int at : requestIdAt) {
        for (int i = 0; i < 16; i++) {
          head[at + i] = (byte) Character.forDigit((int) (nonce >>> (60 - 4 * i)) & 0xF, 16);
        }
      }
      return Unpooled.wrappedBuffer(Unpooled.wrappedBuffer(head), content.duplicate());
    }

    public int compressedBytes() {
      return prefix.length + direct.readableBytes();
    }

    public int uncompressedBytes() {
      return uncompressedBytes;
    }

    public int series() {
      return series;
    }

    /** Whether the body carries series of {@value BadTenant#TENANT}. */
    public boolean carriesBad() {
      return carriesBad;
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
  private final Body[] badBodies;
  private final double badShare;
  private final List<String> tenants;
  private final int healthy;
  private final AtomicLong sequence = new AtomicLong();
  private final AtomicInteger next = new AtomicInteger();
  private final AtomicInteger nextBad = new AtomicInteger();

  private RequestPool(
      Body[] bodies, Body[] badBodies, double badShare, List<String> tenants, int healthy) {
    this.healthy = healthy;
    this.bodies = bodies;
    this.badBodies = badBodies;
    this.badShare = badShare;
    this.tenants = tenants;
  }

  /**
   * Generates {@link Options#poolSize()} bodies as the options describe, and with a bad tenant
   * {@code poolSize × share} (at least one) that also carry it.
   */
  public static RequestPool generate(Options options) {
    List<String> tenants = new ArrayList<>(options.tenants() + 1);
    for (int t = 0; t < options.tenants(); t++) {
      tenants.add("tenant-" + t);
    }
    double share = options.badTenant().map(BadTenant::share).orElse(0.0);
    int badCount = share == 0 ? 0 : Math.max(1, (int) Math.ceil(options.poolSize() * share));
    if (badCount > 0) {
      tenants.add(BadTenant.TENANT);
    }
    if (options.explodingSeries() > 0) {
      tenants.add(EXPLODING_TENANT);
    }
    Labels labels = new Labels(options.tenantLabel(), options.labels() - 2);
    WriteRequestEncoder encoder = new WriteRequestEncoder(options.seriesPerRequest() * 160);
    Body[] bodies = new Body[options.poolSize()];
    Body[] badBodies = new Body[badCount];
    try {
      for (int b = 0; b < bodies.length; b++) {
        bodies[b] = body(options, tenants, labels, encoder, b, false);
      }
      for (int b = 0; b < badBodies.length; b++) {
        badBodies[b] = body(options, tenants, labels, encoder, bodies.length + b, true);
      }
    } catch (RuntimeException e) {
      for (Body body : bodies) {
        if (body != null) {
          body.direct.release();
        }
      }
      for (Body body : badBodies) {
        if (body != null) {
          body.direct.release();
        }
      }
      throw e;
    }
    return new RequestPool(
        bodies, badBodies, share, Collections.unmodifiableList(tenants), options.tenants());
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

  /**
   * Body number {@code b}; with {@code bad}, {@code max(1, round(series / (tenants + 1)))} of its
   * series, at random places, belong to the bad tenant (the last of {@code tenants}).
   */
  private static Body body(
      Options options,
      List<String> tenants,
      Labels labels,
      WriteRequestEncoder encoder,
      int b,
      boolean bad) {
    Random random = new Random(options.seed() * 1_000_003L + b);
    int healthy = options.tenants();
    int[] perTenant = new int[tenants.size()];
    long timestamp = 1_700_000_000_000L + b * 15_000L;
    boolean[] badSeries = bad ? badSeries(options.seriesPerRequest(), healthy, random) : null;
    // The body's one tenant, or -1 when every series picks one at random.
    int only = options.shape().interleaves(b) ? -1 : b % healthy;
    // The exploding tenant also has its share of the steady series, as a tenant whose one metric
    // explodes does: the exploding metric is a minority of its traffic.
    int explodingIndex = tenants.indexOf(EXPLODING_TENANT);
    int steadyTenants = explodingIndex >= 0 ? healthy + 1 : healthy;
    boolean snappy = options.encoding() == Options.Encoding.SNAPPY;
    byte[] first = null;
    encoder.reset();
    for (int i = 0; i < options.seriesPerRequest(); i++) {
      int pick = random.nextInt(steadyTenants);
      if (pick == healthy) {
        pick = explodingIndex;
      }
      int tenant = bad && badSeries[i] ? healthy : only >= 0 ? only : pick;
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
      double value = random.nextInt(1_000_000) / 8.0;
      encoder.sample(snappy && i == 0 ? NONCE_PLACEHOLDER : value, timestamp).endSeries();
      if (snappy && i == 0) {
        first = encoder.toByteArray(); // the per-request literal; the rest is compressed once
        encoder.reset();
      }
    }
    if (!snappy) {
      byte[] zstd = Zstd.compress(encoder.toByteArray(), 3);
      ByteBuf direct = Unpooled.directBuffer(zstd.length).writeBytes(zstd);
      return new Body(direct, new byte[0], -1, new int[0], encoder.size(), perTenant, bad);
    }
    ByteBuf block = encoder.snappy(UnpooledByteBufAllocator.DEFAULT);
    // Drop the block's own length varint: the prefix carries the length of the whole request.
    while (block.readByte() < 0) {
      // continuation bytes of the varint
    }
    byte[] exploding = new byte[0];
    List<Integer> requestIds = new ArrayList<>();
    if (options.explodingSeries() > 0) {
      exploding = explodingSeries(options, requestIds);
      perTenant[explodingIndex] += options.explodingSeries();
    }
    int total = first.length + exploding.length + encoder.size();
    ByteBuf prefix = Unpooled.buffer(32 + first.length + exploding.length);
    for (int v = total; ; v >>>= 7) {
      if ((v & ~0x7f) == 0) {
        prefix.writeByte(v);
        break;
      }
      prefix.writeByte(v & 0x7f | 0x80);
    }
    literalHead(prefix, first.length);
    int nonceAt = prefix.writerIndex() + placeholderAt(first);
    prefix.writeBytes(first);
    int[] requestIdAt = new int[requestIds.size()];
    if (exploding.length > 0) {
      literalHead(prefix, exploding.length);
      for (int i = 0; i < requestIdAt.length; i++) {
        requestIdAt[i] = prefix.writerIndex() + requestIds.get(i);
      }
      prefix.writeBytes(exploding);
    }
    ByteBuf elements = Unpooled.directBuffer(block.readableBytes()).writeBytes(block);
    block.release();
    return new Body(
        elements, ByteBufUtil.getBytes(prefix), nonceAt, requestIdAt, total, perTenant, bad);
  }

  /** Where the eight bytes of {@link #NONCE_PLACEHOLDER} start in a series: its last sample. */
  private static int placeholderAt(byte[] series) {
    long bits = Double.doubleToRawLongBits(NONCE_PLACEHOLDER);
    for (int at = series.length - Long.BYTES; at >= 0; at--) {
      long v = 0;
      for (int i = Long.BYTES - 1; i >= 0; i--) {
        v = v << 8 | (series[at + i] & 0xFF);
      }
      if (v == bits) {
        return at;
      }
    }
    throw new IllegalStateException("the first series lacks its placeholder value");
  }

  /** The tag and length bytes of a snappy literal element of {@code length} bytes. */
  private static void literalHead(ByteBuf out, int length) {
    int n = length - 1;
    if (n < 60) {
      out.writeByte(n << 2);
    } else if (n < 1 << 8) {
      out.writeByte(60 << 2).writeByte(n);
    } else if (n < 1 << 16) {
      out.writeByte(61 << 2).writeShortLE(n);
    } else {
      out.writeByte(62 << 2).writeMediumLE(n);
    }
  }

  /**
   * The series of {@value #EXPLODING_TENANT} with a placeholder {@code request_id}: {@code
   * requestIds} receives where each placeholder's 16 bytes start in the returned bytes.
   */
  private static byte[] explodingSeries(Options options, List<Integer> requestIds) {
    String placeholder = "0".repeat(16);
    WriteRequestEncoder e = new WriteRequestEncoder();
    for (int i = 0; i < options.explodingSeries(); i++) {
      java.util.TreeMap<String, String> labels = new java.util.TreeMap<>();
      labels.put("__name__", EXPLODING_METRIC);
      labels.put(options.tenantLabel(), EXPLODING_TENANT);
      labels.put("request_id", placeholder);
      labels.put("worker", String.format(java.util.Locale.ROOT, "w%05d", i));
      e.beginSeries();
      labels.forEach(e::label);
      e.sample(i, 1_700_000_000_000L).endSeries();
    }
    byte[] bytes = e.toByteArray();
    byte[] marker = placeholder.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    for (int at = 0; at <= bytes.length - marker.length; at++) {
      if (java.util.Arrays.equals(bytes, at, at + marker.length, marker, 0, marker.length)) {
        requestIds.add(at);
        at += marker.length - 1;
      }
    }
    if (requestIds.size() != options.explodingSeries()) {
      throw new IllegalStateException("request_id placeholders: " + requestIds.size());
    }
    return bytes;
  }

  /** Which of {@code series} series belong to the bad tenant: a random set of the right size. */
  private static boolean[] badSeries(int series, int healthyTenants, Random random) {
    int k = (int) Math.max(1, Math.min(series, Math.round(series / (healthyTenants + 1.0))));
    boolean[] bad = new boolean[series];
    for (int chosen = 0; chosen < k; ) {
      int i = random.nextInt(series);
      if (!bad[i]) {
        bad[i] = true;
        chosen++;
      }
    }
    return bad;
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

  /**
   * The next request: a body carrying the bad tenant for every request number {@code k} where
   * {@code floor((k + 1) × share)} steps up, so exactly that share, evenly spread; otherwise the
   * next plain body. Each body set is handed out round-robin; the request number is the nonce.
   */
  public Write next() {
    long k = sequence.getAndIncrement();
    boolean bad = badBodies.length > 0 && (long) ((k + 1) * badShare) > (long) (k * badShare);
    Body body =
        bad
            ? badBodies[Math.floorMod(nextBad.getAndIncrement(), badBodies.length)]
            : bodies[Math.floorMod(next.getAndIncrement(), bodies.length)];
    return new Write(body, k);
  }

  /**
   * Tenant IDs: the healthy ones, then the bad tenant and the exploding tenant when there are;
   * {@link Body#tenantIndexes()} index this list.
   */
  public List<String> tenants() {
    return tenants;
  }

  /** Index of {@value BadTenant#TENANT} in {@link #tenants()}, or -1. */
  public int badTenantIndex() {
    return badBodies.length == 0 ? -1 : healthy;
  }

  /**
   * The body numbered {@code index} among those without the bad tenant, for timing work on the same
   * data ({@link CodecFloor}).
   */
  Body body(int index) {
    return bodies[index];
  }

  /** Distinct bodies without the bad tenant. */
  int plainBodies() {
    return bodies.length;
  }

  /** Distinct bodies, with and without the bad tenant. */
  public int size() {
    return bodies.length + badBodies.length;
  }

  /** Distinct tenants in a body, on average. */
  public double averageTenants() {
    return all().mapToInt(b -> b.tenantIndexes().length).average().orElse(0);
  }

  /** Average compressed size of a body. */
  public double averageCompressedBytes() {
    return all().mapToLong(Body::compressedBytes).average().orElse(0);
  }

  /** Average uncompressed size of a body. */
  public double averageUncompressedBytes() {
    return all().mapToLong(Body::uncompressedBytes).average().orElse(0);
  }

  private Stream<Body> all() {
    return Stream.concat(Arrays.stream(bodies), Arrays.stream(badBodies));
  }

  /** Frees the bodies; call only when no request is being written any more. */
  @Override
  public void close() {
    all()
        .forEach(
            body -> {
              if (body.direct.refCnt() > 0) {
                body.direct.release();
              }
            });
  }
}
