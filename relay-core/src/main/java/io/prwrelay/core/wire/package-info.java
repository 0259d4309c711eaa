/**
 * The protobuf wire format as the readers and writers use it: one descriptor class per message with
 * its field numbers and layout drawn in the Javadoc ({@link
 * io.prwrelay.core.wire.WriteRequestFields}, {@link io.prwrelay.core.wire.TimeSeriesFields}, the
 * {@code V2*Fields} of PRW 2.0), tag and varint arithmetic ({@link io.prwrelay.core.wire.WireTags},
 * {@link io.prwrelay.core.wire.Varints}), a heap array for any buffer ({@link
 * io.prwrelay.core.wire.HeapBuffers}) and the count of one thread's scratch arrays ({@link
 * io.prwrelay.core.wire.ScratchMemory}).
 */
package io.prwrelay.core.wire;
