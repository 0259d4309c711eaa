package io.prwrelay.server.write;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.Objects;

/**
 * Who sent a write request, for every piece of state the relay keeps about a sender: its share of
 * the memory budget ({@link InflightBudget}), the tenants it sent each metric family to (what
 * routes its metadata-only requests), and the ledgers of its retried bodies ({@link Delivery}).
 * Computed once at the ingress, from the request's head, and handed to the write pipeline with the
 * body.
 *
 * <p>A sender is the client's IP address (never its port: a sender's retry comes on a new
 * connection) together with, when inbound auth is on, the credential the request presented. So
 * senders behind one NAT or proxy that present no credentials, or the same one, are one sender and
 * share one key; with a credential each, they are told apart. A host using several credentials is
 * several senders. {@code X-Forwarded-For} and similar headers are not trusted: any client could
 * claim any address with them.
 *
 * <p>{@link #id()} is a 64-bit hash of both, keyed by a random seed drawn when the relay starts,
 * which the structures that keep numbers rather than objects (the metric families, the ledgers) are
 * keyed by: no sender can choose its id, nor aim it at another's. Immutable; equal keys come from
 * the same address and credential.
 */
public final class SenderKey {
  /** A sender with no address (a channel that is not a socket) and no credential. */
  public static final SenderKey UNKNOWN = new SenderKey(null, 0);

  private static final long SEED = new SecureRandom().nextLong();

  private final InetAddress address;
  private final long credential;
  private final long id;

  private SenderKey(InetAddress address, long credential) {
    this.address = address;
    this.credential = credential;
    this.id = mix(mix(SEED ^ credential) ^ addressBits(address));
  }

  /**
   * @param address the client's IP address, or {@code null} when the channel has none
   * @param credential the presented credential's identity ({@link TenantAllowList#credential()}), 0
   *     without inbound auth
   */
  public static SenderKey of(InetAddress address, long credential) {
    return address == null && credential == 0 ? UNKNOWN : new SenderKey(address, credential);
  }

  /** This key when it has the same address and credential (no new object per request), else new. */
  public SenderKey with(InetAddress address, long credential) {
    return Objects.equals(this.address, address) && this.credential == credential
        ? this
        : of(address, credential);
  }

  /** The sender's keyed 64-bit hash: what structures that keep numbers are keyed by. */
  long id() {
    return id;
  }

  private static long addressBits(InetAddress address) {
    if (address == null) {
      return 0;
    }
    byte[] b = address.getAddress();
    long h = b.length;
    for (byte x : b) {
      h = mix(h ^ (x & 0xFF)) + 0x9E3779B97F4A7C15L;
    }
    return h;
  }

  /** The finaliser of SplitMix64: every input bit moves every output bit. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SenderKey k
        && credential == k.credential
        && Objects.equals(address, k.address);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(id);
  }

  /** The address only: a credential's identity is never shown. */
  @Override
  public String toString() {
    return address == null ? "unknown" : address.getHostAddress();
  }
}
