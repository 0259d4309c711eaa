package io.prwrelay.server.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

/** What one sender is: an IP address (never a port) and, under inbound auth, a credential. */
class SenderKeyTest {
  private static InetAddress ip(int last) throws Exception {
    return InetAddress.getByAddress(new byte[] {127, 0, 0, (byte) last});
  }

  @Test
  void oneAddressWithoutCredentialsIsOneSender() throws Exception {
    SenderKey a = SenderKey.of(ip(1), 0);
    SenderKey again = SenderKey.of(ip(1), 0);
    assertEquals(a, again);
    assertEquals(a.id(), again.id());
    assertNotEquals(a, SenderKey.of(ip(2), 0));
    assertNotEquals(a.id(), SenderKey.of(ip(2), 0).id());
  }

  @Test
  void aCredentialTellsSendersOfOneAddressApart() throws Exception {
    SenderKey teamA = SenderKey.of(ip(1), 17);
    SenderKey teamB = SenderKey.of(ip(1), 18);
    assertNotEquals(teamA, teamB);
    assertNotEquals(teamA.id(), teamB.id());
    assertNotEquals(teamA, SenderKey.of(ip(1), 0));
    assertEquals(teamA, SenderKey.of(ip(1), 17));
  }

  @Test
  void aConnectionKeepsItsKeyWhileTheSenderIsTheSame() throws Exception {
    SenderKey first = SenderKey.UNKNOWN.with(ip(1), 0);
    assertSame(first, first.with(ip(1), 0), "no new object per request");
    assertNotEquals(first, first.with(ip(1), 5), "a request with another credential");
    assertSame(SenderKey.UNKNOWN, SenderKey.of(null, 0));
  }

  @Test
  void itShowsTheAddressOnlyNeverTheCredential() throws Exception {
    assertEquals("127.0.0.1", SenderKey.of(ip(1), 0x1234_5678_9ABC_DEF0L).toString());
    assertEquals("unknown", SenderKey.of(null, 42).toString());
  }
}
