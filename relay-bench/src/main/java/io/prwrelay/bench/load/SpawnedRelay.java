package io.prwrelay.bench.load;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The relay jar run as a child process: {@code java [jvm args] -Xlog:gc*:file=<gc log> -jar <jar>}
 * with {@code relay.server.host=127.0.0.1}, {@code relay.server.port=0} and {@code
 * relay.downstream.url} (the sink) as system properties, which win over every other source. The
 * port is read from the relay's startup line. Its output is drained continuously and the last lines
 * are kept for error reports. Once it listens, the generator attaches to it for its threads'
 * allocation counters ({@link RelayAllocation}); its resident memory comes from {@code /proc}.
 */
public final class SpawnedRelay implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("listening on \\S*:(\\d+)\\b");
  private static final int KEPT_LINES = 40;
  private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(60);

  /**
   * How the relay ended.
   *
   * @param cpu CPU time of the whole process, read just before SIGTERM (empty when the platform
   *     does not report it)
   * @param exitCode the exit code, or -1 when it had to be killed
   * @param memory resident memory, read just before SIGTERM (empty without {@code /proc})
   * @param gc pauses in its GC log
   * @param lastLines its last output lines
   */
  public record Stopped(
      Optional<Duration> cpu,
      Optional<ResidentMemory> memory,
      int exitCode,
      GcPauses gc,
      List<String> lastLines) {}

  private final Process process;
  private final Path gcLog;
  private final List<String> command;
  private final Deque<String> lastLines = new ArrayDeque<>();
  private final CompletableFuture<Integer> port = new CompletableFuture<>();
  private final Thread drain;
  private RelayAllocation allocation;
  private String allocationProblem = "not attached";

  private SpawnedRelay(Process process, Path gcLog, List<String> command) {
    this.process = process;
    this.gcLog = gcLog;
    this.command = command;
    this.drain = new Thread(this::drain, "relay-output");
    drain.setDaemon(true);
    drain.start();
  }

  /**
   * Starts the relay and waits until it listens.
   *
   * @param jar the relay jar
   * @param jvmArgs extra JVM options; {@code -Drelay.*} ones configure the relay further
   * @param sinkUrl the relay's downstream
   * @param tenantLabel set as {@code relay.tenant.labels} unless {@code jvmArgs} sets it
   * @param gcLog where the relay's JVM writes its GC log
   * @throws IOException when it cannot start or exits or stays silent instead of listening
   */
  public static SpawnedRelay start(
      Path jar, List<String> jvmArgs, URI sinkUrl, String tenantLabel, Path gcLog)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Drelay.tenant.labels=" + tenantLabel);
    cmd.addAll(jvmArgs);
    cmd.add("-Xlog:gc*:file=" + gcLog);
    cmd.add("-Drelay.server.host=127.0.0.1");
    cmd.add("-Drelay.server.port=0");
    cmd.add("-Drelay.downstream.url=" + sinkUrl);
    cmd.add("-jar");
    cmd.add(jar.toString());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    SpawnedRelay relay = new SpawnedRelay(p, gcLog, List.copyOf(cmd));
    try {
      relay.port.get(STARTUP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      relay.attach();
      return relay;
    } catch (ExecutionException e) {
      relay.close();
      throw new IOException(e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      relay.close();
      throw new IOException(
          "the relay did not report listening within "
              + STARTUP_TIMEOUT.toSeconds()
              + " s; its output:\n"
              + String.join("\n", relay.lastLines()));
    } catch (InterruptedException e) {
      relay.close();
      throw e;
    }
  }

  private void attach() {
    try {
      allocation = RelayAllocation.attach(process.pid());
    } catch (IOException | RuntimeException e) {
      allocationProblem = "cannot read its allocation counters: " + e;
    }
  }

  private void drain() {
    try (BufferedReader in =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        synchronized (lastLines) {
          if (lastLines.size() == KEPT_LINES) {
            lastLines.removeFirst();
          }
          lastLines.addLast(line);
        }
        if (!port.isDone()) {
          Matcher m = LISTENING.matcher(line);
          if (m.find()) {
            port.complete(Integer.parseInt(m.group(1)));
          }
        }
      }
    } catch (IOException e) {
      // The stream ends when the process does; nothing left to read.
    }
    if (!port.isDone()) {
      String exit;
      try {
        exit =
            process.waitFor(5, TimeUnit.SECONDS) ? "code " + process.exitValue() : "still running";
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        exit = "unknown";
      }
      port.completeExceptionally(
          new IOException(
              "the relay ended its output ("
                  + exit
                  + ") before listening; its output:\n"
                  + String.join("\n", lastLines())));
    }
  }

  /** The relay's remote-write URL. */
  public URI writeUrl() {
    return URI.create("http://127.0.0.1:" + port.join() + "/api/v1/write");
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** The exit code once the process has ended. */
  public int exitValue() {
    return process.exitValue();
  }

  /** The JVM command line. */
  public List<String> command() {
    return command;
  }

  public Path gcLog() {
    return gcLog;
  }

  /** CPU time the process has used so far; empty after it exited or when not reported. */
  public Optional<Duration> cpu() {
    return process.toHandle().info().totalCpuDuration();
  }

  /**
   * Heap bytes allocated so far by the relay's live threads; empty when the generator could not
   * attach ({@link #allocationProblem()}) or the relay does not answer.
   */
  public OptionalLong allocatedBytes() {
    return allocation == null ? OptionalLong.empty() : allocation.allocatedBytes();
  }

  /** Why {@link #allocatedBytes()} is empty. */
  public String allocationProblem() {
    return allocationProblem;
  }

  /** The relay's last output lines (at most 40). */
  public List<String> lastLines() {
    synchronized (lastLines) {
      return List.copyOf(lastLines);
    }
  }

  /**
   * Reads the CPU time and resident memory, sends SIGTERM and waits up to {@code grace} for the
   * exit; kills the process when it does not exit in time.
   */
  public Stopped stop(Duration grace) throws InterruptedException {
    Optional<Duration> cpu = cpu();
    Optional<ResidentMemory> memory = ResidentMemory.of(process.pid());
    detach();
    process.toHandle().destroy();
    int code;
    if (process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
      code = process.exitValue();
    } else {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
      code = -1;
    }
    drain.join(5_000);
    return new Stopped(cpu, memory, code, GcPauses.parse(gcLog), lastLines());
  }

  private void detach() {
    if (allocation != null) {
      allocation.close();
      allocation = null;
      allocationProblem = "detached";
    }
  }

  /** Kills the process if it is still running. */
  @Override
  public void close() {
    detach();
    if (process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
