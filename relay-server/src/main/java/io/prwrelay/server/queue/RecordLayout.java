package io.prwrelay.server.queue;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The on-disk layout of segments, records and head files, as constants and static functions. All
 * integers are big-endian.
 *
 * <p>A segment file {@code <16-digit id>.seg} starts with an 8-byte header and then holds records
 * back to back:
 *
 * <pre>
 * segment header
 *   0         4         8
 *   +---------+---------+
 *   |  magic  | version |   magic = "PRWQ" (0x50525751), version = 2 (1 is read too)
 *   +---------+---------+   3..15: a newer format (the relay refuses to start); any other
 *                           version is a damaged byte (the header is repaired on replay and
 *                           the records kept as far as their CRCs hold)
 *
 * record
 *   0         4         8                   16        20
 *   +---------+---------+-------------------+---------+-------------------+
 *   | length  | crc32c  |   append millis   | series  |  payload ...      |
 *   |  (u32)  |  (u32)  |       (i64)       |  (i32)  |  (length - 12)    |
 *   +---------+---------+-------------------+---------+-------------------+
 *   length = the bytes after the crc32c field (12 + payload length);
 *   crc32c = CRC-32C over those same bytes;
 *   series = the series count in bits 0-30; bit 31 set when the payload is Remote Write 2.0
 *            (version 2 only: a version 1 segment holds Remote Write 1.0 records only).
 *
 * head file "head"
 *   0                   8                   16        20
 *   +-------------------+-------------------+---------+
 *   |    segment id     |      offset       | crc32c  |   crc32c over the first 16 bytes
 *   +-------------------+-------------------+---------+
 * </pre>
 *
 * <p>The payload is opaque to the queue (a snappy-compressed Remote Write batch, of the protocol
 * the series field's top bit names). A record is valid when its length is at least 12, the whole
 * record lies inside the file, and its CRC matches; the first record that is not marks the end of
 * the segment's valid data.
 */
final class RecordLayout {
  /** "PRWQ": the first four bytes of every segment file. */
  static final int SEGMENT_MAGIC = 0x50525751;

  /**
   * Segment format version written by this code; a higher one stops {@code open}. Version 2 added
   * the Remote Write 2.0 bit of the series field; version 1 segments are read as all 1.0.
   */
  static final int SEGMENT_VERSION = 2;

  /** Oldest segment format version still read. */
  static final int OLDEST_SEGMENT_VERSION = 1;

  /**
   * Highest version taken for a newer format rather than for damage. Versions grow by one with each
   * format change (two so far), so a version up to 13 past this code's is one a newer relay may
   * have written: refusing to start on it keeps that relay's records for it. A version of 0, a
   * negative one, or one past this bound (a damaged byte in the upper three bytes of the field, or
   * a flipped high bit of the last) is no format any relay wrote: the header is damaged, and replay
   * repairs it and keeps the records that pass their CRC.
   */
  static final int NEWEST_PLAUSIBLE_SEGMENT_VERSION = 15;

  /** Bit of the series field set when the record's payload is Remote Write 2.0. */
  static final int REMOTE_WRITE_2_BIT = 0x80000000;

  /** Bytes before the first record of a segment. */
  static final int SEGMENT_HEADER_BYTES = 8;

  static final int LENGTH_OFFSET = 0;
  static final int CRC_OFFSET = 4;
  static final int MILLIS_OFFSET = 8;
  static final int SERIES_OFFSET = 16;

  /** Bytes before the payload of a record. */
  static final int RECORD_HEADER_BYTES = 20;

  /** Bytes of a record that its CRC covers, besides the payload (append millis and series). */
  static final int CHECKED_HEADER_BYTES = RECORD_HEADER_BYTES - MILLIS_OFFSET;

  /** Largest payload a record can carry (the whole record must fit an {@code int}). */
  static final int MAX_PAYLOAD_BYTES = Integer.MAX_VALUE - RECORD_HEADER_BYTES;

  /** Size of a head file. */
  static final int HEAD_FILE_BYTES = 20;

  static final String SEGMENT_SUFFIX = ".seg";
  static final String HEAD_FILE = "head";
  static final String TENANT_FILE = "tenant";
  static final String LOCK_FILE = "lock";
  static final String TEMP_SUFFIX = ".tmp";

  private RecordLayout() {}

  /** The series field of a record of {@code series} series (not negative). */
  static int seriesField(int series, boolean remoteWrite2) {
    return remoteWrite2 ? series | REMOTE_WRITE_2_BIT : series;
  }

  /** The series count in a series field. */
  static int seriesOf(int seriesField) {
    return seriesField & ~REMOTE_WRITE_2_BIT;
  }

  /** Whether a series field marks a Remote Write 2.0 payload. */
  static boolean isRemoteWrite2(int seriesField) {
    return (seriesField & REMOTE_WRITE_2_BIT) != 0;
  }

  /** On-disk bytes of a record carrying {@code payloadBytes}. */
  static int recordBytes(int payloadBytes) {
    return RECORD_HEADER_BYTES + payloadBytes;
  }

  /** The length field of a record of {@code recordBytes}. */
  static int lengthField(int recordBytes) {
    return recordBytes - MILLIS_OFFSET;
  }

  /**
   * On-disk bytes of a record whose length field reads {@code length} (as a signed int), or -1 when
   * no record can have that length.
   */
  static long recordBytesOfLength(int length) {
    if (length < CHECKED_HEADER_BYTES || length > Integer.MAX_VALUE - MILLIS_OFFSET) {
      return -1;
    }
    return (long) length + MILLIS_OFFSET;
  }

  /** File name of segment {@code id}: 16 decimal digits and {@code .seg}. */
  static String segmentFileName(long id) {
    return String.format("%016d%s", id, SEGMENT_SUFFIX);
  }

  /** The segment id in {@code fileName}, or -1 when it is not a segment file name. */
  static long segmentId(String fileName) {
    if (fileName.length() != 16 + SEGMENT_SUFFIX.length() || !fileName.endsWith(SEGMENT_SUFFIX)) {
      return -1;
    }
    long id = 0;
    for (int i = 0; i < 16; i++) {
      char c = fileName.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      id = id * 10 + (c - '0');
    }
    return id;
  }

  /** What a segment header's version says of the segment. */
  enum VersionCheck {
    /** A version this code reads. */
    KNOWN,
    /** Written by a newer relay: the queue directory is not this relay's to read. */
    NEWER,
    /** No version any relay writes: the header is damaged. */
    DAMAGED
  }

  /** Classifies a segment header's version field. */
  static VersionCheck checkVersion(int version) {
    if (version >= OLDEST_SEGMENT_VERSION && version <= SEGMENT_VERSION) {
      return VersionCheck.KNOWN;
    }
    if (version > SEGMENT_VERSION && version <= NEWEST_PLAUSIBLE_SEGMENT_VERSION) {
      return VersionCheck.NEWER;
    }
    return VersionCheck.DAMAGED;
  }

  /** Writes a segment header into {@code out} at its position. */
  static void putSegmentHeader(ByteBuffer out) {
    out.putInt(SEGMENT_MAGIC).putInt(SEGMENT_VERSION);
  }

  /**
   * Fills {@code header} (cleared, then flipped for writing) with the record header of a payload.
   *
   * @param payload the payload bytes from position to limit; read through duplicates, not consumed
   */
  static void putRecordHeader(
      ByteBuffer header, CRC32C crc, long appendMillis, int seriesField, ByteBuffer[] payload) {
    int payloadBytes = 0;
    for (ByteBuffer b : payload) {
      payloadBytes += b.remaining();
    }
    header.clear();
    header.putInt(LENGTH_OFFSET, lengthField(recordBytes(payloadBytes)));
    header.putLong(MILLIS_OFFSET, appendMillis);
    header.putInt(SERIES_OFFSET, seriesField);
    crc.reset();
    crc.update(header.duplicate().position(MILLIS_OFFSET).limit(RECORD_HEADER_BYTES));
    for (ByteBuffer b : payload) {
      crc.update(b.duplicate());
    }
    header.putInt(CRC_OFFSET, (int) crc.getValue());
    header.position(0).limit(RECORD_HEADER_BYTES);
  }
}
