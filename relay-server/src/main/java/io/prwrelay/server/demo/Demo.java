package io.prwrelay.server.demo;

import io.prwrelay.server.app.RelayServer;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.TenantCount;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.StringJoiner;
import java.util.TreeMap;

/**
 * {@code --demo}: the relay between an embedded sender and an embedded downstream, all on loopback,
 * for a few seconds. The sender posts mixed-tenant remote-write requests built with the testkit's
 * {@link WriteRequestEncoder}; the downstream, the testkit's {@link ScriptedDownstream}, counts
 * what each tenant received (by the tenant header) and answers 200 like Cortex. A live table shows
 * the routing; the demo exits 0 when every tenant received exactly the series sent for it.
 */
public final class Demo {
  static final List<String> TENANTS = List.of("checkout", "payments", "search", "frontend");
  static final String NO_TENANT = "anonymous";
  private static final Duration RUN_TIME = Duration.ofSeconds(5);
  private static final int SERIES_PER_REQUEST = 500;

  /** Series sent per tenant; touched by the sending thread only, as are the fields below. */
  private final Map<String, Long> sent = new TreeMap<>();

  /** Series each tenant had received when the table was last printed. */
  private final Map<String, Long> printed = new HashMap<>();

  /** The relay's answers to the sender, by status. */
  private final Map<Integer, Long> answers = new TreeMap<>();

  private final WriteRequestEncoder encoder = new WriteRequestEncoder();

  private Demo() {}

  /** Runs the demo, printing to {@code out}; returns the process exit code. */
  public static int run(PrintStream out) throws Exception {
    return new Demo().execute(out);
  }

  private int execute(PrintStream out) throws Exception {
    try (ScriptedDownstream downstream = ScriptedDownstream.counting(0, 1)) {
      return execute(out, downstream);
    }
  }

  private int execute(PrintStream out, ScriptedDownstream downstream) throws Exception {
    String url = downstream.url();
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
      HttpRequest req =
          HttpRequest.newBuilder(write)
              .timeout(Duration.ofSeconds(10))
              .header("Content-Type", "application/x-protobuf")
              .header("Content-Encoding", "snappy")
              .header("X-Prometheus-Remote-Write-Version", "0.1.0")
              .header("User-Agent", "prw-relay-demo")
              .POST(HttpRequest.BodyPublishers.ofByteArray(request(random)))
              .build();
      int status = http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
      answers.merge(status, 1L, Long::sum);
      failures += status == 204 ? 0 : 1;
      if (System.nanoTime() >= nextPrint) {
        lastSeries = table(out, downstream.counts(), lastSeries);
        nextPrint += 1_000_000_000L;
      }
      Thread.sleep(5);
    }
    relay.shutdown(Duration.ofSeconds(5));
    Map<String, TenantCount> received = downstream.counts();
    out.println();
    boolean match = true;
    for (Map.Entry<String, Long> e : sent.entrySet()) {
      long s = e.getValue();
      TenantCount count = received.get(e.getKey());
      long r = count == null ? 0 : count.series();
      match &= s == r;
      out.printf(
          "%-10s sent %7d series, downstream received %7d %s%n",
          e.getKey(), s, r, s == r ? "ok" : "MISMATCH");
    }
    out.println("relay answers to the sender: " + answers);
    boolean ok = match && failures == 0 && received.keySet().equals(sent.keySet());
    out.println(ok ? "demo OK: every tenant received exactly its series" : "demo FAILED");
    return ok ? 0 : 1;
  }

  /** Prints each tenant's series/s since the last table, bytes so far and downstream answers. */
  private long table(PrintStream out, Map<String, TenantCount> received, long lastSeries) {
    out.printf("%-10s %10s %12s %s%n", "tenant", "series/s", "bytes", "downstream status");
    long total = 0;
    for (Map.Entry<String, TenantCount> e : received.entrySet()) {
      TenantCount c = e.getValue();
      total += c.series();
      long before = printed.getOrDefault(e.getKey(), 0L);
      StringJoiner statuses = new StringJoiner(",");
      c.answers().keySet().forEach(status -> statuses.add(Integer.toString(status)));
      out.printf("%-10s %10d %12d %s%n", e.getKey(), c.series() - before, c.bytes(), statuses);
      printed.put(e.getKey(), c.series());
    }
    out.printf("%-10s %10d%n%n", "all", total - lastSeries);
    return total;
  }

  /** A snappy request of 500 series spread over the demo tenants, some without a tenant label. */
  private byte[] request(Random random) {
    encoder.reset();
    long now = System.currentTimeMillis();
    for (int i = 0; i < SERIES_PER_REQUEST; i++) {
      int pick = random.nextInt(TENANTS.size() + 1);
      String tenant = pick < TENANTS.size() ? TENANTS.get(pick) : null;
      encoder
          .beginSeries()
          .label("__name__", "demo_requests_total")
          .label("pod", "pod-" + random.nextInt(50));
      if (tenant != null) {
        encoder.label("service_id", tenant);
      }
      encoder.sample(random.nextInt(1000), now).endSeries();
      sent.merge(tenant == null ? NO_TENANT : tenant, 1L, Long::sum);
    }
    return encoder.snappy();
  }
}
