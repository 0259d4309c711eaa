package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.remotewrite.HaLabels;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import org.junit.jupiter.api.Test;

/**
 * The HA key of a snappy block (a queued record) is the key of the request it decompresses to, read
 * from its start: 4 KiB, or 64 KiB for a long first series; beyond that, or for a damaged block,
 * unknown (joined with nothing).
 */
class HaKeysTest {
  private static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private final HaLabels ha = HaLabels.defaults();

  private static byte[] request(String replica, int padding, int series) {
    WriteRequest.Builder w = WriteRequest.newBuilder();
    for (int i = 0; i < series; i++) {
      w.addTimeseries(
          TimeSeries.newBuilder()
              .addLabels(Label.newBuilder().setName("__name__").setValue("up"))
              .addLabels(Label.newBuilder().setName("__replica__").setValue(replica))
              .addLabels(Label.newBuilder().setName("cluster").setValue("prod"))
              .addLabels(Label.newBuilder().setName("pad").setValue("x".repeat(padding) + i))
              .addSamples(Sample.newBuilder().setValue(1).setTimestamp(1000)));
    }
    return w.build().toByteArray();
  }

  private long ofBlock(byte[] plain) {
    ByteBuf block = SnappyCodec.encode(Unpooled.wrappedBuffer(plain), ALLOC);
    try {
      return HaKeys.ofBlock(block, ha, ALLOC);
    } finally {
      block.release();
    }
  }

  private long keyOf(byte[] plain) {
    return ha.keyOf(Unpooled.wrappedBuffer(plain));
  }

  @Test
  void aBlocksKeyIsItsRequestsWhateverItsSize() {
    for (int padding : new int[] {0, 100, 5_000, 40_000}) {
      for (int series : new int[] {1, 3, 200}) {
        byte[] r1 = request("r1", padding, series);
        assertEquals(keyOf(r1), ofBlock(r1), padding + " x " + series);
        assertNotEquals(ofBlock(r1), ofBlock(request("r2", padding, series)));
      }
    }
  }

  @Test
  void aFirstSeriesLongerThanTheLargestPrefixLeavesTheKeyUnknown() {
    assertEquals(HaLabels.UNKNOWN, ofBlock(request("r1", 70_000, 2)));
    assertEquals(HaLabels.UNKNOWN, ofBlock(request("r1", 70_000, 1)));
    byte[] justFits = request("r1", 60_000, 1);
    assertEquals(keyOf(justFits), ofBlock(justFits), "a whole block of less than 64 KiB");
  }

  @Test
  void aDamagedBlockHasNoKey() {
    ByteBuf block = Unpooled.wrappedBuffer(new byte[] {(byte) 0x90, 0x4e, 0x03, 0x01});
    assertEquals(HaLabels.UNKNOWN, HaKeys.ofBlock(block, ha, ALLOC));
  }
}
