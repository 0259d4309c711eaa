package io.prwrelay.bench.container;

import com.google.protobuf.CodedInputStream;
import io.prwrelay.bench.load.LoopbackUrl;
import io.prwrelay.server.config.Durations;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The checks of the container image that need a sender and a downstream beside the relay, run by
 * {@code docker/test-image.sh} against a relay in a container on the host's network: {@code java
 * -cp relay-bench/target/loadgen.jar io.prwrelay.bench.container.ContainerCheck drain|queue ...}.
 * Each plays the sender and a {@link ScriptedDownstream} on 127.0.0.1, runs the shell commands it
 * is given to stop, kill or start the container at the right moment, prints what it saw and exits 0
 * when the relay kept its promise, 1 when it did not (the line says what), 2 on a usage error.
 *
 * <ul>
 *   <li>{@code drain}: the downstream answers every batch after a delay; once every request's
 *       batches have reached it, the stop command runs ({@code podman stop}). Every request in
 *       flight must still be answered 204 and every series delivered.
 *   <li>{@code queue} (a relay in queue mode): the downstream answers 503 to everything, so every
 *       2xx the relay answers means "fsync'd to the tenant's queue". Senders write distinct series
 *       while the kill command runs ({@code podman kill}, SIGKILL); then the downstream accepts,
 *       the start command runs, and every series of every request answered 2xx must arrive (at
 *       least once: duplicates are reported, not failed).
 * </ul>
 */
@Command(
    name = "ContainerCheck",
    mixinStandardHelpOptions = true,
    subcommands = {ContainerCheck.Drain.class, ContainerCheck.Queue.class})
public final class ContainerCheck {
  private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration POLL = Duration.ofMillis(100);

  private ContainerCheck() {}

  public static void main(String[] args) {
    CommandLine cl = new CommandLine(new ContainerCheck());
    cl.registerConverter(Duration.class, Durations::parse);
    System.exit(cl.execute(args));
  }

  /** Options both checks share: where the relay listens and where its downstream must be. */
  static class Peers {
    @Option(
        names = "--relay",
        required = true,
        converter = LoopbackUrl.class,
        paramLabel = "URL",
        description = "the relay's base URL on loopback, e.g. http://127.0.0.1:18080")
    URI relay;

    @Option(
        names = "--sink-port",
        required = true,
        paramLabel = "PORT",
        description = "port of the downstream on 127.0.0.1 (the relay's relay.downstream.url)")
    int sinkPort;

    @Option(names = "--tenants", paramLabel = "N", description = "tenants per request")
    int tenants = 4;

    @Option(
        names = "--series",
        paramLabel = "N",
        description = "series of each tenant in each request")
    int series = 50;

    String tenant(int t) {
      return "tenant-" + t;
    }

    /**
     * Request {@code seq}: {@code series} series of each tenant, interleaved, each named by its
     * request and index ({@code seq}, {@code n} labels) so that the downstream can tell every one
     * apart.
     */
    byte[] request(long seq, WriteRequestEncoder e) {
      e.reset();
      long now = System.currentTimeMillis();
      for (int n = 0; n < series; n++) {
        for (int t = 0; t < tenants; t++) {
          e.beginSeries()
              .label("__name__", "container_check")
              .label("n", Integer.toString(n))
              .label("seq", Long.toString(seq))
              .label("service_id", tenant(t))
              .sample(seq, now)
              .endSeries();
        }
      }
      return e.snappy();
    }

    HttpResponse<String> post(HttpClient http, byte[] body)
        throws IOException, InterruptedException {
      return http.send(write(body), HttpResponse.BodyHandlers.ofString());
    }

    HttpRequest write(byte[] body) {
      return HttpRequest.newBuilder(relay.resolve("/api/v1/write"))
          .timeout(HTTP_TIMEOUT)
          .header("Content-Encoding", "snappy")
          .header("Content-Type", "application/x-protobuf")
          .header("X-Prometheus-Remote-Write-Version", "0.1.0")
          .POST(HttpRequest.BodyPublishers.ofByteArray(body))
          .build();
    }

