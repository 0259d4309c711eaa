/**
 * The choice of Netty transport (epoll on Linux when its native library loads, NIO otherwise), made
 * in one place, {@link io.prwrelay.server.transport.Transport}, for the relay, the load generator
 * and the test peers alike.
 */
package io.prwrelay.server.transport;
