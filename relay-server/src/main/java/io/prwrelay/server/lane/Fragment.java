package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.protocol.Protocol;

/**
 * One tenant's share of one sender request, on its way through that tenant's {@link Lane}.
 *
 * <p>Owns {@link #body()}, an uncompressed request of {@link #protocol()} (a PRW 1.0 {@code
 * WriteRequest}, or a PRW 2.0 {@code Request} with its own symbols table) holding only this
 * tenant's series, until {@link Lanes} compresses it into one snappy block on the thread that built
 * it; owns that block until the fragment's outcome is known. A fragment made {@link #ofBlock} holds
 * the sender's own snappy body from the start and is never compressed. The lane releases it then,
 * exactly once, before telling the {@link Listener}. Fragments of the same tenant may travel
 * downstream together in one coalesced request, but each fragment's outcome is reported to its own
 * listener.
 */
public final class Fragment implements BatchResult {
  /** Told the outcome of a fragment, once, on the lane's event loop. */
  public interface Listener {
    void done(Fragment fragment, FragmentOutcome outcome);

    /**
     * Who sent the request the fragment is part of ({@link NewLaneBudget}), or {@code null} for no
     * one to charge.
     */
    default Object sender() {
      return null;
    }
  }

  private final String tenant;
  private ByteBuf body;
  private ByteBuf compressed;
  private Protocol protocol;
  private int size;
  // The counts as fields, not a SeriesCounts: a fragment per tenant batch is the one object the
  // batch needs (the allocation profile showed the batch, its counts, the fragment and its
  // request's result as four objects per tenant batch). Ints: each counted item takes at least a
  // byte of the batch, whose size is an int.
  private final int series;
  private final int samples;
  private final int exemplars;
  private final int histograms;
  private long deadlineNanos;
  private Listener listener;
  private FragmentOutcome outcome;

  /** Downstream attempts that carried the fragment ({@link #attempted}). */
  private int attempts;

  /**
   * How often the sender had sent this request before, from its {@code Retry-Attempt} header (0
   * when it sent none): a downstream that scales its {@code Retry-After} by the attempt (Mimir)
   * hears of the sender's retries as well as the relay's ({@link #retryAttempt}).
   */
  private int senderRetries;

  /** Ticker time the fragment began to wait in its lane ({@link #queuedAt}). */
  private long queuedNanos;

  /**
   * Index of the lanes' event loop that routed the fragment and handed it to its lane on another
   * loop, or -1 ({@link #handedFrom}).
   */
  private int origin = -1;

  /**
   * What the downstream judges the batch by when HA deduplication is on ({@link
   * io.prwrelay.core.remotewrite.HaLabels}): read from its first series before it is compressed
   * ({@link HaKeys}), again when it is converted to PRW 1.0. Fragments travel in one request only
   * when their keys are judged alike.
   */
  private long haKey = io.prwrelay.core.remotewrite.HaLabels.NONE;

  /** Whether {@link #haKey} was read ({@link #judgedBy}). */
  private boolean haKeyRead;

  /**
   * The piece of a rejected merged request this fragment is sent again in ({@link Bisection}), or
   * {@code null}: a lane sends the fragments of one piece together and never with others.
   */
  private Bisection.Piece piece;

  /**
   * A PRW 1.0 fragment.
   *
   * @param body takes ownership
   * @param deadlineNanos ticker time by which the outcome must be known
   */
  public Fragment(
      String tenant, ByteBuf body, SeriesCounts counts, long deadlineNanos, Listener listener) {
    this(tenant, Protocol.V1, body, counts, deadlineNanos, listener);
  }

  /**
   * @param protocol the message {@code body} holds
   * @param body takes ownership
   * @param deadlineNanos ticker time by which the outcome must be known
   */
  public Fragment(
      String tenant,
      Protocol protocol,
      ByteBuf body,
      SeriesCounts counts,
      long deadlineNanos,
      Listener listener) {
    this(tenant, protocol, body, null, body.readableBytes(), counts, deadlineNanos, listener);
  }

  private Fragment(
      String tenant,
      Protocol protocol,
      ByteBuf body,
      ByteBuf compressed,
      int size,
      SeriesCounts counts,
      long deadlineNanos,
      Listener listener) {
    this(
        tenant,
        protocol,
        body,
        compressed,
        size,
        counts.series(),
        counts.samples(),
        counts.exemplars(),
        counts.histograms());
    this.deadlineNanos = deadlineNanos;
    this.listener = listener;
  }