    boolean ready(HttpClient http) {
      try {
        HttpRequest get =
            HttpRequest.newBuilder(relay.resolve("/-/ready"))
                .timeout(Duration.ofSeconds(2))
                .build();
        return http.send(get, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
      } catch (IOException e) {
        return false;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
  }

  /** Stops the container while every request's batches wait for the downstream's answer. */
  @Command(
      name = "drain",
      description = "podman stop while requests are in flight: each must still be answered 204")
  static final class Drain extends Peers implements Callable<Integer> {
    @Option(names = "--stop-command", required = true, paramLabel = "CMD")
    String stopCommand;

    @Option(names = "--requests", paramLabel = "N", description = "requests in flight at the stop")
    int requests = 6;

    @Option(
        names = "--delay",
        paramLabel = "D",
        description = "how long the downstream holds each answer (below the attempt timeout)")
    Duration delay = Duration.ofSeconds(2);

    @Override
    public Integer call() throws Exception {
      try (ScriptedDownstream downstream = ScriptedDownstream.counting(sinkPort, 2)) {
        for (int t = 0; t < tenants; t++) {
          downstream.rule(tenant(t), () -> Reply.slow(delay));
        }
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        WriteRequestEncoder e = new WriteRequestEncoder();
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
          answers.add(http.sendAsync(write(request(i, e)), HttpResponse.BodyHandlers.ofString()));
        }
        long expected = (long) requests * tenants * series;
        if (!waitFor(Duration.ofSeconds(20), () -> downstream.totalSeries() == expected)) {
          return fail(
              "the downstream received "
                  + downstream.totalSeries()
                  + " of "
                  + expected
                  + " series");
        }
        long stopAt = System.nanoTime();
        Shell stop = Shell.start(stopCommand);
        Map<Integer, Integer> statuses = new TreeMap<>();
        for (var answer : answers) {
          int status;
          try {
            status = answer.get(HTTP_TIMEOUT.toSeconds(), TimeUnit.SECONDS).statusCode();
          } catch (ExecutionException io) {
            status = 0;
          }
          statuses.merge(status, 1, Integer::sum);
        }
        long answeredMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopAt);
        int stopExit = stop.await(Duration.ofSeconds(60));
        System.out.printf(
            "drain: %d requests in flight at the stop (%d series held by a %d ms downstream):"
                + " answers %s (0 = no answer), all answered %d ms after the stop; stop command"
                + " exited %d after %d ms%n",
            requests,
            expected,
            delay.toMillis(),
            statuses,
            answeredMs,
            stopExit,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopAt));
        if (!statuses.equals(Map.of(204, requests))) {
          return fail("requests in flight at the stop were not all answered 204: " + statuses);
        }
        if (stopExit != 0) {
          return fail("'" + stopCommand + "' exited " + stopExit);
        }
        System.out.println("drain: OK");
        return 0;
      }
    }
  }

  /** Kills the container while senders write to its queue, restarts it and counts every series. */
  @Command(
      name = "queue",
      description =
          "queue mode: every series answered 2xx survives podman kill and a restart (at least once)")
  static final class Queue extends Peers implements Callable<Integer> {
    @Option(names = "--kill-command", required = true, paramLabel = "CMD")
    String killCommand;

    @Option(names = "--start-command", required = true, paramLabel = "CMD")
    String startCommand;

    @Option(names = "--connections", paramLabel = "N")
    int connections = 4;

    @Option(
        names = "--kill-after",
        paramLabel = "D",
        description = "how long the senders write before the kill; they go on writing during it")
    Duration killAfter = Duration.ofSeconds(3);

    @Option(names = "--drain-timeout", paramLabel = "D")
    Duration drainTimeout = Duration.ofSeconds(90);

