package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.FastThreadLocal;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.encode.V2ToV1Converter;
import io.prwrelay.core.remotewrite.HaLabels;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.queue.QueuedRecord;
import java.util.ArrayList;
import java.util.List;

/**
 * Downstream request bodies, from fragments held in memory or from records read from a tenant's
 * queue: functions of their arguments, shared by {@link Lane}, {@link QueueDrain} and {@link
 * Delegate}.
 *
 * <p>A concatenation of {@code WriteRequest}s is itself a {@code WriteRequest} holding all their
 * series, and joined snappy blocks decompress to the concatenation of their contents ({@link
 * SnappyCodec#concat}): PRW 1.0 batches are merged without being decompressed. A PRW 2.0 batch
 * (fragment or queued record) carries its own symbols table and always travels alone; when the
 * downstream takes only PRW 1.0 ({@link io.prwrelay.server.downstream.DownstreamProtocol}) it is
 * converted just before it is sent, and in {@code auto} mode a 415 to a PRW 2.0 request switches
 * the relay to 1.0 and the same batches are sent again, converted.
 */
final class RequestBody {
  private RequestBody() {}

  /**
   * The blocks {@link #of} joins, a list per thread cleared after each join: it lives only inside
   * the call, and a list per send showed in the allocation profile.
   */
  private static final FastThreadLocal<List<ByteBuf>> BLOCKS =
      new FastThreadLocal<>() {
        @Override
        protected List<ByteBuf> initialValue() {
          return new ArrayList<>();
        }
      };

  /**
   * The body of a send of {@code batch}: its one block, or the blocks of its fragments joined.
   * Fragments that arrived uncompressed (small ones, see {@link FragmentCompression#IN_LANE_BELOW})
   * are compressed here, each run of them next to each other as one block; each fragment keeps its
   * own block for a later send.
   *
   * @return a buffer the caller owns
   */
  static ByteBuf of(List<Fragment> batch, ByteBufAllocator alloc) {
    if (batch.size() == 1) {
      Fragment f = batch.get(0);
      f.compress(alloc);
      return f.compressed().retainedDuplicate();
    }
    List<ByteBuf> blocks = BLOCKS.get();
    ByteBuf[] made = null; // blocks compressed here, made when there is one
    int madeCount = 0;
    try {
      int j = 0;
      while (j < batch.size()) {
        Fragment f = batch.get(j);
        int end = j;
        long runBytes = 0;
        while (end < batch.size() && batch.get(end).body() != null) {
          runBytes += batch.get(end).size();
          end++;
        }
        if (end - j < 2) {
          f.compress(alloc); // a no-op for a fragment compressed before
          blocks.add(f.compressed());
          j++;
          continue;
        }
        ByteBuf block = compressTogether(batch, j, end, (int) runBytes, alloc);
        if (made == null) {
          made = new ByteBuf[batch.size()];
        }
        made[madeCount++] = block;
        blocks.add(block);
        j = end;
      }
      if (blocks.size() == 1 && madeCount == 1) {
        madeCount = 0; // handed to the caller
        return made[0];
      }
      return SnappyCodec.concat(blocks, alloc);
    } catch (CodecException e) {
      throw new IllegalStateException("cannot join the batch's snappy blocks", e);
    } finally {
      blocks.clear();
      for (int k = 0; k < madeCount; k++) {
        made[k].release();
      }
    }
  }

  /** One snappy block of the bodies of {@code batch[from, to)}, which are all uncompressed. */
  private static ByteBuf compressTogether(
      List<Fragment> batch, int from, int to, int bytes, ByteBufAllocator alloc) {
    ByteBuf joined = alloc.directBuffer(bytes, bytes);
    try {
      for (int k = from; k < to; k++) {
        ByteBuf body = batch.get(k).body();
        joined.writeBytes(body, body.readerIndex(), body.readableBytes());
      }
      return SnappyCodec.encode(joined, alloc);
    } finally {
      joined.release();
    }
  }

  /**
   * Makes the fragment a batch the downstream takes: replaces a PRW 2.0 fragment's bytes by their
   * PRW 1.0 conversion when PRW 2.0 batches go downstream as {@code v2As} = 1.0, and reads the
   * conversion's HA key ({@link HaLabels}).
   *
   * @param maxConvertedBytes largest conversion ({@link LaneSettings#maxConvertedBytes()})
   * @return {@code null} when the fragment may be sent; else the outcome to answer it with (400
   *     when it has no PRW 1.0 form, 503 or 500 when the relay failed), its bytes unchanged
   */
  static FragmentOutcome inDownstreamProtocol(
      Fragment f, Protocol v2As, ByteBufAllocator alloc, int maxConvertedBytes, HaLabels ha) {
    if (f.protocol() == Protocol.V1 || v2As == Protocol.V2) {
      return null;
    }
    V2ToV1Converter.Conversion c;
    try {
      c =
          f.body() != null
              ? V1Conversion.of(f.body(), alloc, maxConvertedBytes)
              : V1Conversion.ofBlock(
                  f.compressed(), alloc, f.size(), maxConvertedBytes); // our own block
    } catch (RuntimeException | Error | CodecException e) {
      // The converter releases what it allocated before anything escapes it; an Error (memory
      // running out) must still answer the fragment rather than leave its sender waiting.
      return FragmentOutcome.cannotConvert(e, f.attempts());
    }
    if (c.error() != null) {
      return FragmentOutcome.unconvertible(c.error().message(), f.attempts());
    }
    f.convertedToV1(c.content());
    f.judgedBy(ha.keyOf(f.body())); // from now on it may travel with others
    return null;
  }