  private Fragment(
      String tenant,
      Protocol protocol,
      ByteBuf body,
      ByteBuf compressed,
      int size,
      int series,
      long samples,
      long exemplars,
      long histograms) {
    this.tenant = tenant;
    this.protocol = protocol;
    this.body = body;
    this.compressed = compressed;
    this.size = size;
    this.series = series;
    this.samples = Math.toIntExact(samples);
    this.exemplars = Math.toIntExact(exemplars);
    this.histograms = Math.toIntExact(histograms);
  }

  /**
   * A tenant batch of a request being routed, not yet {@link #bind bound} to its request: what
   * {@link #body()} holds and what it counts.
   *
   * @param protocol the message {@code body} holds
   * @param body takes ownership; uncompressed
   */
  public static Fragment unbound(
      String tenant,
      Protocol protocol,
      ByteBuf body,
      int series,
      long samples,
      long exemplars,
      long histograms) {
    return new Fragment(
        tenant, protocol, body, null, body.readableBytes(), series, samples, exemplars, histograms);
  }

  /** {@link #unbound} with the counts as one value. */
  public static Fragment unbound(String tenant, Protocol protocol, ByteBuf body, SeriesCounts c) {
    return unbound(tenant, protocol, body, c.series(), c.samples(), c.exemplars(), c.histograms());
  }

  /**
   * Binds a fragment made {@link #unbound} to its request, once, before it is handed to {@link
   * Lanes} or {@link SenderRequest#settled settled}.
   *
   * @param deadlineNanos ticker time by which the outcome must be known
   */
  public void bind(long deadlineNanos, Listener listener) {
    bind(deadlineNanos, listener, 0);
  }

  /**
   * {@link #bind(long, Listener)} for a request the sender had sent {@code senderRetries} times
   * before (its {@code Retry-Attempt} header).
   */
  public void bind(long deadlineNanos, Listener listener, int senderRetries) {
    this.deadlineNanos = deadlineNanos;
    this.listener = listener;
    this.senderRetries = senderRetries;
  }

  /**
   * The {@code Retry-Attempt} of a send of {@code batch} whose fragments' {@link #attempts} already
   * count it: for each fragment, the sender's retries plus the relay's own ({@code attempts - 1}),
   * the most of them; 0 for a batch no one has sent before.
   */
  static int retryAttempt(java.util.List<Fragment> batch) {
    int most = 0;
    for (int i = 0; i < batch.size(); i++) {
      Fragment f = batch.get(i);
      most = Math.max(most, f.senderRetries + Math.max(0, f.attempts - 1));
    }
    return most;
  }

  /** Downstream attempts that carried the fragment so far. */
  int attempts() {
    return attempts;
  }

  /** A downstream attempt carrying the fragment goes out ({@link Outgoing}). */
  void attempted() {
    attempts++;
  }

  /** Ticker time the fragment began to wait in its lane. */
  long queuedNanos() {
    return queuedNanos;
  }

  /** The fragment begins to wait in its lane at {@code now} (again, after a failure elsewhere). */
  void queuedAt(long now) {
    queuedNanos = now;
  }

  /**
   * Index of the lanes' event loop that routed the fragment to its lane on another loop, or -1 when
   * it came from no other loop.
   */
  int origin() {
    return origin;
  }

  /**
   * The fragment is handed to its lane from loop {@code origin} ({@link Delegations}); -1 for no
   * other loop, so that its lane announces nothing for it.
   */
  void handedFrom(int origin) {
    this.origin = origin;
  }

  /** The key the downstream judges the batch by ({@link HaKeys}); {@code NONE} until read. */
  long haKey() {
    return haKey;
  }

  /** True once {@link #judgedBy} recorded the key. */
  boolean haKeyRead() {
    return haKeyRead;
  }

  /** Records the key read from the batch's first series (or {@code UNKNOWN}: it travels alone). */
  void judgedBy(long key) {
    haKey = key;
    haKeyRead = true;
  }

  /** The piece of a rejected merged request the fragment is sent again in, or {@code null}. */
  Bisection.Piece piece() {
    return piece;
  }

