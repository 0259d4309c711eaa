/**
 * Decompressing request bodies: {@link io.prwrelay.core.codec.SnappyCodec} (the block format Remote
 * Write uses) and {@link io.prwrelay.core.codec.ZstdCodec}. Each checks a declared size against its
 * cap (a zstd frame without one grows up to the cap) and asks a {@link
 * io.prwrelay.core.codec.MemoryGrant} before it allocates the output, so a body's decompressed size
 * is bounded and charged to the caller's memory budget first; what fails is a {@link
 * io.prwrelay.core.codec.CodecException} (the sender's fault, or over the budget). {@link
 * io.prwrelay.core.codec.SnappyPrefix} decompresses only the start of a block.
 */
package io.prwrelay.core.codec;