    /** When the downstream started accepting: every request recorded after it was answered 200. */
    private volatile long flippedAt;

    @Override
    public Integer call() throws Exception {
      try (ScriptedDownstream downstream = recording(sinkPort)) {
        // Every batch is refused until the relay has been killed, so each 2xx it answered can only
        // mean "fsync'd to the tenant's queue". Nothing runs the relay when this flips.
        var failing = new AtomicBoolean(true);
        Reply unavailable = Reply.status(503, "unavailable");
        for (int t = 0; t < tenants; t++) {
          downstream.rule(tenant(t), () -> failing.get() ? unavailable : null);
        }
        Map<String, Set<String>> acknowledged = new ConcurrentHashMap<>();
        AtomicLong seq = new AtomicLong();
        AtomicLong accepted = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicLong broken = new AtomicLong();
        long sendUntil = System.nanoTime() + killAfter.toNanos() + Duration.ofSeconds(2).toNanos();
        List<Thread> senders = new ArrayList<>();
        for (int c = 0; c < connections; c++) {
          Thread sender =
              new Thread(
                  () -> {
                    HttpClient http =
                        HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                    WriteRequestEncoder e = new WriteRequestEncoder();
                    while (System.nanoTime() - sendUntil < 0) {
                      long s = seq.getAndIncrement();
                      try {
                        int status = post(http, request(s, e)).statusCode();
                        if (status / 100 == 2) {
                          accepted.incrementAndGet();
                          for (int t = 0; t < tenants; t++) {
                            Set<String> keys =
                                acknowledged.computeIfAbsent(
                                    tenant(t), k -> ConcurrentHashMap.newKeySet());
                            for (int n = 0; n < series; n++) {
                              keys.add(s + "/" + n);
                            }
                          }
                        } else {
                          refused.incrementAndGet();
                        }
                      } catch (IOException io) {
                        broken.incrementAndGet();
                        pause(Duration.ofMillis(50));
                      } catch (InterruptedException stop) {
                        return;
                      }
                    }
                  },
                  "sender-" + c);
          sender.start();
          senders.add(sender);
        }
        pause(killAfter);
        long acceptedBeforeKill = accepted.get();
        int killExit = Shell.start(killCommand).await(Duration.ofSeconds(30));
        for (Thread sender : senders) {
          sender.join(HTTP_TIMEOUT.toMillis());
        }
        failing.set(false);
        long startAt = System.nanoTime();
        flippedAt = startAt;
        int startExit = Shell.start(startCommand).await(Duration.ofSeconds(60));
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        boolean ready = waitFor(Duration.ofSeconds(60), () -> ready(http));
        long readyMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startAt);
        long expected = acknowledged.values().stream().mapToLong(Set::size).sum();
        boolean drained =
            ready
                && waitFor(
                    drainTimeout, () -> missing(acknowledged, received(downstream)).isEmpty());
        Map<String, Set<String>> received = received(downstream);
        Map<String, Integer> missing = missing(acknowledged, received);
        long duplicates = duplicates(downstream);
        System.out.printf(
            "queue: %d requests answered 2xx (%d of them before the kill), %d refused, %d without"
                + " an answer (the kill); kill exited %d, start exited %d, ready %d ms after the"
                + " start; %d acknowledged series, %d distinct received, %d received more than"
                + " once, missing by tenant %s%n",
            accepted.get(),
            acceptedBeforeKill,
            refused.get(),
            broken.get(),
            killExit,
            startExit,
            readyMs,
            expected,
            received.values().stream().mapToLong(Set::size).sum(),
            duplicates,
            missing);
        if (killExit != 0 || startExit != 0) {
          return fail("the kill or start command failed");
        }
        if (!ready) {
          return fail("the restarted relay was not ready within 60 s");
        }
        if (acceptedBeforeKill == 0) {
          return fail("no request was answered 2xx before the kill: nothing was checked");
        }
        if (!drained) {
          return fail("series answered 2xx never reached the downstream: " + missing);
        }
        System.out.println("queue: OK");
        return 0;
      }
    }

