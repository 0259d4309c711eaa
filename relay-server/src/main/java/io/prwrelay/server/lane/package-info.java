/**
 * Tenant lanes: every downstream send of one tenant goes through that tenant's lane, so that what a
 * tenant's downstream does (slow, failing, throttling, rejecting) changes only its own lane.
 *
 * <h2>Entry points</h2>
 *
 * The write pipeline ({@code io.prwrelay.server.write}) hands each request's per-tenant batches to
 * {@link io.prwrelay.server.lane.Lanes#submit Lanes.submit} as {@link
 * io.prwrelay.server.lane.Fragment}s, and learns each one's {@link
 * io.prwrelay.server.lane.FragmentOutcome} through its listener; {@link
 * io.prwrelay.server.lane.SenderRequest} gathers the outcomes of one sender request. {@link
 * io.prwrelay.server.lane.LaneObserver} hears every attempt, state change and outcome (metrics,
 * {@link io.prwrelay.server.lane.LaneLog}). {@link io.prwrelay.server.lane.LaneSettings} holds the
 * bounds and timing.
 *
 * <h2>Who owns what</h2>
 *
 * A lane lives on one event loop, chosen by the tenant's hash, and everything it owns is touched
 * only there, without locks. {@code Lanes} routes: it has each fragment compressed on the calling
 * thread ({@code FragmentCompression}: its HA key read, compressed unless small) and hands it to
 * its tenant's loop, and it starts and closes the shards. {@code LaneShard} keeps one loop's lanes
 * (and delegates, below) and runs the loop's periodic work (the sweep of idle lanes; on the first
 * loop, queue mode's expiry of old records):
 *
 * <ul>
 *   <li>{@code Lane}: the lane's story: takes fragments, sends what waits, hands each answer to
 *       {@code Settlement}, which decides every fragment's fate in one method;
 *   <li>{@code Outgoing}: one downstream request of fragments held in memory, for a lane and a
 *       delegate alike: builds its body, counts the attempt, holds a connection of the loop until
 *       the answer, and gives the answer to its owner before the connection back;
 *   <li>{@code Fragment}: owns its bytes and its state on the way (attempts, when it began to wait,
 *       the loop it came from, its HA key, its bisection piece), changed only through its methods;
 *   <li>{@code Health}: the state machine of the next section (one transition method);
 *   <li>{@code Pending}: the fragments waiting, their bytes and deadlines;
 *   <li>{@code RequestBody}: request bodies from fragments or queued records (functions);
 *   <li>{@code SendSlots}: the loop's connections, shared by its lanes, and the lanes waiting for
 *       one, in order; {@code LaneTimer}: the lane's timers;
 *   <li>{@code Bisection}: a merged request rejected as a whole is sent again in halves until only
 *       the bad batches are rejected;
 *   <li>sync mode: the protocol between loops below: {@code Delegations} (the lane's side), {@code
 *       Delegate} (the routing loop's side) and {@code DelegationMessages} (the messages, each a
 *       task on the loop it is for);
 *   <li>queue mode: {@code DirectSpill} (the route below, direct sends, the spill) and {@code
 *       QueueDrain} (appends, the drain, backoff), over the tenant's {@link
 *       io.prwrelay.server.queue.TenantQueue}.
 * </ul>
 *
 * <h2>Health</h2>
 *
 * <pre>
 *   any state ── 2xx ──────────────────────────────────▶ HEALTHY
 *   any state ── 429 ──────────────────────────────────▶ THROTTLED     one by one
 *   any state ── 5xx, no answer, queue not readable ───▶ BACKING_OFF
 *   any state ── 3rd non-retriable 4xx in a row ───────▶ REJECTING
 * </pre>
 *
 * <ul>
 *   <li>HEALTHY: fragments are sent when a connection is free, after the tasks already waiting on
 *       the loop (which may bring more of the tenant's fragments). While a send is in flight,
 *       waiting fragments are coalesced for up to {@code linger} into one request of at most {@code
 *       batchMaxBytes}. When every connection of the loop is busy the lane waits in {@code
 *       SendSlots} and then sends all it holds in one request.
 *   <li>BACKING_OFF after a 5xx, connect error or timeout: until the backoff ends, new fragments
 *       are answered at once (503 with the time left as {@code Retry-After}); the fragments of the
 *       failed send are retried after the backoff at most twice ({@code Settlement.MAX_RETRIES}),
 *       and only when the backoff takes at most a quarter of their request's time left, else
 *       answered 503.
 *   <li>THROTTLED after a 429, with or without {@code Retry-After} (Cortex sends none), until a
 *       send succeeds: fragments are sent one by one, so that merging never makes a batch larger
 *       than the tenant's burst. Only a {@code Retry-After} holds new fragments back (429 at once
 *       until it ends). A 429 is retried inside the request once, and only when its {@code
 *       Retry-After} fits well inside the deadline.
 *   <li>REJECTING when the last {@code Health.REJECTING_AFTER} (3) sends, with no other answer
 *       between them, were refused for good with a non-retriable 4xx (a tenant over its series
 *       limit): fragments are sent as when healthy (by the lane itself, which withdraws its
 *       delegations), since any one may be accepted; the state says why the tenant's data is not
 *       stored, until a send succeeds. A merged send rejected as a whole and sent again in halves
 *       counts only the rejections of its halves; a rejection of another loop's send ({@code
 *       Delegate}) is told to the lane.
 * </ul>
 *
 * A non-retriable 4xx rejects only the fragments of that send, and changes the state only at the
 * third in a row. In queue mode the state never answers a fragment: it holds back the drain (a 429
 * backs off like a failure), and the data waits on disk within the queue's bounds. {@code Health}
 * has the table of holds for both modes; the state is what the metrics and the log report.
 *
 * <h2>Queue mode: where a fragment goes</h2>
 *
 * <pre>
 *                            spill (1)
 *        ┌─────────────────────────────────────────────┐
 *        │                                             ▼
 *     DIRECT ◀─────────── caught up (3) ──────────── DRAINING
 *        ▲                                           │     ▲
 *        │                             last records  │     │ spill (1)
 *        │                                  out (2)  ▼     │
 *        └─────────── caught up (3) ──────────── CATCHING_UP
 *
 *   (1) a direct send failed or went unanswered within the direct timeout, a fragment waiting in
 *       memory reached its spill time, more than maxPendingBytes wait, or a drained send failed
 *   (2) a drained send carries all that is queued, or the queue is empty while appends are
 *       still being written
 *   (3) the queue is empty, every append is done and no backoff is running
 * </pre>
 *
 * DIRECT sends from memory as sync mode does, and answers a 2xx without touching the disk; DRAINING
 * appends every new fragment (answered once fsync'd) and sends the queue's records in order;
 * CATCHING_UP keeps new fragments in memory while the queue's last records go. A spill appends the
 * fragments of the direct sends still out and every fragment waiting, in order. No queued record is
 * sent while a direct send is out. A lane starts DRAINING when its queue holds records (after a
 * restart); with {@code relay.delivery.queue.direct-timeout=0} it is always DRAINING.
 *
 * <h2>Lifecycle</h2>
 *
 * <pre>
 *   first fragment of a tenant, ──▶ open ── nothing held, not held back, ──▶ forgotten
 *   or its queue holds records       │      for idleTimeout; or evicted,     (its delegations
 *   at start (at most maxLanes: a    │      longest idle first, for a new     withdrawn)
 *   new tenant evicts an idle lane,  │      tenant
 *   else it is answered 503)         │
 *                                    └── shutdown ──▶ closed: new fragments 503, sends in flight
 *                                                     answered on return, never retried
 * </pre>
 *
 * <h2>Sync mode: announce → take → fail → withdraw</h2>
 *
 * A large fragment routed on one loop whose tenant's lane lives on another would wait for that loop
 * to take it and for the routing loop to take its outcome back. So a healthy lane lets the routing
 * loop send such fragments itself:
 *
 * <pre>
 *   routing loop R                                       home loop H (the tenant's lane)
 *   ──────────────                                       ───────────────────────────────
 *   large fragment, no delegate here ──── to the lane ──▶ offer: healthy, came from R
 *                                   ◀──── announce ────── Delegations.announce(R)
 *   a Delegate for the tenant
 *   take: large PRW 1.0 fragments go from here
 *     (at most maxConcurrentSends, waiting for linger
 *      to travel together, never R's last connections;
 *      one it cannot take goes to the lane)
 *   2xx, plain 4xx: answered here
 *   fail: 429, 5xx, no answer: the Delegate
 *     ends itself; the failed fragments and
 *     those waiting here ──────────────── to the lane ──▶ remoteFailed: Delegations.ended(R),
 *                                                         decided as if sent from H
 *                                   ◀──── withdraw ────── backing off, throttled or forgotten:
 *   the Delegate is dropped; what waits                   Delegations.withdrawAll
 *   there goes to the lane ───────────── to the lane ──▶
 * </pre>
 *
 * Every arrow between the two columns is a {@code DelegationMessages} task. A merged request
 * rejected as a whole also goes to the lane, to be sent again in halves, but does not end the
 * delegate. Messages from H to R run in order on R, so a withdraw always comes before a later
 * announce; a failure of a delegate that had already ended does not tell the lane anything about
 * the delegate that may have replaced it. At shutdown what waits in a delegate is answered 503. A
 * delegate takes a fragment only while its loop keeps more than {@code maxConcurrentSends}
 * connections free, so with 4 connections per loop (64 over 16 loops) it never does; what
 * delegation buys elsewhere is measured with {@code -Dprwrelay.bench.delegation=off}
 * (BENCHMARKS.md, "Delegation between loops").
 */
package io.prwrelay.server.lane;
