package io.prwrelay.server.write;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.server.config.ServerConfig;
import io.prwrelay.server.metrics.RelayMetrics;
import java.util.Locale;

/**
 * The first stage of a write request ({@link WriteProcessor}): decompresses its body into a pooled
 * heap buffer within the decompressed-size cap ({@code relay.server.max-decompressed-bytes}), the
 * ratio cap ({@code relay.server.max-decompression-ratio} times the compressed size) and the memory
 * budget: the request's reservation grows to the compressed plus the decompressed size before the
 * latter is allocated ({@link RequestGrant}). A body it cannot decompress is refused: 400 when it
 * is invalid or decompresses to more than a cap allows (the answer names the key), 503 when the
 * budget has no room for it now, 413 when it never could.
 */
final class Decompression {
  /** What decompressing a body gives: the request it holds, or a {@link Refusal}. */
  sealed interface Result permits Body, Refusal {}

  /**
   * @param content the decompressed request; its receiver owns it
   */
  record Body(ByteBuf content) implements Result {}

  private final int maxDecompressedBytes;
  private final int maxDecompressionRatio;
  private final RelayMetrics metrics;

  /**
   * @param maxDecompressedBytes largest decompressed request; larger is answered 400
   * @param maxDecompressionRatio largest decompressed size per compressed byte; more is answered
   *     400
   */
  Decompression(int maxDecompressedBytes, int maxDecompressionRatio, RelayMetrics metrics) {
    this.maxDecompressedBytes = maxDecompressedBytes;
    this.maxDecompressionRatio = maxDecompressionRatio;
    this.metrics = metrics;
  }

  /**
   * Decompresses one request body.
   *
   * @param res the loop's zstd context
   * @param body borrowed; the compressed request
   * @param grant the request's memory grant, holding the compressed body; asked for what the body
   *     decompresses to before that is allocated
   * @return the decompressed request, or the refusal (counted in {@code
   *     relay_inflight_rejected_total} when the budget refused)
   */
  Result decompress(
      LoopResources res,
      ByteBufAllocator alloc,
      ByteBuf body,
      RequestGrant grant,
      BodyEncoding encoding) {
    long compressed = body.readableBytes();
    int cap = (int) Math.min(maxDecompressedBytes, compressed * maxDecompressionRatio);
    try {
      ByteBuf decoded =
          encoding == BodyEncoding.SNAPPY
              ? SnappyCodec.decode(body, alloc, cap, grant)
              : res.zstd.decode(body, alloc, cap, grant);
      return new Body(decoded);
    } catch (CodecException e) {
      return new Refusal(refusal(e, encoding, compressed, cap, grant));
    }
  }

  private Answer refusal(
      CodecException e, BodyEncoding encoding, long compressed, int cap, RequestGrant grant) {
    String name = encoding.name().toLowerCase(Locale.ROOT);
    return switch (e.problem()) {
      case OVER_BUDGET -> {
        metrics.inflightRejected(grant.reason());
        yield grant.refusedAnswer();
      }
      case TOO_LARGE ->
          Answer.of(
              400,
              "cannot decompress the "
                  + name
                  + " body: "
                  + e.getMessage()
                  + " ("
                  + (cap < maxDecompressedBytes
                      ? ServerConfig.MAX_DECOMPRESSION_RATIO.setTo(maxDecompressionRatio)
                          + " times the "
                          + compressed
                          + "-byte body"
                      : ServerConfig.MAX_DECOMPRESSED_BYTES.setTo(maxDecompressedBytes))
                  + ")");
      case CORRUPT -> Answer.of(400, "cannot decompress the " + name + " body: " + e.getMessage());
    };
  }
}
