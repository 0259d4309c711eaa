package io.prwrelay.server.http;

/** Compression of a write request's body, from its {@code Content-Encoding}. */
enum BodyEncoding {
  SNAPPY,
  ZSTD
}
