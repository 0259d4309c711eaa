package io.prwrelay.server.lane;

/**
 * Sync mode: the loops a lane told that its tenant is healthy, each of which then sends the
 * tenant's large fragments routed there itself ({@link Delegate}) instead of handing them to the
 * lane's loop. The lane's side of the protocol between loops drawn in the package documentation:
 * {@link #announce}, then the delegate's own end after a failure ({@link #ended}), or the lane's
 * {@link #withdrawAll}; the messages travel as {@link DelegationMessages}. Touched only on the
 * lane's loop.
 */
final class Delegations {
  /**
   * False when the JVM runs with {@code -Dprwrelay.bench.delegation=off}: no lane announces, so
   * every fragment goes to its lane's loop. Only for measuring what delegation buys (BENCHMARKS.md,
   * "Delegation between loops"); not a setting of the relay, and outside the {@code relay.*} keys
   * its configuration checks.
   */
  static final boolean ANNOUNCES = !"off".equals(System.getProperty("prwrelay.bench.delegation"));

  private final DelegationMessages messages;
  private final String tenant;

  /** Index of the lane's own loop. */
  private final int home;

  /** The loops told, by index; {@code null} while none is. */
  private boolean[] announced;

  Delegations(DelegationMessages messages, String tenant, int home) {
    this.messages = messages;
    this.tenant = tenant;
    this.home = home;
  }

  /** Tells loop {@code origin} (another loop than the lane's, or -1 for none) that it may send. */
  void announce(int origin) {
    if (!ANNOUNCES || origin < 0 || origin == home || (announced != null && announced[origin])) {
      return;
    }
    if (announced == null) {
      announced = new boolean[messages.loops()];
    }
    announced[origin] = true;
    messages.announce(origin, tenant);
  }

  /**
   * The delegate of loop {@code origin} ended itself after a failure it handed to the lane (-1: the
   * failure ended none): the next large fragment from there may announce again.
   */
  void ended(int origin) {
    if (origin >= 0 && announced != null) {
      announced[origin] = false;
    }
  }

  /** Tells every loop told to hand the tenant's fragments to the lane again. */
  void withdrawAll() {
    if (announced == null) {
      return;
    }
    for (int i = 0; i < announced.length; i++) {
      if (announced[i]) {
        messages.withdraw(i, tenant);
      }
    }
    announced = null;
  }
}
