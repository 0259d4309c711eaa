package io.prwrelay.bench.load;

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

/** Netty transport choice, as the relay makes it: epoll when available, NIO otherwise. */
final class Transport {
  private static final boolean EPOLL = Epoll.isAvailable();

  private Transport() {}

  static EventLoopGroup group(int threads) {
    return new MultiThreadIoEventLoopGroup(
        threads, EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
  }

  static Class<? extends SocketChannel> socketChannel() {
    return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  static Class<? extends ServerChannel> serverChannel() {
    return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  static String name() {
    return EPOLL ? "epoll" : "nio";
  }
}
