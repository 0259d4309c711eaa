package io.prwrelay.server.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The line reader across reads: a line whole in one read is read in place, one split anywhere
 * (between its CR and LF too) comes out the same, the buffer kept for a split line is released once
 * the line is handled, and the bound counts the line without its CR.
 */
class LineReaderTest {
  private static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  private static ByteBuf bytes(String s) {
    return ALLOC.directBuffer().writeBytes(s.getBytes(StandardCharsets.ISO_8859_1));
  }

  /** The lines of {@code pieces} fed one after the other, and what is left unread of the last. */
  private static List<String> lines(int limit, String... pieces) throws ResponseParser.Malformed {
    LineReader reader = new LineReader();
    List<String> lines = new ArrayList<>();
    try {
      for (String piece : pieces) {
        ByteBuf in = bytes(piece);
        try {
          while (reader.next(in, limit, "line too long")) {
            lines.add(
                reader
                    .line()
                    .toString(
                        reader.start(),
                        reader.end() - reader.start(),
                        StandardCharsets.ISO_8859_1));
            reader.done();
            assertFalse(reader.holdsPartial(), "released once handled");
          }
          assertFalse(in.isReadable(), "a read without a line's end is kept whole");
        } finally {
          in.release();
        }
      }
    } finally {
      reader.release();
    }
    return lines;
  }

  @Test
  void aLineWholeInOneReadIsReadInPlace() throws Exception {
    LineReader reader = new LineReader();
    ByteBuf in = bytes("HTTP/1.1 200 OK\r\nrest");
    try {
      assertTrue(reader.next(in, 100, "line too long"));
      assertSame(in, reader.line());
      assertEquals(0, reader.start());
      assertEquals(15, reader.end());
      assertEquals(17, in.readerIndex(), "read up to and including the LF");
      reader.done();
      assertFalse(reader.holdsPartial());
    } finally {
      in.release();
      reader.release();
    }
  }

  @Test
  void aLineSplitAtEveryPositionComesOutTheSame() throws Exception {
    String raw = "Content-Length: 12\r\n\r\nab\n";
    List<String> expected = List.of("Content-Length: 12", "", "ab");
    assertEquals(expected, lines(100, raw));
    for (int i = 1; i < raw.length(); i++) {
      assertEquals(expected, lines(100, raw.substring(0, i), raw.substring(i)), "split " + i);
    }
    String[] oneByOne = raw.split("");
    assertEquals(expected, lines(100, oneByOne), "byte by byte");
  }

  @Test
  void theStartOfALineIsHeldUntilItsEndAndReleasedAfter() throws Exception {
    LineReader reader = new LineReader();
    ByteBuf first = bytes("Retry-Af");
    ByteBuf second = bytes("ter: 5\r\nnext");
    try {
      assertFalse(reader.next(first, 100, "line too long"));
      assertTrue(reader.holdsPartial());
      assertTrue(reader.next(second, 100, "line too long"));
      assertEquals(
          "Retry-After: 5",
          reader
              .line()
              .toString(reader.start(), reader.end() - reader.start(), StandardCharsets.US_ASCII));
      assertEquals("next", second.toString(StandardCharsets.US_ASCII), "the rest stays unread");
      reader.done();
      assertFalse(reader.holdsPartial());
    } finally {
      first.release();
      second.release();
      reader.release();
    }
  }

  @Test
  void onlyTheCrBeforeTheLfIsCutOff() throws Exception {
    assertEquals(List.of("a\r", "b", "c"), lines(100, "a\r\r\nb\nc\r\n"));
  }

  @Test
  void theBoundCountsTheLineWithoutItsCr() throws Exception {
    String atBound = "x".repeat(10);
    assertEquals(List.of(atBound), lines(10, atBound + "\r\n"));
    // Without its end yet, a line of the bound may still have its CR in this read.
    assertEquals(List.of(atBound), lines(10, atBound + "\r", "\n"));
    assertEquals(
        "malformed response: line too long",
        assertThrows(ResponseParser.Malformed.class, () -> lines(10, atBound + "xy")).getMessage());
    assertEquals(
        "malformed response: line too long",
        assertThrows(ResponseParser.Malformed.class, () -> lines(10, atBound + "x\n"))
            .getMessage());
    assertEquals(
        "malformed response: line too long",
        assertThrows(ResponseParser.Malformed.class, () -> lines(10, "x".repeat(6), "x".repeat(6)))
            .getMessage());
  }
}
