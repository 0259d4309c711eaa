package io.prwrelay.server.demo;

import com.google.protobuf.CodedOutputStream;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.prwrelay.core.remotewrite.SeriesView;
import io.prwrelay.core.remotewrite.WriteRequestReader;
import io.prwrelay.core.remotewrite.WriteRequestVisitor;
import io.prwrelay.core.wire.LabelFields;
import io.prwrelay.core.wire.TimeSeriesFields;
import io.prwrelay.core.wire.WriteRequestFields;
import io.prwrelay.server.app.RelayServer;
import io.prwrelay.server.config.RelayConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.xerial.snappy.Snappy;

/**
 * {@code --demo}: the relay between an embedded sender and an embedded downstream, all on loopback,
 * for a few seconds. The sender posts mixed-tenant remote-write requests; the downstream records
 * what each tenant received (by the tenant header) and answers 200 like Cortex. A live table shows
 * the routing; the demo exits 0 when every tenant received exactly the series sent for it.
 */
public final class Demo {
  static final List<String> TENANTS = List.of("checkout", "payments", "search", "frontend");
  static final String NO_TENANT = "anonymous";
  private static final Duration RUN_TIME = Duration.ofSeconds(5);

  private final Map<String, Stats> sent = new ConcurrentHashMap<>();
  private final Map<String, Stats> received = new ConcurrentHashMap<>();
  private final Map<Integer, AtomicLong> answers = new ConcurrentHashMap<>();

  private Demo() {}

  /** Runs the demo, printing to {@code out}; returns the process exit code. */
  public static int run(PrintStream out) throws Exception {
    return new Demo().execute(out);
  }

  private int execute(PrintStream out) throws Exception {
    HttpServer downstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    downstream.createContext("/api/v1/push", this::record);
    downstream.start();
    String url = "http://127.0.0.1:" + downstream.getAddress().getPort() + "/api/v1/push";
    RelayConfig config =
        RelayConfig.load(
            null,
            Map.of(
                "relay.server.host", "127.0.0.1",
                "relay.server.port", "0",
                "relay.downstream.url", url,
                "relay.server.io-threads", "2"),
            Map.of());
    RelayServer relay = new RelayServer(config);
    relay.start();
    int port = relay.address().getPort();
    out.println(
        "prw-relay demo: sender -> relay on 127.0.0.1:" + port + " -> downstream on " + url);
    out.println("routing by label service_id; series without it go to tenant '" + NO_TENANT + "'");
    out.println();
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    URI write = URI.create("http://127.0.0.1:" + port + "/api/v1/write");
    Random random = new Random(42);
    long start = System.nanoTime();
    long nextPrint = start + 1_000_000_000L;
    long lastSeries = 0;
    int failures = 0;
    while (System.nanoTime() - start < RUN_TIME.toNanos()) {
      byte[] body = Snappy.compress(request(random, 500));
      HttpRequest req =
          HttpRequest.newBuilder(write)
              .timeout(Duration.ofSeconds(10))
              .header("Content-Type", "application/x-protobuf")
              .header("Content-Encoding", "snappy")
              .header("X-Prometheus-Remote-Write-Version", "0.1.0")
              .header("User-Agent", "prw-relay-demo")
              .POST(HttpRequest.BodyPublishers.ofByteArray(body))
              .build();
      int status = http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
      answers.computeIfAbsent(status, s -> new AtomicLong()).incrementAndGet();
      failures += status == 204 ? 0 : 1;
      if (System.nanoTime() >= nextPrint) {
        lastSeries = table(out, lastSeries);
        nextPrint += 1_000_000_000L;
      }
      Thread.sleep(5);
    }
    relay.shutdown(Duration.ofSeconds(5));
    downstream.stop(0);
    out.println();
    boolean match = true;
    for (String tenant : new TreeMap<>(sent).keySet()) {
      long s = sent.get(tenant).series.get();
      long r = received.getOrDefault(tenant, new Stats()).series.get();
      match &= s == r;
      out.printf(
          "%-10s sent %7d series, downstream received %7d %s%n",
          tenant, s, r, s == r ? "ok" : "MISMATCH");
    }
    out.println("relay answers to the sender: " + new TreeMap<>(answers));
    boolean ok = match && failures == 0 && received.keySet().equals(sent.keySet());
    out.println(ok ? "demo OK: every tenant received exactly its series" : "demo FAILED");
    return ok ? 0 : 1;
  }