    private static ScriptedDownstream recording(int port) throws IOException {
      return ScriptedDownstream.recording(port);
    }

    /** Whether {@code r} came after the downstream started accepting, so it was answered 200. */
    private boolean accepted(Received r) {
      return r.tenant() != null && r.atNanos() - flippedAt > 0;
    }

    /** The {@code seq/n} of every series each tenant received in a request answered 2xx. */
    private Map<String, Set<String>> received(ScriptedDownstream downstream) {
      Map<String, Set<String>> m = new HashMap<>();
      for (Received r : downstream.received()) {
        if (accepted(r)) {
          m.computeIfAbsent(r.tenant(), t -> new HashSet<>()).addAll(SeriesKeys.of(r.body()));
        }
      }
      return m;
    }

    private long duplicates(ScriptedDownstream downstream) {
      Set<String> seen = new HashSet<>();
      long twice = 0;
      for (Received r : downstream.received()) {
        if (accepted(r)) {
          for (String key : SeriesKeys.of(r.body())) {
            if (!seen.add(r.tenant() + "/" + key)) {
              twice++;
            }
          }
        }
      }
      return twice;
    }

    private static Map<String, Integer> missing(
        Map<String, Set<String>> acknowledged, Map<String, Set<String>> received) {
      Map<String, Integer> m = new TreeMap<>();
      acknowledged.forEach(
          (tenant, keys) -> {
            Set<String> got = received.getOrDefault(tenant, Set.of());
            int n = 0;
            for (String k : keys) {
              if (!got.contains(k)) {
                n++;
              }
            }
            if (n > 0) {
              m.put(tenant, n);
            }
          });
      return m;
    }
  }

  /** Reads the {@code seq} and {@code n} labels of every series of a decompressed request. */
  static final class SeriesKeys {
    private SeriesKeys() {}

    /** {@code seq/n} of each series, in order. */
    static List<String> of(byte[] writeRequest) {
      List<String> keys = new ArrayList<>();
      try {
        CodedInputStream in = CodedInputStream.newInstance(writeRequest);
        for (int tag; (tag = in.readTag()) != 0; ) {
          if (tag >>> 3 != 1) {
            in.skipField(tag);
            continue;
          }
          CodedInputStream series = CodedInputStream.newInstance(in.readByteArray());
          String s = null;
          String n = null;
          for (int st; (st = series.readTag()) != 0; ) {
            if (st >>> 3 != 1) {
              series.skipField(st);
              continue;
            }
            CodedInputStream label = CodedInputStream.newInstance(series.readByteArray());
            String name = null;
            String value = null;
            for (int lt; (lt = label.readTag()) != 0; ) {
              switch (lt >>> 3) {
                case 1 -> name = label.readStringRequireUtf8();
                case 2 -> value = label.readStringRequireUtf8();
                default -> label.skipField(lt);
              }
            }
            if ("seq".equals(name)) {
              s = value;
            } else if ("n".equals(name)) {
              n = value;
            }
          }
          keys.add(s + "/" + n);
        }
      } catch (IOException e) {
        throw new IllegalStateException("the downstream received a malformed request", e);
      }
      return keys;
    }
  }

  /** A command line started with {@code sh -c}, its output going to this process's. */
  private record Shell(String line, Process process) {
    static Shell start(String line) throws IOException {
      return new Shell(line, new ProcessBuilder("sh", "-c", line).inheritIO().start());
    }

    /** Its exit code, or -1 after killing it when it runs longer than {@code timeout}. */
    int await(Duration timeout) throws InterruptedException {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        return -1;
      }
      return process.exitValue();
    }
  }

  private static boolean waitFor(Duration timeout, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      Thread.sleep(POLL.toMillis());
    }
    return true;
  }

  private static void pause(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static int fail(String problem) {
    System.out.println("FAILED: " + problem);
    return 1;
  }
}
