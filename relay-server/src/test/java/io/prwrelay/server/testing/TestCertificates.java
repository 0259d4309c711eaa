package io.prwrelay.server.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Keys and certificates made by the {@code openssl} command for tests: EC P-256, PEM files. */
public final class TestCertificates {
  private TestCertificates() {}

  /**
   * Writes a new key to {@code key} and a self-signed certificate for {@code CN=cn}, valid for two
   * days, to {@code cert}.
   */
  public static void selfSigned(Path key, Path cert, String cn) throws Exception {
    newKey(key, cert, cn, "-x509", "-days", "2");
  }

  /**
   * Writes a new key to {@code key} and a certificate signing request for {@code CN=cn} to {@code
   * csr}.
   */
  public static void signingRequest(Path key, Path csr, String cn) throws Exception {
    newKey(key, csr, cn);
  }

  private static void newKey(Path key, Path out, String cn, String... more) throws Exception {
    List<String> args =
        new ArrayList<>(
            List.of(
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                key.toString(),
                "-out",
                out.toString(),
                "-subj",
                "/CN=" + cn));
    args.addAll(List.of(more));
    openssl(args.toArray(String[]::new));
  }

  /** Runs {@code openssl args}; fails the test, with openssl's output, unless it exits 0. */
  public static void openssl(String... args) throws Exception {
    String[] command = new String[args.length + 1];
    command[0] = "openssl";
    System.arraycopy(args, 0, command, 1, args.length);
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "openssl finished");
    assertEquals(0, p.exitValue(), out);
  }
}
