package io.prwrelay.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.Future;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.TenantSender;
import io.prwrelay.server.lane.Fragment;
import io.prwrelay.server.lane.FragmentOutcome;
import io.prwrelay.server.lane.LaneObserver;
import io.prwrelay.server.lane.LaneSettings;
import io.prwrelay.server.lane.Lanes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The lanes' own work for one sender request, in sync mode on one event loop: {@code tenants}
 * fragments of {@code fragmentBytes} uncompressed bytes each are submitted, each tenant's lane
 * sends its fragment (compressed in the lane when small, as the relay does) to a downstream that
 * answers 200 at once, and every fragment is answered delivered. The event loop is an {@link
 * EmbeddedChannel}'s, run by the benchmark thread, so each operation is the same sequence of
 * decisions. {@code fragmentsOnly} makes and releases the same fragments without lanes: what {@code
 * submitAndDeliver} adds to it is the lanes' cost, and its {@code gc.alloc.rate.norm} the lanes'
 * allocation per request.
 */
public class LaneBenchmark extends RelayBenchmark {
  @Param({"1", "100"})
  public int tenants;

  @Param({"512"})
  public int fragmentBytes;

  private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
  private final SeriesCounts counts = new SeriesCounts(1, 1, 0, 0);
  private final AttemptOutcome ok = new AttemptOutcome(200, "", -1);
  private EmbeddedChannel channel;
  private Lanes lanes;
  private String[] tenantIds;
  private byte[] bytes;
  private long delivered;
  private final Fragment.Listener listener = this::done;

  @Setup(Level.Trial)
  public void setUp() {
    channel = new EmbeddedChannel();
    TenantSender downstream =
        new TenantSender() {
          @Override
          public Future<AttemptOutcome> send(
              EventLoop loop, String tenant, ByteBuf body, long timeoutNanos) {
            return loop.newSucceededFuture(ok);
          }
        };
    LaneSettings settings =
        new LaneSettings(
            4,
            64 << 20,
            4 << 20,
            Duration.ofMillis(5),
            Duration.ofMinutes(5),
            100_000,
            Duration.ofMillis(100),
            Duration.ofSeconds(5),
            Duration.ofSeconds(5),
            16 << 20);
    lanes =
        new Lanes(
            List.of(channel.eventLoop()), settings, downstream, alloc, LaneObserver.NONE, null);
    tenantIds = new String[tenants];
    for (int i = 0; i < tenants; i++) {
      tenantIds[i] = "tenant-" + i;
    }
    bytes = new byte[fragmentBytes];
    for (int i = 0; i < bytes.length; i++) {
      bytes[i] = (byte) ('a' + i % 26);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    lanes.close();
    channel.finishAndReleaseAll();
  }

  private void done(Fragment f, FragmentOutcome o) {
    if (o.accepted()) {
      delivered++;
    }
  }

  private List<Fragment> fragments() {
    long deadline = channel.eventLoop().ticker().nanoTime() + 10_000_000_000L;
    List<Fragment> fragments = new ArrayList<>(tenants);
    for (String tenant : tenantIds) {
      ByteBuf body = alloc.heapBuffer(bytes.length).writeBytes(bytes);
      fragments.add(new Fragment(tenant, body, counts, deadline, listener));
    }
    return fragments;
  }

  @Benchmark
  public long submitAndDeliver() {
    lanes.submit(fragments());
    do {
      channel.runPendingTasks();
    } while (channel.hasPendingTasks());
    return delivered;
  }

  @Benchmark
  public int fragmentsOnly() {
    List<Fragment> fragments = fragments();
    int n = 0;
    for (Fragment f : fragments) {
      n += f.size();
      f.body().release();
    }
    return n;
  }
}
