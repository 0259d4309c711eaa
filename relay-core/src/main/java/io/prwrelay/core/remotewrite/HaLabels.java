package io.prwrelay.core.remotewrite;

import io.netty.buffer.ByteBuf;
import io.prwrelay.core.wire.LabelFields;
import io.prwrelay.core.wire.TimeSeriesFields;
import io.prwrelay.core.wire.WireTags;
import io.prwrelay.core.wire.WriteRequestFields;
import java.nio.charset.StandardCharsets;

/**
 * The labels by which Cortex and Mimir deduplicate a Prometheus HA pair, and the key a request is
 * judged by. With HA deduplication on, the downstream reads the cluster and replica label of a
 * push's <em>first</em> series only, and accepts or drops (202) the whole push on that: a push led
 * by the standby replica's series is dropped with everything else in it, one led by the elected
 * replica is accepted with everything else in it. A push led by a series without both labels is not
 * checked at all. So two batches may travel in one push only when their first series carry the same
 * values of both labels; that is what {@link #judgedAlike} says of their keys.
 *
 * <p>The key of a PRW 1.0 {@code WriteRequest} ({@link #keyOf}) is {@link #NONE} when its first
 * series lacks either label or has it empty (or it has no series), else a 64-bit hash of the two
 * values, each with its length: equal values give equal keys; two different pairs of values share a
 * key with a chance of 2<sup>-64</sup> (the hash is for telling replicas apart, not for
 * adversaries; a sender of the tenant can write under any replica's labels anyway). Reading a key
 * walks the labels of the first series only, once per batch. Bytes that are not a {@code
 * WriteRequest} have key {@link #NONE}: a downstream rejects them whole whatever they are joined
 * with. Immutable and thread-safe.
 */
public final class HaLabels {
  /** Cortex's and Mimir's default cluster label. */
  public static final String DEFAULT_CLUSTER = "cluster";

  /** Cortex's and Mimir's default replica label. */
  public static final String DEFAULT_REPLICA = "__replica__";

  /** The key of a request whose first series lacks either label (or which has no series). */
  public static final long NONE = 0;

  /**
   * The key cannot be told from the bytes at hand ({@link #keyOfPrefix}: they end before the first
   * series does): judged alike with nothing, not even itself.
   */
  public static final long UNKNOWN = 1;

  private static final long P1 = 0x9E3779B185EBCA87L;
  private static final long P2 = 0xC2B2AE3D27D4EB4FL;

  private final String clusterName;
  private final String replicaName;
  private final byte[] cluster;
  private final byte[] replica;

  /**
   * @param cluster the cluster label's name (Mimir's {@code ha_cluster_label})
   * @param replica the replica label's name (Mimir's {@code ha_replica_label})
   */
  public HaLabels(String cluster, String replica) {
    if (cluster.isEmpty() || replica.isEmpty() || cluster.equals(replica)) {
      throw new IllegalArgumentException(
          "the cluster and replica labels must be two different, non-empty names");
    }
    this.clusterName = cluster;
    this.replicaName = replica;
    this.cluster = cluster.getBytes(StandardCharsets.UTF_8);
    this.replica = replica.getBytes(StandardCharsets.UTF_8);
  }

  /** The defaults of Cortex and Mimir: {@code cluster} and {@code __replica__}. */
  public static HaLabels defaults() {
    return new HaLabels(DEFAULT_CLUSTER, DEFAULT_REPLICA);
  }

  public String cluster() {
    return clusterName;
  }

  public String replica() {
    return replicaName;
  }

  /** Whether {@code name} is one of the two labels. */
  public boolean isHaLabel(String name) {
    return clusterName.equals(name) || replicaName.equals(name);
  }

  /**
   * Whether a push made of batches with keys {@code a} and {@code b} is judged by the downstream as
   * each of them would be alone.
   */
  public static boolean judgedAlike(long a, long b) {
    return a == b && a != UNKNOWN;
  }

  /**
   * The key of a PRW 1.0 request: the values of the two labels in its first series.
   *
   * @param request borrowed; a whole {@code WriteRequest} between reader and writer index
   */
  public long keyOf(ByteBuf request) {
    return key(request, true);
  }

  /**
   * The key of a PRW 1.0 request of which only the first bytes are at hand, or {@link #UNKNOWN}
   * when they end before its first series does (or before anything but a first field that is not a
   * series).
   *
   * @param prefix borrowed; the start of a {@code WriteRequest} between reader and writer index
   */
  public long keyOfPrefix(ByteBuf prefix) {
    return key(prefix, false);
  }

  /**
   * Finds the first {@code timeseries} field and reads its labels; the last occurrence of a label
   * wins, as it does for Cortex and Mimir. Positions and values travel packed in one long ({@link
   * #varint}), so that reading a key allocates nothing.
   */
  private long key(ByteBuf in, boolean whole) {
    int end = in.writerIndex();
    int at = in.readerIndex();
    while (at < end) {
      long tag = varint(in, at, end);
      if (tag < 0) {
        return whole ? NONE : UNKNOWN;
      }
      at = position(tag);
      if (value(tag) == WriteRequestFields.TIMESERIES_TAG) {
        long length = varint(in, at, end);
        if (length < 0 || value(length) > end - position(length)) {
          return whole ? NONE : UNKNOWN;
        }
        at = position(length);
        return seriesKey(in, at, at + value(length));
      }
      at = skip(in, at, end, value(tag));
      if (at < 0) {
        return whole || at == BAD_WIRE_TYPE ? NONE : UNKNOWN;
      }
    }
    return whole ? NONE : UNKNOWN; // no series yet: a prefix may have one further on
  }