  /**
   * The body of one downstream request made of the records at the head of a queue read.
   *
   * @param content owned by the caller; {@code null} when {@code unconvertible} is set
   * @param protocol what {@code content} holds
   * @param records how many records from the head of the read it carries (at least one)
   * @param unconvertible why the first record, a PRW 2.0 batch for a downstream that takes only
   *     1.0, has no PRW 1.0 form; else {@code null}
   */
  record OfRecords(ByteBuf content, Protocol protocol, int records, String unconvertible) {}

  /**
   * The body of the next request of a queue read: a PRW 2.0 record alone (converted when the
   * downstream takes PRW 2.0 batches as {@code v2As} = 1.0), or the PRW 1.0 records from the head
   * joined while their contents fit in {@code batchMaxBytes} and the downstream judges them as the
   * first ({@link HaLabels}; at least one). Records are acknowledged in order, so the run stops at
   * the first record judged otherwise.
   *
   * @param records borrows their payloads; not empty
   * @throws CodecException when the first record is not a snappy block the relay could have written
   *     (or declares more than {@code maxDecompressedBytes})
   */
  static OfRecords ofRecords(
      List<QueuedRecord> records,
      Protocol v2As,
      int batchMaxBytes,
      int maxDecompressedBytes,
      int maxConvertedBytes,
      HaLabels ha,
      ByteBufAllocator alloc)
      throws CodecException {
    QueuedRecord first = records.get(0);
    if (first.remoteWrite2()) {
      if (v2As == Protocol.V2) {
        return new OfRecords(first.payload().retainedDuplicate(), Protocol.V2, 1, null);
      }
      V2ToV1Converter.Conversion c =
          converted(first, maxDecompressedBytes, maxConvertedBytes, alloc);
      return c.error() != null
          ? new OfRecords(null, Protocol.V1, 1, c.error().message())
          : new OfRecords(c.content(), Protocol.V1, 1, null);
    }
    if (records.size() == 1 || records.get(1).remoteWrite2()) {
      return new OfRecords(first.payload().retainedDuplicate(), Protocol.V1, 1, null);
    }
    return joined(records, batchMaxBytes, maxDecompressedBytes, ha, alloc);
  }

  /**
   * A queued PRW 2.0 record converted to PRW 1.0, its content snappy-compressed and owned by the
   * caller; or the conversion's error (not valid, or larger than {@code maxConvertedBytes}) and no
   * content.
   */
  private static V2ToV1Converter.Conversion converted(
      QueuedRecord record, int maxDecompressedBytes, int maxConvertedBytes, ByteBufAllocator alloc)
      throws CodecException {
    V2ToV1Converter.Conversion c =
        V1Conversion.ofBlock(record.payload(), alloc, maxDecompressedBytes, maxConvertedBytes);
    if (c.error() != null) {
      return c;
    }
    try {
      ByteBuf compressed = SnappyCodec.encode(c.content(), alloc);
      return new V2ToV1Converter.Conversion(compressed, c.counts(), c.metadata(), null);
    } finally {
      c.content().release();
    }
  }

  /**
   * Joins the snappy blocks of PRW 1.0 records from the head while their contents fit in {@code
   * batchMaxBytes} and their HA keys are the first's (at least one), without decompressing them
   * (but for the start of each, to read its key: {@link HaKeys#ofBlock}).
   */
  private static OfRecords joined(
      List<QueuedRecord> records,
      int batchMaxBytes,
      int maxDecompressedBytes,
      HaLabels ha,
      ByteBufAllocator alloc)
      throws CodecException {
    List<ByteBuf> blocks = new ArrayList<>(records.size());
    long plain = 0;
    long key = HaLabels.UNKNOWN; // the first record's, read once a second one may join it
    for (QueuedRecord r : records) {
      if (r.remoteWrite2()) {
        break; // never merged with PRW 1.0 records
      }
      long size;
      try {
        size = SnappyCodec.declaredLength(r.payload());
      } catch (CodecException e) {
        if (!blocks.isEmpty()) {
          break; // the bad record comes first in the next read, alone
        }
        throw e;
      }
      if (!blocks.isEmpty() && (plain + size > batchMaxBytes || size > maxDecompressedBytes)) {
        break;
      }
      if (size > maxDecompressedBytes) {
        throw new CodecException(
            CodecException.Problem.TOO_LARGE,
            "record declares " + size + " decompressed bytes, more than the limit");
      }
      if (blocks.size() == 1) {
        key = HaKeys.ofBlock(blocks.get(0), ha, alloc);
      }
      if (!blocks.isEmpty() && !HaLabels.judgedAlike(key, HaKeys.ofBlock(r.payload(), ha, alloc))) {
        break; // judged otherwise downstream: it leads the next request
      }
      plain += size;
      blocks.add(r.payload());
    }
    return new OfRecords(SnappyCodec.concat(blocks, alloc), Protocol.V1, blocks.size(), null);
  }
}