  private long table(PrintStream out, long lastSeries) {
    out.printf("%-10s %10s %12s %s%n", "tenant", "series/s", "bytes", "downstream status");
    long total = 0;
    for (Map.Entry<String, Stats> e : new TreeMap<>(received).entrySet()) {
      Stats s = e.getValue();
      long series = s.series.get();
      total += series;
      out.printf(
          "%-10s %10d %12d %d%n", e.getKey(), series - s.printed, s.bytes.get(), s.lastStatus);
      s.printed = series;
    }
    out.printf("%-10s %10d%n%n", "all", total - lastSeries);
    return total;
  }

  /** The embedded downstream: counts series per tenant header and answers 200, as Cortex does. */
  private void record(HttpExchange exchange) throws IOException {
    try (InputStream in = exchange.getRequestBody()) {
      String tenant = exchange.getRequestHeaders().getFirst("X-Scope-OrgID");
      byte[] body = Snappy.uncompress(in.readAllBytes());
      int[] series = new int[1];
      new WriteRequestReader(List.of("service_id"))
          .read(
              body,
              0,
              body.length,
              new WriteRequestVisitor() {
                @Override
                public boolean onSeries(SeriesView s) {
                  series[0]++;
                  return true;
                }

                @Override
                public void onMetadata(int start, int end) {}
              });
      Stats stats = received.computeIfAbsent(tenant == null ? "(none)" : tenant, t -> new Stats());
      stats.series.addAndGet(series[0]);
      stats.bytes.addAndGet(body.length);
      stats.lastStatus = 200;
      exchange.sendResponseHeaders(200, -1);
    } finally {
      exchange.close();
    }
  }

  /** A request of {@code n} series spread over the demo tenants, some without a tenant label. */
  private byte[] request(Random random, int n) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(bytes);
    long now = System.currentTimeMillis();
    for (int i = 0; i < n; i++) {
      int pick = random.nextInt(TENANTS.size() + 1);
      String tenant = pick < TENANTS.size() ? TENANTS.get(pick) : null;
      byte[] series =
          series("demo_requests_total", "pod-" + random.nextInt(50), tenant, now, random);
      out.writeTag(WriteRequestFields.TIMESERIES, 2);
      out.writeUInt32NoTag(series.length);
      out.writeRawBytes(series);
      sent.computeIfAbsent(tenant == null ? NO_TENANT : tenant, t -> new Stats())
          .series
          .incrementAndGet();
    }
    out.flush();
    return bytes.toByteArray();
  }

  private static byte[] series(String name, String pod, String tenant, long now, Random random)
      throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(bytes);
    label(out, "__name__", name);
    label(out, "pod", pod);
    if (tenant != null) {
      label(out, "service_id", tenant);
    }
    ByteArrayOutputStream sample = new ByteArrayOutputStream();
    CodedOutputStream s = CodedOutputStream.newInstance(sample);
    s.writeDouble(1, random.nextInt(1000));
    s.writeInt64(2, now);
    s.flush();
    out.writeTag(TimeSeriesFields.SAMPLES, 2);
    out.writeUInt32NoTag(sample.size());
    out.writeRawBytes(sample.toByteArray());
    out.flush();
    return bytes.toByteArray();
  }

  private static void label(CodedOutputStream out, String name, String value) throws IOException {
    int size =
        CodedOutputStream.computeStringSize(LabelFields.NAME, name)
            + CodedOutputStream.computeStringSize(LabelFields.VALUE, value);
    out.writeTag(TimeSeriesFields.LABELS, 2);
    out.writeUInt32NoTag(size);
    out.writeString(LabelFields.NAME, name);
    out.writeString(LabelFields.VALUE, value);
  }

  private static final class Stats {
    final AtomicLong series = new AtomicLong();
    final AtomicLong bytes = new AtomicLong();
    volatile int lastStatus;
    long printed;
  }
}
