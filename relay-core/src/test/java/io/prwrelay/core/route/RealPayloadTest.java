package io.prwrelay.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.oracle.v1.WriteRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The real node_exporter payloads in {@code ../shared/testdata}, routed by {@code instance}: every
 * batch equals the oracle's, every series is accounted for. Skipped when the directory is absent.
 */
class RealPayloadTest {
  private static final String LARGE = "1709380533560664458.data";

  static Stream<Path> payloads() throws IOException {
    String dir = System.getProperty("prw.testdata", "../../shared/testdata");
    Path path = Path.of(dir);
    if (!Files.isDirectory(path)) {
      return Stream.of(Path.of("(absent) " + dir));
    }
    try (Stream<Path> files = Files.list(path)) {
      List<Path> list =
          files.filter(p -> p.toString().endsWith(".data")).sorted().collect(Collectors.toList());
      return list.isEmpty() ? Stream.of(Path.of("(empty) " + dir)) : list.stream();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("payloads")
  void routesRealPayloadByInstanceExactlyLikeTheOracle(Path file) throws Exception {
    assumeTrue(Files.isRegularFile(file), "test payloads not present: " + file);
    byte[] bytes = Files.readAllBytes(file);
    WriteRequest request = WriteRequest.parseFrom(bytes);
    assertFalse(request.getTimeseriesList().isEmpty());
    TenantRules rules =
        TenantRules.builder().labels("instance").missing(TenantRules.MissingPolicy.DROP).build();
    TenantRouter router = new TenantRouter(rules);
    ByteBuf in = Unpooled.wrappedBuffer(bytes);
    try {
      RouteResult result = router.route(in, PooledByteBufAllocator.DEFAULT);
      RouteAssertions.assertRoutedLikeOracle(request, rules, result);
      int routed = 0;
      for (TenantBatch b : result.batches()) {
        routed += b.series();
      }
      assertEquals(request.getTimeseriesCount(), routed + result.droppedTotal());
      if (file.getFileName().toString().equals(LARGE)) {
        assertEquals(14, result.batches().size(), "tenants in " + LARGE);
        assertEquals(10_000, routed);
      }
      result.clear();
    } finally {
      in.release();
    }
  }
}
