package io.prwrelay.server.isolation;

import io.prwrelay.server.Main;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The relay as a child JVM, as it runs in production: {@link Main} with a properties file, on the
 * test classpath (as {@code MainProcessTest} starts it). Its output (standard output and error
 * together) is collected line by line, so a test can wait for a line, and so a failure can show
 * what the relay logged. {@link #close()} kills it if it is still running.
 */
final class RelayProcess implements AutoCloseable {
  /** The JVM flags of a small container: heap and direct memory of 256 MiB, an OOM ends it. */
  static final List<String> SMALL_CONTAINER =
      List.of("-Xmx256m", "-XX:MaxDirectMemorySize=256m", "-XX:+ExitOnOutOfMemoryError");

  private static final Pattern LISTENING = Pattern.compile("listening on /127\\.0\\.0\\.1:(\\d+)");

  private final Process process;
  private final List<String> output = new ArrayList<>();
  private final Thread reader;
  private volatile int port = -1;

  private RelayProcess(Process process) {
    this.process = process;
    this.reader = new Thread(this::read, "relay-" + process.pid() + "-output");
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts {@code Main --config <file>} with {@code config} as the file, listening on a free port
   * of 127.0.0.1 unless {@code config} says otherwise, as a small container runs it ({@link
   * #SMALL_CONTAINER}: memory a sender's bytes can take is bounded and charged, and running out
   * ends the relay instead of leaving it limping). Does not wait for it to listen.
   *
   * @param dir where the properties file is written
   */
  static RelayProcess start(Path dir, Map<String, String> config) throws IOException {
    return start(dir, config, SMALL_CONTAINER);
  }

  /** As {@link #start(Path, Map)}, with {@code jvmFlags} for the child JVM. */
  static RelayProcess start(Path dir, Map<String, String> config, List<String> jvmFlags)
      throws IOException {
    Map<String, String> props = new TreeMap<>();
    props.put("relay.server.host", "127.0.0.1");
    props.put("relay.server.port", "0");
    props.putAll(config);
    StringBuilder file = new StringBuilder();
    props.forEach((k, v) -> file.append(k).append('=').append(v).append('\n'));
    Path properties = Files.createTempFile(dir, "relay", ".properties");
    Files.writeString(properties, file);
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmFlags);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Main.class.getName());
    cmd.add("--config");
    cmd.add(properties.toString());
    return new RelayProcess(new ProcessBuilder(cmd).redirectErrorStream(true).start());
  }

  private void read() {
    try (BufferedReader in =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        Matcher m = LISTENING.matcher(line);
        if (m.find()) {
          port = Integer.parseInt(m.group(1));
        }
        synchronized (output) {
          output.add(line);
          output.notifyAll();
        }
      }
    } catch (IOException e) {
      synchronized (output) {
        output.add("(output unreadable: " + e + ")");
      }
    } finally {
      synchronized (output) {
        output.notifyAll();
      }
    }
  }

  /**
   * Waits until the relay logs that it listens.
   *
   * @throws AssertionError naming what it logged when it exits or takes longer than {@code timeout}
   */
  RelayProcess awaitListening(Duration timeout) throws InterruptedException {
    if (awaitLine(timeout, l -> LISTENING.matcher(l).find()) == null) {
      throw new AssertionError(
          "relay not listening within " + timeout + " (alive: " + isAlive() + "):\n" + log());
    }
    return this;
  }

  /**
   * Waits for a line of output matching {@code match}, counting lines already logged.
   *
   * @return the line, or {@code null} when the relay's output ended or {@code timeout} passed
   */
  String awaitLine(Duration timeout, Predicate<String> match) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (output) {
      for (int seen = 0; ; ) {
        for (; seen < output.size(); seen++) {
          if (match.test(output.get(seen))) {
            return output.get(seen);
          }
        }
        long left = deadline - System.nanoTime();
        if (left <= 0 || (!reader.isAlive() && seen == output.size())) {
          return null;
        }
        TimeUnit.NANOSECONDS.timedWait(output, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
      }
    }
  }

  InetSocketAddress address() {
    if (port < 0) {
      throw new IllegalStateException("the relay has not said where it listens:\n" + log());
    }
    return new InetSocketAddress("127.0.0.1", port);
  }

  /** Everything logged so far. */
  String log() {
    synchronized (output) {
      return String.join("\n", output);
    }
  }

  /** The lines logged so far. */
  List<String> lines() {
    synchronized (output) {
      return List.copyOf(output);
    }
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** {@code kill -9}: the relay gets no chance to flush or close anything. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new AssertionError("relay " + process.pid() + " survived SIGKILL");
    }
  }

  /** SIGTERM, then waits for the exit and the end of its output; returns the exit code. */
  int stop(Duration timeout) throws InterruptedException {
    process.destroy();
    return awaitExit(timeout);
  }

  /** Waits for the relay to exit by itself and for the end of its output; returns the exit code. */
  int awaitExit(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
      throw new AssertionError("relay still running after " + timeout + ":\n" + log());
    }
    reader.join(TimeUnit.SECONDS.toMillis(10));
    return process.exitValue();
  }

  @Override
  public void close() {
    process.destroyForcibly();
    try {
      process.waitFor(30, TimeUnit.SECONDS);
      reader.join(TimeUnit.SECONDS.toMillis(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UncheckedIOException(new IOException("interrupted while stopping the relay", e));
    }
  }
}
