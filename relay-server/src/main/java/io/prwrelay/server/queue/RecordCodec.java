package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.RecordLayout.MILLIS_OFFSET;
import static io.prwrelay.server.queue.RecordLayout.RECORD_HEADER_BYTES;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.zip.CRC32C;

/**
 * Puts records into the layout of {@link RecordLayout} and checks them when they are read back,
 * with the scratch state both need: one record header buffer and one CRC-32C. One per store,
 * confined to its I/O thread (the header buffer is reused by every append).
 *
 * <p>Replay validates records through {@link SegmentScanner}, which reads whole segments through a
 * window of its own; this class checks one record at a time, as a lane reads them.
 */
final class RecordCodec {
  private final ByteBuffer header = ByteBuffer.allocateDirect(RECORD_HEADER_BYTES);
  private final CRC32C crc = new CRC32C();

  /**
   * The buffers that write one record, in order: its header (computed here, CRC included), then its
   * payload. Valid until the next call: the header buffer is this codec's.
   *
   * @param payload borrowed: its first {@code recordBytes - RECORD_HEADER_BYTES} readable bytes are
   *     exposed, not copied, and must stay unchanged until the buffers are written
   * @param seriesField the record's series field (count and protocol bit)
   */
  ByteBuffer[] sources(ByteBuf payload, int recordBytes, long millis, int seriesField) {
    ByteBuffer[] body =
        payload.nioBuffers(payload.readerIndex(), recordBytes - RECORD_HEADER_BYTES);
    ByteBuffer[] sources = new ByteBuffer[body.length + 1];
    System.arraycopy(body, 0, sources, 1, body.length);
    RecordLayout.putRecordHeader(header, crc, millis, seriesField, body);
    sources[0] = header;
    return sources;
  }

  /**
   * Reads the whole record at {@code offset} of {@code channel} into {@code record} and checks its
   * length field and CRC.
   *
   * @param record borrowed: an empty buffer whose capacity is the record's size (header included),
   *     filled here
   * @return {@code null} when the record is whole and intact, else what is wrong with it
   */
  String readChecked(FileChannel channel, long offset, ByteBuf record) throws IOException {
    int size = record.capacity();
    while (record.writableBytes() > 0) {
      if (record.writeBytes(channel, offset + record.writerIndex(), record.writableBytes()) < 0) {
        return "segment ends inside a record";
      }
    }
    crc.reset();
    crc.update(record.nioBuffer(MILLIS_OFFSET, size - MILLIS_OFFSET));
    if (record.getInt(RecordLayout.LENGTH_OFFSET) != RecordLayout.lengthField(size)
        || record.getInt(RecordLayout.CRC_OFFSET) != (int) crc.getValue()) {
      return "bad CRC";
    }
    return null;
  }
}
