package io.prwrelay.server.isolation;

import io.prwrelay.server.isolation.IdRequests.Part;
import io.prwrelay.server.isolation.IdRequests.Request;
import io.prwrelay.server.isolation.SenderConnection.Answer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.stream.IntStream;

/**
 * Remote-write senders against two relays at the same time, each in front of its own downstream
 * with ten healthy tenants: the {@link Side#WITH_BAD} relay also gets traffic of a bad tenant, the
 * {@link Side#CONTROL} relay gets the same traffic without it. Both run the same configuration in
 * the same JVM, during the same seconds, so whatever else the machine does weighs on both alike,
 * and the control's answer times are "the same run without the bad tenant".
 *
 * <p>Each relay gets two kinds of senders, each sender on its own connection, sending at a fixed
 * pace, started spread over one period: <b>healthy</b> senders carry only the healthy tenants;
 * <b>mixing</b> senders carry the healthy tenants and, towards the bad relay, the bad tenant too. A
 * mixing sender that is not answered 2xx sends the same body again after {@link #RETRY_DELAY}
 * (Prometheus's first backoff), at most {@link #MAX_RETRIES} times, then moves on; the relay's
 * ledger must keep those retries from delivering a healthy tenant twice. Answers during the warm-up
 * are not measured.
 */
final class IsolationRun {
  static final List<String> HEALTHY = IntStream.range(0, 10).mapToObj(i -> "healthy-" + i).toList();
  static final String BAD = "bad";

  static final int HEALTHY_SENDERS = 4;
  static final int MIXING_SENDERS = 3;
  static final Duration PERIOD = Duration.ofMillis(40);
  static final int SERIES_PER_TENANT = 5;

  /**
   * How long answers are measured after the warm-up: about 500 answers to the healthy senders on
   * each side (four senders, one request a {@link #PERIOD}), whose p99 is the sixth slowest. A
   * relay that holds back healthy requests in more than one in a hundred moves it, however long the
   * window; a longer one only makes the p99 less noisy, which the rounds of {@link
   * BadTenants#runAndCheck} cover.
   */
  static final Duration MEASURED = Duration.ofSeconds(5);

  static final Duration RETRY_DELAY = Duration.ofMillis(30);
  static final int MAX_RETRIES = 2;

  /** Which relay a sender writes to. */
  enum Side {
    WITH_BAD,
    CONTROL
  }

  enum Kind {
    HEALTHY,
    MIXING
  }

  /**
   * One request of a sender and every answer to it, in order.
   *
   * @param measured whether its first attempt started after the warm-up
   */
  record Exchange(Side side, Kind kind, boolean measured, Request request, List<Answer> answers) {
    Answer first() {
      return answers.get(0);
    }
  }

  /** Everything the senders did. */
  record Result(List<Exchange> exchanges, List<String> failures) {
    /** Every exchange of {@code kind}'s senders towards {@code side}, warm-up included. */
    List<Exchange> every(Side side, Kind kind) {
      return exchanges.stream().filter(e -> e.side() == side && e.kind() == kind).toList();
    }

    /**
     * Calls {@code check} with every answer to {@code kind}'s senders from {@code side}, warm-up
     * included, and the exchange it belongs to.
     */
    void eachAnswer(Side side, Kind kind, BiConsumer<Exchange, Answer> check) {
      for (Exchange e : every(side, kind)) {
        for (Answer a : e.answers()) {
          check.accept(e, a);
        }
      }
    }

    /** The measured exchanges of {@code kind}'s senders towards {@code side}. */
    List<Exchange> of(Side side, Kind kind) {
      return exchanges.stream()
          .filter(e -> e.side() == side && e.kind() == kind && e.measured())
          .toList();
    }

    /**
     * Answer times of the first attempts of the measured requests of {@code kind} to {@code side}.
     */
    Latencies firstAnswers(Side side, Kind kind) {
      return new Latencies(of(side, kind).stream().map(e -> e.first().nanos()).toList());
    }