  /** The key of the {@code TimeSeries} message in {@code [from, to)}. */
  private long seriesKey(ByteBuf in, int from, int to) {
    int cOffset = -1;
    int cLength = 0;
    int rOffset = -1;
    int rLength = 0;
    int at = from;
    while (at < to) {
      long tag = varint(in, at, to);
      if (tag < 0) {
        return NONE;
      }
      at = position(tag);
      if (value(tag) != TimeSeriesFields.LABELS_TAG) {
        at = skip(in, at, to, value(tag));
        if (at < 0) {
          return NONE;
        }
        continue;
      }
      long length = varint(in, at, to);
      if (length < 0 || value(length) > to - position(length)) {
        return NONE;
      }
      at = position(length);
      int labelEnd = at + value(length);
      int nameOffset = -1;
      int nameLength = 0;
      int valueOffset = -1;
      int valueLength = 0;
      while (at < labelEnd) {
        long field = varint(in, at, labelEnd);
        if (field < 0) {
          return NONE;
        }
        at = position(field);
        int f = value(field);
        if (f != LabelFields.NAME_TAG && f != LabelFields.VALUE_TAG) {
          at = skip(in, at, labelEnd, f);
          if (at < 0) {
            return NONE;
          }
          continue;
        }
        long n = varint(in, at, labelEnd);
        if (n < 0 || value(n) > labelEnd - position(n)) {
          return NONE;
        }
        at = position(n);
        if (f == LabelFields.NAME_TAG) {
          nameOffset = at;
          nameLength = value(n);
        } else {
          valueOffset = at;
          valueLength = value(n);
        }
        at += value(n);
      }
      if (nameOffset >= 0 && equalsAt(in, nameOffset, nameLength, cluster)) {
        cOffset = valueOffset;
        cLength = valueLength;
      } else if (nameOffset >= 0 && equalsAt(in, nameOffset, nameLength, replica)) {
        rOffset = valueOffset;
        rLength = valueLength;
      }
    }
    boolean hasCluster = cOffset >= 0 && cLength > 0;
    boolean hasReplica = rOffset >= 0 && rLength > 0;
    if (!hasCluster || !hasReplica) {
      // Cortex and Mimir check a push against the HA tracker only when its first series carries
      // both labels; without either it is accepted whole, like one with neither.
      return NONE;
    }
    long h = P1;
    h = hashValue(h, in, cOffset, hasCluster ? cLength : -1);
    h = hashValue(h, in, rOffset, hasReplica ? rLength : -1);
    h = (h ^ (h >>> 33)) * 0xFF51AFD7ED558CCDL;
    h = (h ^ (h >>> 33)) * 0xC4CEB9FE1A85EC53L;
    h ^= h >>> 33;
    return h == NONE || h == UNKNOWN ? h + 2 : h;
  }

  /** Feeds one value ({@code length} -1 when absent) into the hash: its length, then its bytes. */
  private static long hashValue(long h, ByteBuf in, int offset, int length) {
    h = (h ^ length) * P2;
    for (int i = 0; i < length; i++) {
      h = (h ^ (in.getByte(offset + i) & 0xFF)) * P1;
      h ^= h >>> 29;
    }
    return h;
  }

  private static boolean equalsAt(ByteBuf in, int offset, int length, byte[] name) {
    if (length != name.length) {
      return false;
    }
    for (int i = 0; i < length; i++) {
      if (in.getByte(offset + i) != name[i]) {
        return false;
      }
    }
    return true;
  }

  /** {@link #skip}: the wire type is not one protobuf has. */
  private static final int BAD_WIRE_TYPE = -2;

  /**
   * Reads an unsigned varint at {@code at}: the value in the high 32 bits, the position after it in
   * the low 32; -1 when it is not whole before {@code end} or above {@link Integer#MAX_VALUE}
   * (which no tag or length of a request the relay takes is).
   */
  private static long varint(ByteBuf in, int at, int end) {
    long value = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (at >= end) {
        return -1;
      }
      int b = in.getByte(at++);
      value |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return value > Integer.MAX_VALUE ? -1 : value << 32 | at;
      }
    }
    return -1;
  }

  private static int value(long packed) {
    return (int) (packed >>> 32);
  }

  private static int position(long packed) {
    return (int) packed;
  }

  /**
   * The position after the value of a field with {@code tag} at {@code at}; -1 when the value is
   * not whole before {@code end}, {@link #BAD_WIRE_TYPE} when the wire type is unknown.
   */
  private static int skip(ByteBuf in, int at, int end, int tag) {
    long n;
    switch (WireTags.wireType(tag)) {
      case WireTags.VARINT -> {
        for (int k = 0; k < 10; k++) {
          if (at >= end) {
            return -1;
          }
          if ((in.getByte(at++) & 0x80) == 0) {
            return at;
          }
        }
        return BAD_WIRE_TYPE;
      }
      case WireTags.FIXED64 -> n = 8;
      case WireTags.LENGTH_DELIMITED -> {
        long length = varint(in, at, end);
        if (length < 0) {
          return -1;
        }
        at = position(length);
        n = value(length);
      }
      case WireTags.FIXED32 -> n = 4;
      default -> {
        return BAD_WIRE_TYPE;
      }
    }
    return n > end - at ? -1 : at + (int) n;
  }
}
