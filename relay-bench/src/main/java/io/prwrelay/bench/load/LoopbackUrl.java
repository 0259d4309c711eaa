package io.prwrelay.bench.load;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code --relay-url}: an {@code http://} URL whose host is on loopback, because a load test must
 * never reach another machine. Host names other than {@code localhost} are refused without being
 * resolved; an empty path becomes {@code /api/v1/write}.
 */
public final class LoopbackUrl implements ITypeConverter<URI> {
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

  @Override
  public URI convert(String value) throws URISyntaxException {
    URI uri = new URI(value);
    String host = uri.getHost();
    if (!"http".equalsIgnoreCase(uri.getScheme())) {
      throw new TypeConversionException("'" + value + "' must start with http://");
    }
    if (host == null || uri.getPort() == 0 || uri.getPort() > 65535) {
      throw new TypeConversionException("'" + value + "' needs a host and a valid port");
    }
    if (!isLoopback(host)) {
      throw new TypeConversionException(
          "host " + host + " is not a loopback address: only 127.0.0.0/8, ::1 and localhost");
    }
    return uri.getPath() == null || uri.getPath().isEmpty()
        ? new URI("http", null, host, uri.getPort(), "/api/v1/write", null, null)
        : uri;
  }

  /** Whether {@code host} (a name or an IP literal, IPv6 in brackets or not) is on loopback. */
  static boolean isLoopback(String host) {
    String h =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (h.equalsIgnoreCase("localhost")) {
      return true;
    }
    try {
      return (IPV4.matcher(h).matches() || h.contains(":"))
          && InetAddress.getByName(h).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