  /** The fragment goes again in {@code piece} of a rejected merged request ({@link Bisection}). */
  void inPiece(Bisection.Piece piece) {
    this.piece = piece;
  }

  /** The sender of this fragment's request ({@link Listener#sender()}), or {@code null}. */
  Object sender() {
    Listener l = listener;
    return l == null ? null : l.sender();
  }

  /**
   * Replaces the uncompressed body by {@code block}, the sender's own snappy body it decompressed
   * from ({@link #ofBlock}): lanes send, join and queue it like a block they compressed.
   *
   * @param block takes ownership; a valid snappy block that decompresses to {@link #body()}
   */
  public void forwardAs(ByteBuf block) {
    if (body != null) {
      body.release();
      body = null;
    }
    compressed = block;
  }

  /**
   * Releases what the fragment holds without telling anyone: for the owner of a fragment that was
   * never handed to a lane (a request refused, or failing, before delivery).
   */
  public void discard() {
    if (body != null) {
      body.release();
      body = null;
    }
    if (compressed != null) {
      compressed.release();
      compressed = null;
    }
  }

  /**
   * A batch that is one snappy block already: a sender's request body forwarded as it came, because
   * the request was its own batch. Lanes send, join and queue it like a block they compressed.
   *
   * @param protocol the message the block decompresses to
   * @param block takes ownership; a valid snappy block (it was decompressed once, in full)
   * @param size the bytes the block decompresses to
   * @param deadlineNanos ticker time by which the outcome must be known
   */
  public static Fragment ofBlock(
      String tenant,
      Protocol protocol,
      ByteBuf block,
      int size,
      SeriesCounts counts,
      long deadlineNanos,
      Listener listener) {
    return new Fragment(tenant, protocol, null, block, size, counts, deadlineNanos, listener);
  }

  public String tenant() {
    return tenant;
  }

  /** The uncompressed batch, or {@code null} once compressed or once the outcome is known. */
  public ByteBuf body() {
    return body;
  }

  /** The message {@link #body()} (or {@link #compressed()}) holds. */
  public Protocol protocol() {
    return protocol;
  }

  /**
   * Replaces a PRW 2.0 batch, uncompressed or compressed, by its PRW 1.0 conversion (the old bytes
   * are released).
   *
   * @param v1 takes ownership; uncompressed
   */
  void convertedToV1(ByteBuf v1) {
    if (body != null) {
      body.release();
    }
    if (compressed != null) {
      compressed.release();
      compressed = null;
    }
    body = v1;
    size = v1.readableBytes();
    protocol = Protocol.V1;
  }

  /** The batch as one snappy block once {@link #compress} ran, else {@code null}. */
  ByteBuf compressed() {
    return compressed;
  }

  /**
   * Replaces the uncompressed body by one snappy block of it. Lanes send and queue fragments in
   * that form and join several by {@link SnappyCodec#concat}, so each batch is compressed once, on
   * the thread whose cache still holds its bytes. On failure the body is kept.
   */
  void compress(ByteBufAllocator alloc) {
    if (body == null) {
      return;
    }
    ByteBuf block = SnappyCodec.encode(body, alloc);
    body.release();
    body = null;
    compressed = block;
  }

  /** Uncompressed bytes of the batch. */
  public int size() {
    return size;
  }

  /** Series of the batch. */
  public int series() {
    return series;
  }

  /** Samples of the batch, counted from tags. */
  public long samples() {
    return samples;
  }

  /** Exemplars of the batch, counted from tags. */
  public long exemplars() {
    return exemplars;
  }

  /** Native histogram samples of the batch, counted from tags. */
  public long histograms() {
    return histograms;
  }

  /** The counts as one value, made per call: the hot paths read the fields. */
  public SeriesCounts counts() {
    return new SeriesCounts(series, samples, exemplars, histograms);
  }

  /** How the fragment ended, once its listener was told; {@code null} before. */
  public FragmentOutcome outcome() {
    return outcome;
  }

  public long deadlineNanos() {
    return deadlineNanos;
  }

  /** The sender request the fragment is part of, or {@code null} when its listener is another. */
  SenderRequest request() {
    return listener instanceof SenderRequest r ? r : null;
  }

  /** Releases the body and tells the listener; called once by the lane. */
  void complete(FragmentOutcome outcome) {
    discard();
    this.outcome = outcome;
    listener.done(this, outcome);
  }
}