    /**
     * Ids of the series of {@code tenant} in every request sent to {@code side}, warm-up included.
     */
    Set<String> sentIds(Side side, String tenant) {
      Set<String> ids = new HashSet<>();
      for (Exchange e : exchanges) {
        if (e.side() == side) {
          ids.addAll(e.request().ids(tenant));
        }
      }
      return ids;
    }
  }

  private final InetSocketAddress withBad;
  private final InetSocketAddress control;
  private final Duration warmup;
  private final ConcurrentLinkedQueue<Exchange> exchanges = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
  private long startNanos;

  private final String round;

  /**
   * @param warmup how long the senders send before their answers are measured
   * @param round names this run's requests, unique among the runs against the same relays
   */
  IsolationRun(
      InetSocketAddress withBad, InetSocketAddress control, Duration warmup, String round) {
    this.withBad = withBad;
    this.control = control;
    this.warmup = warmup;
    this.round = round;
  }

  private boolean over(long nanos) {
    return nanos - startNanos >= warmup.plus(MEASURED).toNanos();
  }

  /** Runs every sender until the end of the measured time; returns when all have stopped. */
  Result run() throws InterruptedException {
    startNanos = System.nanoTime();
    List<Thread> threads = new ArrayList<>();
    int perSide = HEALTHY_SENDERS + MIXING_SENDERS;
    for (Side side : Side.values()) {
      for (int i = 0; i < perSide; i++) {
        Kind kind = i < HEALTHY_SENDERS ? Kind.HEALTHY : Kind.MIXING;
        String name =
            round + "-" + side.name().toLowerCase() + "-" + kind.name().toLowerCase() + "-" + i;
        // Senders start spread over one period, as independent senders are, not all at once.
        long offset = PERIOD.toNanos() * (2 * i + side.ordinal()) / (2 * perSide);
        Thread t = new Thread(() -> send(side, kind, name, startNanos + offset), name);
        t.setDaemon(true);
        threads.add(t);
        t.start();
      }
    }
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(30));
      if (t.isAlive()) {
        failures.add(t.getName() + " did not stop");
        t.interrupt();
      }
    }
    return new Result(List.copyOf(exchanges), List.copyOf(failures));
  }

  private void send(Side side, Kind kind, String name, long next) {
    IdRequests builder = new IdRequests(name.hashCode());
    InetSocketAddress relay = side == Side.WITH_BAD ? withBad : control;
    LockSupport.parkNanos(next - System.nanoTime());
    try (SenderConnection connection = new SenderConnection(relay, "/api/v1/write", 30_000)) {
      for (long seq = 0; ; seq++) {
        long now = System.nanoTime();
        if (over(now)) {
          return;
        }
        List<Part> parts = new ArrayList<>();
        for (String tenant : HEALTHY) {
          parts.add(new Part(tenant, SERIES_PER_TENANT));
        }
        if (kind == Kind.MIXING && side == Side.WITH_BAD) {
          parts.add(new Part(BAD, SERIES_PER_TENANT));
        }
        Request request = builder.build(name + "." + seq, parts);
        List<Answer> answers = new ArrayList<>();
        for (int attempt = 0; ; attempt++) {
          Answer a;
          try {
            a = connection.post(request.snappy());
          } catch (IOException e) {
            failures.add(name + " request " + request.id() + ": " + e);
            break;
          }
          answers.add(a);
          if (a.ok() || kind == Kind.HEALTHY || attempt == MAX_RETRIES || over(System.nanoTime())) {
            break;
          }
          LockSupport.parkNanos(RETRY_DELAY.toNanos());
        }
        if (!answers.isEmpty()) {
          boolean measured = now - startNanos >= warmup.toNanos();
          exchanges.add(new Exchange(side, kind, measured, request, answers));
        }
        next = Pace.next(next, PERIOD);
      }
    }
  }
}
