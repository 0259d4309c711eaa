package io.prwrelay.server.lane;

import io.prwrelay.core.encode.BatchEncoder;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link Lanes#submit} does to each fragment on the thread that built it, before the fragment
 * goes to its lane's loop: reads the key the downstream judges it by ({@link HaKeys}) from its
 * uncompressed body, and compresses it into one snappy block unless it is small. Stateless past its
 * context; called from any thread.
 */
final class FragmentCompression {
  /**
   * Fragments smaller than this many uncompressed bytes reach their lane uncompressed: the lane
   * compresses the small fragments it sends together as one block, which snappy makes faster per
   * byte and smaller than one tiny block per fragment (a request of many tenants with a few series
   * each). Larger fragments are compressed on the thread that built them, while their bytes are in
   * its cache.
   */
  static final int IN_LANE_BELOW = BatchEncoder.SMALL_BATCH_BYTES;

  private final LaneContext ctx;

  FragmentCompression(LaneContext ctx) {
    this.ctx = ctx;
  }

  /** Reads the fragment's HA key from its uncompressed body, once ({@link Lanes#readHaKey}). */
  void readHaKey(Fragment f) {
    HaKeys.judge(f, ctx.settings.haLabels(), ctx.alloc);
  }

  /**
   * The fragments, those of at least {@link #IN_LANE_BELOW} bytes compressed; one that cannot be is
   * answered (500, or 503 when memory ran out) and left out.
   *
   * @param fragments takes ownership; returned as it is when every fragment could be compressed
   */
  List<Fragment> compressed(List<Fragment> fragments) {
    List<Fragment> out = null;
    for (int i = 0; i < fragments.size(); i++) {
      Fragment f = fragments.get(i);
      try {
        readHaKey(f); // from the body while it is at hand
        if (f.size() >= IN_LANE_BELOW) {
          f.compress(ctx.alloc);
        }
      } catch (RuntimeException | Error e) {
        // Memory running out (a batch too large for what is left) must not leak the fragment:
        // it is answered here and releases its buffers.
        if (out == null) {
          out = new ArrayList<>(fragments.subList(0, i));
        }
        ctx.finish(f, FragmentOutcome.cannotCompress(e, 0));
        continue;
      }
      if (out != null) {
        out.add(f);
      }
    }
    return out == null ? fragments : out;
  }
}
