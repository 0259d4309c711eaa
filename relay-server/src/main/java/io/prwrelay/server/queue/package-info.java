/**
 * The on-disk, per-tenant queues of queue mode (docs/ARCHITECTURE.md#the-queue): a sender's tenant
 * batch gets its 2xx once it is delivered or written and flushed to its tenant's queue here; the
 * tenant's lane drains the queue in order; a record past a byte bound is refused, one past the age
 * bound dropped with counts; the queues survive restarts and {@code kill -9}.
 *
 * <h2>Entry points</h2>
 *
 * {@link io.prwrelay.server.queue.QueueStore#open QueueStore.open(dir, limits, listener)} replays
 * the directory; {@link io.prwrelay.server.queue.QueueStore#queue QueueStore.queue(tenant)} gives a
 * lane its {@link io.prwrelay.server.queue.FileTenantQueue}: {@code append} (future completed after
 * {@code fsync}), {@code read} (from the head, not consuming), {@code ack} (cumulative), and
 * counters. The lanes see them through {@link io.prwrelay.server.queue.TenantQueues} and {@link
 * io.prwrelay.server.queue.TenantQueue}, what a lane uses of a queue, which the tests' in-memory
 * twin also implements on an event loop (so lane decisions are tested in simulated time). {@link
 * io.prwrelay.server.queue.QueueListener} hears drops (by tenant and {@link
 * io.prwrelay.server.queue.DropReason}) and cut corrupt tails. An {@code IOException} from {@code
 * append} (full or unwritable disk, closed store, record over a bound) means nothing was queued:
 * the relay answers 503, never a 2xx.
 *
 * <h2>Who owns what</h2>
 *
 * <ul>
 *   <li>Per store: {@link io.prwrelay.server.queue.QueueStore} holds the directory lock and the
 *       tenants' queues; {@link io.prwrelay.server.queue.IoThread} the one thread doing all file
 *       work but making new tenants' files ({@link io.prwrelay.server.queue.TenantCreation}), and
 *       the closed state; {@link io.prwrelay.server.queue.GroupCommit} the appends waiting for that
 *       thread and the threads that flush segments; {@link io.prwrelay.server.queue.Retention}
 *       applies the bounds and the periodic cleanup; {@link io.prwrelay.server.queue.QueueRecovery}
 *       replays the directory on open; {@link io.prwrelay.server.queue.QueueTotals} counts across
 *       tenants; {@link io.prwrelay.server.queue.RecordCodec} writes record headers and checks
 *       records read back.
 *   <li>Per tenant: {@link io.prwrelay.server.queue.TenantLog} appends, reads, consumes and
 *       removes, through {@link io.prwrelay.server.queue.TenantIndex} (what is queued: segments,
 *       head, counters, with their invariants) and {@link io.prwrelay.server.queue.TenantFiles}
 *       (the tenant directory, its {@code tenant} and {@code head} files, creating and deleting
 *       segments); {@link io.prwrelay.server.queue.Segment} indexes the records of one file, {@link
 *       io.prwrelay.server.queue.HeadFile} is the persisted read position, {@link
 *       io.prwrelay.server.queue.CutReporter} reports damaged data cut away.
 *   <li>The format: {@link io.prwrelay.server.queue.RecordLayout} (drawn there), {@link
 *       io.prwrelay.server.queue.SegmentScanner} (validates a whole segment on replay), {@link
 *       io.prwrelay.server.queue.SegmentIo} (the file operations that can fail or flush, with test
 *       doubles).
 * </ul>
 *
 * <h2>Why a segment log of our own</h2>
 *
 * We need: one {@code fsync} shared by every append waiting at that moment (group commit), because
 * a flush costs milliseconds and a relay takes thousands of batches a second; a CRC on every
 * record, so a torn or damaged tail is found and cut at the last good record instead of being
 * delivered or failing the start; consumed data given back to the file system promptly; no blocking
 * of the caller; no new runtime requirements. That is about 1,000 lines here. The libraries
 * considered:
 *
 * <ul>
 *   <li><b>Tape's {@code QueueFile}</b> (com.squareup.tape2): one ring file per queue, opened in
 *       {@code "rwd"} mode, so every add makes three synchronous writes (length, data, header) with
 *       no way to share them between adds; no checksum; its own documentation says it relies on
 *       atomic segment writes and that a power loss mid-write corrupts the file on conventional
 *       file systems. Its 2.x line never left {@code 2.0.0-beta1} on Maven Central, and the
 *       repository has been archived (read-only) since October 2024.
 *   <li><b>Chronicle Queue</b>: memory-mapped files rolled by time cycle rather than deleted when
 *       consumed; on JDK 17 it needs a list of {@code --add-exports}/{@code --add-opens} flags
 *       (Chronicle's own Java 17 support notes) in every launcher and test JVM; it starts
 *       background threads of its own (for example its disk-space monitor); it depends on
 *       chronicle-analytics, which reports usage to a remote server unless turned off; and it is a
 *       large dependency tree (core, bytes, wire, threads, affinity) for a relay whose jar is
 *       otherwise Netty and Micrometer. Durability there comes from mapped pages, not from a flush
 *       we control per batch.
 * </ul>
 *
 * <h2>Format and behaviour</h2>
 *
 * <ul>
 *   <li>Layout: {@code <dir>/<tenant dir>/<16-digit id>.seg}, {@code head} and {@code tenant} files
 *       per tenant, {@code <dir>/lock}; record and file layouts are drawn in {@link
 *       io.prwrelay.server.queue.RecordLayout}, tenant directory names in {@link
 *       io.prwrelay.server.queue.TenantDirNames}. Segments roll at {@link
 *       io.prwrelay.server.queue.QueueLimits#segmentBytes()} (default 16 MiB) and are deleted once
 *       fully consumed and no longer the last; the periodic check ({@link
 *       io.prwrelay.server.queue.QueueStore#expire}, {@link
 *       io.prwrelay.server.queue.TenantLog#removeIfDrained}) removes a drained tenant's last
 *       segment, its {@code head} and {@code tenant} files and its directory, head rewritten past
 *       the segments and flushed first, segments deleted and the directory flushed before the rest,
 *       so that a crash in between replays nothing delivered.
 *   <li>Threads: all file work runs on one daemon I/O thread per store. An append hands the I/O
 *       thread a retained slice of the payload (no copy on the caller's thread); the thread writes
 *       every waiting append, flushes each touched segment once ({@code FileChannel.force(false)};
 *       up to {@code GroupCommit.SYNC_THREADS} segments at the same time, so that the file system
 *       can serve one commit touching many tenants with few journal commits), then completes the
 *       futures. Reads, acknowledgements and expiry queue behind writes on the same thread.
 *   <li>Failures: a failed write or flush cuts the segment back to where the batch began, fails the
 *       affected appends with an {@code IOException} naming the file, and moves later appends to a
 *       new segment.
 *   <li>Delivery is at-least-once: the head file is rewritten (not flushed) on every
 *       acknowledgement and flushed on close, so a crash can bring back records acknowledged
 *       shortly before it, never lose unacknowledged ones.
 *   <li>Bounds: per tenant bytes and age, total bytes. A record past a byte bound is refused
 *       ({@link io.prwrelay.server.queue.QueueFullException}) and nothing queued is dropped for it,
 *       so an append's success keeps meaning the record stays until it is delivered or too old;
 *       under {@link io.prwrelay.server.queue.QueueFullPolicy#DROP_OLDEST} the appending tenant's
 *       own oldest records make room, never another tenant's (taking from the largest queue would
 *       let a sender spread over many small tenants make every drop fall on another sender's large
 *       queue). A record dropped after a lane read it may still be delivered by that lane; the drop
 *       is counted anyway.
 *   <li>New tenants: a tenant without files has them made by {@link
 *       io.prwrelay.server.queue.TenantCreation} on threads of its own while its appends wait, in
 *       order; the I/O thread never makes a directory, so other tenants' appends never wait for
 *       one. The periodic check runs {@value io.prwrelay.server.queue.QueueStore#EXPIRE_CHUNK}
 *       queues per task of the I/O thread.
 *   <li>Replay ({@link io.prwrelay.server.queue.QueueRecovery}): every record from each head is
 *       validated (length, bounds of the file, CRC). The first bad record of a segment cuts that
 *       segment there (one log line and one listener call naming the tenant, the segment and the
 *       bytes cut); the later segments of the same tenant are validated on their own and kept up to
 *       their own first bad record, because each was written and flushed on its own. A segment
 *       whose header is bad is deleted whole; one whose version field holds no version any relay
 *       writes (0, negative, or past {@link
 *       io.prwrelay.server.queue.RecordLayout#NEWEST_PLAUSIBLE_SEGMENT_VERSION}) has its header
 *       repaired and its records validated as any others. Only an unusable directory, or a segment
 *       of a plausible newer format version, makes {@code open} throw.
 * </ul>
 */
package io.prwrelay.server.queue;
