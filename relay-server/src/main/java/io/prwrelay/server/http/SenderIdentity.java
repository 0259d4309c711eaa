package io.prwrelay.server.http;

import java.net.InetAddress;

/**
 * Who sent a write request, for the state the relay keeps about each sender ({@link
 * io.prwrelay.server.lane.NewLaneBudget}): the credential that authenticated it when inbound auth
 * is on (every credential, limited to some tenants or not, is its own sender, whichever address it
 * comes from), else the client's address. Compared by identity and equality only; never printed, so
 * no secret can reach a log.
 */
final class SenderIdentity {
  private SenderIdentity() {}

  /**
   * @param authEnabled whether requests need credentials
   * @param credential what {@link InboundAuth#authenticate} returned for the request: one object
   *     per configured credential
   * @param client the client's address, or {@code null} when not an IP connection
   * @return the key of the request's sender, or {@code null} for no one to charge
   */
  static Object of(boolean authEnabled, TenantAllowList credential, InetAddress client) {
    return authEnabled ? credential : client;
  }
}
