package io.prwrelay.server.write;

/**
 * Compression of a write request's body, from its {@code Content-Encoding}: read by the ingress,
 * undone by the pipeline ({@link Decompression}).
 */
public enum BodyEncoding {
  SNAPPY,
  ZSTD
}
