package io.prwrelay.server.transport;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

/**
 * The Netty transport of every relay process, its load generator and its test peers: epoll when the
 * native library loads (Linux), NIO otherwise. One place decides, so they always agree.
 */
public final class Transport {
  private static final boolean EPOLL = Epoll.isAvailable();

  private Transport() {}

  /** A new event loop group of {@code threads} loops on the chosen transport. */
  public static EventLoopGroup group(int threads) {
    return new MultiThreadIoEventLoopGroup(
        threads, EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
  }

  /** Client socket channel class matching {@link #group(int)}. */
  public static Class<? extends SocketChannel> socketChannel() {
    return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  /** Server socket channel class matching {@link #group(int)}. */
  public static Class<? extends ServerChannel> serverChannel() {
    return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  /**
   * A server bootstrap of {@code group} on the chosen transport, with the socket options of every
   * listener: a backlog of 1024 pending connections, and {@code TCP_NODELAY} on accepted ones.
   */
  public static ServerBootstrap serverBootstrap(EventLoopGroup group) {
    return new ServerBootstrap()
        .group(group)
        .channel(serverChannel())
        .option(ChannelOption.SO_BACKLOG, 1024)
        .childOption(ChannelOption.TCP_NODELAY, true);
  }

  /** {@code epoll} or {@code nio}. */
  public static String name() {
    return EPOLL ? "epoll" : "nio";
  }
}
