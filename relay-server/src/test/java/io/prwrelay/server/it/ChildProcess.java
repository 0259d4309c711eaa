package io.prwrelay.server.it;

import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * A real program (Prometheus, vmagent) started for one test in its own temporary directory, its
 * standard output and error in a log file there: what {@link PrometheusProcess} and {@link
 * VmagentProcess} share. {@link #close()} stops it (SIGTERM, then SIGKILL after 5 s) and deletes
 * the directory; a shutdown hook kills it if the test JVM exits first.
 */
final class ChildProcess implements AutoCloseable {
  static final String HOST = "127.0.0.1";

  private static final Duration STOP_GRACE = Duration.ofSeconds(5);
  private static final Duration POLL_INTERVAL = Duration.ofMillis(200);
  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(2))
          .build();

  private final String name;
  private final Process process;
  private final Path directory;
  private final Path logFile;
  private final Thread shutdownHook;

  private ChildProcess(String name, Process process, Path directory, Path logFile) {
    this.name = name;
    this.process = process;
    this.directory = directory;
    this.logFile = logFile;
    this.shutdownHook = new Thread(process::destroyForcibly, name + "-" + process.pid() + "-kill");
    Runtime.getRuntime().addShutdownHook(shutdownHook);
  }

  /**
   * Runs {@code command} in {@code directory}, its output going to {@code logFile}.
   *
   * @param name what the messages call it, e.g. {@code "Prometheus"}
   */
  static ChildProcess start(String name, List<String> command, Path directory, Path logFile)
      throws IOException {
    Process process =
        new ProcessBuilder(command)
            .directory(directory.toFile())
            .redirectErrorStream(true)
            .redirectOutput(logFile.toFile())
            .start();
    return new ChildProcess(name, process, directory, logFile);
  }

  /**
   * The program to run: the path the system property {@code property} names (if executable), else
   * {@code name} on the {@code PATH}, else {@code /usr/bin/<name>}.
   */
  static Optional<Path> binary(String property, String name) {
    String configured = System.getProperty(property);
    if (configured != null && !configured.isBlank()) {
      Path path = Paths.get(configured);
      return Files.isExecutable(path) ? Optional.of(path) : Optional.empty();
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path candidate = dir.isEmpty() ? null : Paths.get(dir, name);
      if (candidate != null && Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    Path fallback = Paths.get("/usr/bin", name);
    return Files.isExecutable(fallback) ? Optional.of(fallback) : Optional.empty();
  }

  /** A port that was free on {@value #HOST} a moment ago. */
  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
      return socket.getLocalPort();
    }
  }

  /**
   * Waits until {@code ready} holds and {@code probe} answers 200, failing early when the process
   * exits.
   *
   * @throws IllegalStateException when the process exits or is not ready within {@code timeout};
   *     the message carries the tail of its log
   */
  void awaitReady(URI probe, BooleanSupplier ready, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    HttpRequest request = HttpRequest.newBuilder(probe).timeout(Duration.ofSeconds(5)).build();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            name
                + " exited with status "
                + process.exitValue()
                + " before it was ready\n"
                + logTail(40));
      }
      try {
        if (ready.getAsBoolean()
            && HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (IOException notListeningYet) {
        // Polled again below until the deadline.
      }
      Thread.sleep(POLL_INTERVAL.toMillis());
    }
    throw new IllegalStateException(
        name + " not ready within " + timeout.toSeconds() + " s\n" + logTail(40));
  }

  /** The file receiving the program's standard output and error. */
  Path logFile() {
    return logFile;
  }

  /** Everything the program has logged so far, or a note why the log could not be read. */
  String log() {
    try {
      return Files.readString(logFile, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(log " + logFile + " unreadable: " + e + ")";
    }
  }

  /** The last {@code count} lines of the log, for failure messages. */
  String logTail(int count) {
    List<String> lines = Arrays.asList(log().split("\n", -1));
    return "--- "
        + name
        + " log tail ("
        + logFile
        + ") ---\n"
        + String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
  }

  /** The lines of the log that contain {@code part}. */
  List<String> logLines(String part) {
    return log().lines().filter(l -> l.contains(part)).toList();
  }

  /**
   * Stops the program (SIGTERM, then SIGKILL after 5 s) and deletes its directory.
   *
   * @throws InterruptedIOException when interrupted while waiting; the process has then been sent
   *     SIGKILL and the interrupt flag is set again
   * @throws IllegalStateException when the process survives even SIGKILL for 5 s
   */
  @Override
  public void close() throws IOException {
    try {
      process.destroy();
      if (!process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        if (!process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
          throw new IllegalStateException(name + " pid " + process.pid() + " did not die");
        }
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      InterruptedIOException stop =
          new InterruptedIOException(
              "interrupted while stopping " + name + " pid " + process.pid());
      stop.initCause(e);
      throw stop;
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
      } catch (IllegalStateException jvmAlreadyShuttingDown) {
        // The hook is running or about to run; nothing left to undo.
      }
    }
    if (Files.exists(directory)) {
      try (Stream<Path> paths = Files.walk(directory)) {
        for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(path);
        }
      }
    }
  }
}
