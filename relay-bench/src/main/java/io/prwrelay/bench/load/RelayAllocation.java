package io.prwrelay.bench.load;

import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.OptionalLong;
import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * The heap bytes a spawned relay's threads have allocated, from the JVM's own per-thread counters
 * ({@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}, summed over its live threads),
 * read over JMX. The relay needs no flag for this: the attach API starts the JDK's local management
 * agent in it (a JMX connector on loopback) after it is up, so the relay runs with exactly the
 * settings it was given.
 *
 * <p>A thread's count goes when the thread ends, so the difference of two readings leaves out what
 * threads that ended in between had allocated; the relay's event loops, downstream client and queue
 * threads live as long as the relay does. JDK 17 has no total over all threads that ever ran.
 */
final class RelayAllocation implements AutoCloseable {
  private final JMXConnector connector;
  private final com.sun.management.ThreadMXBean threads;

  private RelayAllocation(JMXConnector connector, com.sun.management.ThreadMXBean threads) {
    this.connector = connector;
    this.threads = threads;
  }

  /**
   * Attaches to the JVM {@code pid} (same user, same machine) and connects to its management agent.
   *
   * @throws IOException when the JVM cannot be attached to or does not answer over JMX
   */
  static RelayAllocation attach(long pid) throws IOException {
    String address;
    try {
      VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
      try {
        address = vm.startLocalManagementAgent();
      } finally {
        vm.detach();
      }
    } catch (com.sun.tools.attach.AttachNotSupportedException e) {
      throw new IOException("cannot attach to pid " + pid + ": " + e.getMessage(), e);
    }
    JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address));
    try {
      MBeanServerConnection server = connector.getMBeanServerConnection();
      return new RelayAllocation(
          connector,
          ManagementFactory.newPlatformMXBeanProxy(
              server, ManagementFactory.THREAD_MXBEAN_NAME, com.sun.management.ThreadMXBean.class));
    } catch (IOException | RuntimeException e) {
      connector.close();
      throw e;
    }
  }

  /** Bytes allocated so far by the relay's live threads; empty when the relay does not answer. */
  OptionalLong allocatedBytes() {
    try {
      return OptionalLong.of(sum(threads));
    } catch (RuntimeException e) {
      // The proxy wraps a lost connection (the relay exited) in an unchecked exception.
      return OptionalLong.empty();
    }
  }

  /**
   * Bytes allocated by the live threads of the JVM behind {@code threads}; threads that end while
   * being read, or whose count is not supported, add nothing.
   */
  static long sum(com.sun.management.ThreadMXBean threads) {
    long total = 0;
    for (long bytes : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
      total += Math.max(0, bytes);
    }
    return total;
  }

  @Override
  public void close() {
    try {
      connector.close();
    } catch (IOException e) {
      // The relay may have exited first; nothing is left to close.
    }
  }
}
