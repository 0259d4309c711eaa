package io.prwrelay.server.isolation;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One remote-write sender's keep-alive HTTP/1.1 connection, used from one thread and blocking, as
 * one shard of a Prometheus remote-write queue uses its connection: a request is written, its
 * answer read, then the next request. Plain sockets keep the client's own cost small and steady, so
 * the answer times measured here are the relay's. A connection the relay closed is opened again for
 * the next request.
 */
final class SenderConnection implements AutoCloseable {
  /**
   * The relay's answer to one request.
   *
   * @param retryAfter the {@code Retry-After} header, or {@code null}
   * @param nanos from the first byte written to the last byte of the answer read
   * @param readNanos when the last byte of the answer was read ({@link System#nanoTime()})
   */
  record Answer(int status, String retryAfter, String body, long nanos, long readNanos) {
    boolean ok() {
      return status / 100 == 2;
    }
  }

  private final InetSocketAddress relay;
  private final InetAddress local;
  private final String path;
  private final int timeoutMillis;
  private Socket socket;
  private InputStream in;
  private OutputStream out;

  /**
   * @param path the write endpoint, such as {@code /api/v1/write}
   * @param timeoutMillis longest wait for an answer
   */
  SenderConnection(InetSocketAddress relay, String path, int timeoutMillis) {
    this(relay, null, path, timeoutMillis);
  }

  /**
   * @param local the address the connection comes from (another loopback address is another client
   *     to the relay), or {@code null} for any
   */
  SenderConnection(InetSocketAddress relay, InetAddress local, String path, int timeoutMillis) {
    this.relay = relay;
    this.local = local;
    this.path = path;
    this.timeoutMillis = timeoutMillis;
  }

  /**
   * POSTs a snappy-compressed PRW 1.0 body with the headers Prometheus sends and reads the answer.
   *
   * @throws IOException when the connection fails; it is closed and opened again next time
   */
  Answer post(byte[] snappyBody) throws IOException {
    return post(snappyBody, "application/x-protobuf", "0.1.0");
  }

  /** {@link #post} of a snappy-compressed PRW 2.0 body, with the headers of a PRW 2.0 sender. */
  Answer postV2(byte[] snappyBody) throws IOException {
    return post(snappyBody, "application/x-protobuf;proto=io.prometheus.write.v2.Request", "2.0.0");
  }

  private Answer post(byte[] snappyBody, String contentType, String version) throws IOException {
    if (socket == null) {
      connect();
    }
    byte[] head =
        ("POST "
                + path
                + " HTTP/1.1\r\nHost: relay\r\nContent-Type: "
                + contentType
                + "\r\nContent-Encoding: snappy\r\nX-Prometheus-Remote-Write-Version: "
                + version
                + "\r\nUser-Agent: lanes-test-sender\r\nContent-Length: "
                + snappyBody.length
                + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    long start = System.nanoTime();
    try {
      out.write(head);
      out.write(snappyBody);
      out.flush();
      return read(start);
    } catch (IOException e) {
      close();
      throw e;
    }
  }

  private void connect() throws IOException {
    Socket s = new Socket();
    try {
      s.setTcpNoDelay(true);
      if (local != null) {
        s.bind(new InetSocketAddress(local, 0));
      }
      s.connect(relay, 2_000);
      s.setSoTimeout(timeoutMillis);
    } catch (IOException e) {
      s.close();
      throw e;
    }
    socket = s;
    in = new BufferedInputStream(s.getInputStream(), 8192);
    out = s.getOutputStream();
  }

  private Answer read(long start) throws IOException {
    String status = line();
    String[] parts = status.split(" ", 3);
    if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
      throw new IOException("not an HTTP status line: " + status);
    }
    int code = Integer.parseInt(parts[1]);
    int length = 0;
    String retryAfter = null;
    boolean close = false;
    for (String h = line(); !h.isEmpty(); h = line()) {
      int colon = h.indexOf(':');
      String name = h.substring(0, colon).trim().toLowerCase(Locale.ROOT);
      String value = h.substring(colon + 1).trim();
      switch (name) {
        case "content-length" -> length = Integer.parseInt(value);
        case "retry-after" -> retryAfter = value;
        case "connection" -> close = value.equalsIgnoreCase("close");
        default -> {}
      }
    }
    byte[] body = in.readNBytes(length);
    if (body.length < length) {
      throw new EOFException("answer body cut after " + body.length + " of " + length + " bytes");
    }
    long read = System.nanoTime();
    if (close) {
      close();
    }
    return new Answer(
        code, retryAfter, new String(body, StandardCharsets.UTF_8), read - start, read);
  }

  private String line() throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream(64);
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) {
        throw new EOFException("connection closed by the relay; read so far: " + b);
      }
      if (c != '\r') {
        b.write(c);
      }
    }
    return b.toString(StandardCharsets.US_ASCII);
  }

  @Override
  public void close() {
    if (socket != null) {
      try {
        socket.close();
      } catch (IOException ignored) {
        // Closing a socket that failed: nothing left to do.
      }
      socket = null;
    }
  }
}
