package io.prwrelay.server.queue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.Set;

/**
 * The file operations of the queue that can fail or cost a disk flush, in one place so tests can
 * count flushes and inject failures (a full disk, a failing fsync). The default methods do the real
 * thing.
 */
interface SegmentIo {
  /** The real file system. */
  SegmentIo FILES = new SegmentIo() {};

  /** Opens a file channel. */
  default FileChannel open(Path path, Set<? extends OpenOption> options) throws IOException {
    return FileChannel.open(path, options);
  }

  /** Writes every remaining byte of {@code sources} at the channel's position. */
  default void write(FileChannel channel, ByteBuffer[] sources) throws IOException {
    long left = 0;
    for (ByteBuffer b : sources) {
      left += b.remaining();
    }
    while (left > 0) {
      left -= channel.write(sources);
    }
  }

  /**
   * Flushes the channel's file to the device.
   *
   * @param metadata also flush metadata that reading the data does not need (directories,
   *     truncation)
   */
  default void force(FileChannel channel, boolean metadata) throws IOException {
    channel.force(metadata);
  }

  /**
   * The exception to throw when a queue file operation failed: {@code what} and the path, then the
   * cause's message (or the cause itself where its message is only the path).
   */
  static IOException failure(String what, Path path, IOException cause) {
    if (cause instanceof FileAlreadyExistsException || cause instanceof NoSuchFileException) {
      return new IOException(what + " " + path + ": " + cause, cause);
    }
    return new IOException(what + " " + path + ": " + cause.getMessage(), cause);
  }
}
