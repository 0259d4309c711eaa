package io.prwrelay.server.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A record written through {@link RecordCodec} reads back whole; damage is named, not returned. */
class RecordCodecTest {
  private static final String TEXT = "a payload of some bytes";
  private static final int RECORD = RecordLayout.recordBytes(TEXT.length());
  private static final long AT = RecordLayout.SEGMENT_HEADER_BYTES;

  @TempDir Path dir;

  private final RecordCodec codec = new RecordCodec();

  /** A file holding one record at {@link #AT}, written through the codec. */
  private FileChannel fileWithOneRecord() throws Exception {
    FileChannel ch =
        FileChannel.open(
            dir.resolve("segment"),
            EnumSet.of(
                StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE));
    ByteBuf payload = QueueTesting.payload(TEXT);
    try {
      ch.position(AT);
      SegmentIo.FILES.write(
          ch, codec.sources(payload, RECORD, 1234L, RecordLayout.seriesField(7, true)));
    } finally {
      payload.release();
    }
    return ch;
  }

  private String readChecked(FileChannel ch, ByteBuf[] kept) throws Exception {
    ByteBuf record = PooledByteBufAllocator.DEFAULT.directBuffer(RECORD, RECORD);
    try {
      String problem = codec.readChecked(ch, AT, record);
      if (kept != null) {
        kept[0] = record.retain();
      }
      return problem;
    } finally {
      record.release();
    }
  }

  @Test
  void aRecordReadsBackWithItsHeaderFieldsAndPayload() throws Exception {
    try (FileChannel ch = fileWithOneRecord()) {
      ByteBuf[] kept = new ByteBuf[1];
      assertNull(readChecked(ch, kept));
      ByteBuf record = kept[0];
      try {
        assertEquals(1234L, record.getLong(RecordLayout.MILLIS_OFFSET));
        int seriesField = record.getInt(RecordLayout.SERIES_OFFSET);
        assertEquals(7, RecordLayout.seriesOf(seriesField));
        assertEquals(true, RecordLayout.isRemoteWrite2(seriesField));
        assertEquals(
            TEXT,
            record.toString(
                RecordLayout.RECORD_HEADER_BYTES, TEXT.length(), StandardCharsets.UTF_8));
      } finally {
        record.release();
      }
    }
  }

  @Test
  void aFlippedPayloadByteIsABadCrc() throws Exception {
    try (FileChannel ch = fileWithOneRecord()) {
      long at = AT + RecordLayout.RECORD_HEADER_BYTES + 3;
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, at);
      b.put(0, (byte) (b.get(0) ^ 1)).position(0);
      ch.write(b, at);
      assertEquals("bad CRC", readChecked(ch, null));
    }
  }

  @Test
  void aFileEndingInsideTheRecordIsNamedSo() throws Exception {
    try (FileChannel ch = fileWithOneRecord()) {
      ch.truncate(AT + RECORD - 1);
      assertEquals("segment ends inside a record", readChecked(ch, null));
    }
  }
}
