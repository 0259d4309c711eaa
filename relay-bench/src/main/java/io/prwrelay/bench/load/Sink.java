package io.prwrelay.bench.load;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.remotewrite.SeriesView;
import io.prwrelay.core.remotewrite.WriteRequestReader;
import io.prwrelay.core.remotewrite.WriteRequestVisitor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * The relay's downstream during a load test: a Netty HTTP server on 127.0.0.1 that accepts any
 * {@code POST}, decompresses its snappy body, counts its series with relay-core's {@link
 * WriteRequestReader}, adds them to the tenant named by the tenant header, and answers {@code 200}
 * as Cortex does. A body that is not valid snappy or not a valid {@code WriteRequest} is answered
 * {@code 400} and counted as a sink error.
 */
public final class Sink implements AutoCloseable {
  /** Tenant under which requests without the tenant header are counted. */
  public static final String NO_TENANT = "(no tenant header)";

  private static final int MAX_BODY = 256 << 20;
  private static final int MAX_DECOMPRESSED = 1 << 30;

  /** What one tenant received. */
  public record TenantCount(long requests, long series, long compressedBytes, long bytes) {}

  private static final class Counters {
    final LongAdder requests = new LongAdder();
    final LongAdder series = new LongAdder();
    final LongAdder compressedBytes = new LongAdder();
    final LongAdder bytes = new LongAdder();
  }

  /**
   * The reader needs a label to stop at; {@code __name__} sorts first in every series, so it reads
   * one label per series (the tenant comes from the header, not from the labels).
   */
  private static final List<String> STOP_LABEL = List.of("__name__");

  private final String tenantHeader;
  private final EventLoopGroup group;
  private final Channel serverChannel;
  private final Map<String, Counters> tenants = new ConcurrentHashMap<>();
  private final LongAdder errors = new LongAdder();
  private final AtomicReference<String> firstError = new AtomicReference<>();

  private Sink(int port, int threads, String tenantHeader) throws IOException {
    this.tenantHeader = tenantHeader;
    this.group = Transport.group(threads);
    ServerBootstrap b =
        new ServerBootstrap()
            .group(group)
            .channel(Transport.serverChannel())
            .option(ChannelOption.SO_BACKLOG, 1024)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    ch.pipeline()
                        .addLast(new HttpServerCodec())
                        .addLast(new HttpObjectAggregator(MAX_BODY))
                        .addLast(new Handler());
                  }
                });
    try {
      this.serverChannel = b.bind("127.0.0.1", port).syncUninterruptibly().channel();
    } catch (Exception e) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
      throw new IOException(
          "sink cannot listen on 127.0.0.1:" + port + ": " + e.getMessage() + " (use --sink-port)",
          e);
    }
  }

  /**
   * Starts a sink.
   *
   * @param port port on 127.0.0.1; 0 for any free port
   * @param threads event loop threads
   * @param tenantHeader header naming the tenant, as the relay sends it ({@code X-Scope-OrgID})
   * @throws IOException when the port cannot be bound
   */
  public static Sink start(int port, int threads, String tenantHeader) throws IOException {
    return new Sink(port, threads, tenantHeader);
  }

  /** The push URL to configure as the relay's {@code relay.downstream.url}. */
  public URI url() {
    return URI.create(
        "http://127.0.0.1:"
            + ((InetSocketAddress) serverChannel.localAddress()).getPort()
            + "/api/v1/push");
  }

  /** What each tenant received so far, by tenant ID. */
  public Map<String, TenantCount> counts() {
    Map<String, TenantCount> m = new TreeMap<>();
    tenants.forEach(
        (tenant, c) ->
            m.put(
                tenant,
                new TenantCount(
                    c.requests.sum(), c.series.sum(), c.compressedBytes.sum(), c.bytes.sum())));
    return m;
  }

  /** Series received so far over every tenant. */
  public long totalSeries() {
    long n = 0;
    for (Counters c : tenants.values()) {
      n += c.series.sum();
    }
    return n;
  }

  /** Requests the sink could not read (answered 400). */
  public long errors() {
    return errors.sum();
  }

  /** The first sink error's description, or {@code null}. */
  public String firstError() {
    return firstError.get();
  }

  @Override
  public void close() {
    serverChannel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
  }

  /** One per connection, so the (non-thread-safe) reader is used by one event loop only. */
  private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final WriteRequestReader reader = new WriteRequestReader(STOP_LABEL);
    private final SeriesCounter counter = new SeriesCounter();

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      boolean keepAlive = HttpUtil.isKeepAlive(request);
      if (!request.method().equals(HttpMethod.POST)) {
        answer(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "only POST", keepAlive);
        return;
      }
      String encoding = request.headers().get(HttpHeaderNames.CONTENT_ENCODING);
      if (!"snappy".equalsIgnoreCase(encoding)) {
        fail(
            ctx,
            HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE,
            "Content-Encoding " + encoding,
            keepAlive);
        return;
      }
      ByteBuf body = request.content();
      int compressed = body.readableBytes();
      ByteBuf raw;
      try {
        raw = SnappyCodec.decode(body, ctx.alloc(), MAX_DECOMPRESSED);
      } catch (CodecException e) {
        fail(ctx, HttpResponseStatus.BAD_REQUEST, e.getMessage(), keepAlive);
        return;
      }
      int length = raw.readableBytes();
      RequestError error;
      try {
        counter.series = 0;
        error = reader.read(raw.array(), raw.arrayOffset() + raw.readerIndex(), length, counter);
      } finally {
        raw.release();
      }
      if (error != null) {
        fail(ctx, HttpResponseStatus.BAD_REQUEST, error.message(), keepAlive);
        return;
      }
      String tenant = request.headers().get(tenantHeader);
      Counters c =
          tenants.computeIfAbsent(tenant == null ? NO_TENANT : tenant, t -> new Counters());
      c.requests.increment();
      c.series.add(counter.series);
      c.compressedBytes.add(compressed);
      c.bytes.add(length);
      answer(ctx, HttpResponseStatus.OK, null, keepAlive);
    }

    private void fail(
        ChannelHandlerContext ctx, HttpResponseStatus status, String problem, boolean keepAlive) {
      errors.increment();
      firstError.compareAndSet(null, status.code() + " " + problem);
      answer(ctx, status, problem, keepAlive);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  private static void answer(
      ChannelHandlerContext ctx, HttpResponseStatus status, String text, boolean keepAlive) {
    ByteBuf content =
        text == null ? Unpooled.EMPTY_BUFFER : Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
    FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
    response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
    if (text != null) {
      response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN);
    }
    if (keepAlive) {
      ctx.writeAndFlush(response);
    } else {
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
  }

  private static final class SeriesCounter implements WriteRequestVisitor {
    int series;

    @Override
    public boolean onSeries(SeriesView view) {
      series++;
      return true;
    }

    @Override
    public void onMetadata(int start, int end) {}
  }
}
