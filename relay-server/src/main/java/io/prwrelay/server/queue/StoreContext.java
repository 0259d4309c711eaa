package io.prwrelay.server.queue;

import java.nio.file.Path;

/**
 * What every tenant log of one {@link QueueStore} shares: the queue directory, the file operations,
 * the totals across tenants, the listener, and the record codec of the store's I/O thread.
 *
 * @param root the queue directory, parent of every tenant directory
 */
record StoreContext(
    Path root, SegmentIo io, QueueTotals totals, QueueListener listener, RecordCodec codec) {}
