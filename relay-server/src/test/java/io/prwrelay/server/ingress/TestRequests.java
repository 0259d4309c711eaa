package io.prwrelay.server.ingress;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Requests the ingress tests hand to an embedded channel, and the lines of answers the socket tests
 * read off a real connection.
 */
final class TestRequests {
  private TestRequests() {}

  /**
   * An HTTP/1.1 request with {@code body} and its Content-Length, then {@code headers} as name,
   * value pairs.
   */
  static FullHttpRequest request(HttpMethod method, String uri, byte[] body, String... headers) {
    FullHttpRequest r =
        new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, uri, Unpooled.wrappedBuffer(body));
    r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
    for (int i = 0; i < headers.length; i += 2) {
      r.headers().set(headers[i], headers[i + 1]);
    }
    return r;
  }

  /**
   * A PRW 1.0 write of the snappy-compressed {@code body} to {@code /api/v1/write}, then {@code
   * headers} as name, value pairs.
   */
  static FullHttpRequest write(byte[] body, String... headers) {
    String[] all = new String[headers.length + 4];
    all[0] = "Content-Encoding";
    all[1] = "snappy";
    all[2] = "Content-Type";
    all[3] = "application/x-protobuf";
    System.arraycopy(headers, 0, all, 4, headers.length);
    return request(HttpMethod.POST, "/api/v1/write", body, all);
  }

  /** One line of an answer, without its CR LF. */
  static String line(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != '\n') {
      if (c < 0) {
        throw new EOFException("connection closed; read so far: " + b);
      }
      if (c != '\r') {
        b.write(c);
      }
    }
    return b.toString(StandardCharsets.US_ASCII);
  }

  /** An answer's head: the status line, then the header lines until the blank line. */
  static List<String> head(InputStream in) throws IOException {
    List<String> lines = new ArrayList<>();
    for (String l = line(in); !l.isEmpty(); l = line(in)) {
      lines.add(l);
    }
    return lines;
  }
}
