package io.prwrelay.bench;

import com.github.luben.zstd.Zstd;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.codec.ZstdCodec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.xerial.snappy.Snappy;

/**
 * The floor: compression alone on the whole payload, as the relay calls it (body in a pooled direct
 * buffer, output in pooled buffers), plus a plain memory copy of the payload.
 */
public class CodecBenchmark extends RelayBenchmark {
  @Param({"file:../shared/testdata/1709380533560664458.data"})
  public String payload;

  @Param("instance")
  public String tenantLabel;

  /** The relay's allocator (see RelayServer). */
  private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;

  private byte[] plain;
  private ByteBuf plainDirect;
  private ByteBuf snappyBody;
  private ByteBuf zstdBody;
  private ZstdCodec zstd;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    plain = Payloads.load(payload, tenantLabel);
    plainDirect = alloc.directBuffer(plain.length).writeBytes(plain);
    byte[] s = Snappy.compress(plain);
    snappyBody = alloc.directBuffer(s.length).writeBytes(s);
    byte[] z = Zstd.compress(plain, 3);
    zstdBody = alloc.directBuffer(z.length).writeBytes(z);
    zstd = new ZstdCodec();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    plainDirect.release();
    snappyBody.release();
    zstdBody.release();
    zstd.close();
  }

  @Benchmark
  public int snappyDecode() throws Exception {
    return sizeAndRelease(SnappyCodec.decode(snappyBody, alloc, Integer.MAX_VALUE - 8));
  }

  @Benchmark
  public int snappyEncode() {
    ByteBuf out = SnappyCodec.encode(plainDirect, alloc);
    int n = out.readableBytes();
    out.release();
    return n;
  }

  @Benchmark
  public int zstdDecode() throws Exception {
    return sizeAndRelease(zstd.decode(zstdBody, alloc, Integer.MAX_VALUE - 8));
  }

  @Benchmark
  public int copy() {
    ByteBuf out = alloc.heapBuffer(plain.length);
    out.writeBytes(plain);
    int n = out.readableBytes();
    out.release();
    return n;
  }

  /**
   * The size of a codec's output, which is released: what a row returns so JMH keeps the work.
   *
   * @param out takes ownership
   */
  private static int sizeAndRelease(ByteBuf out) {
    int n = out.readableBytes();
    out.release();
    return n;
  }
}
