package io.prwrelay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.prwrelay.core.remotewrite.SeriesView;
import io.prwrelay.core.remotewrite.WriteRequestReader;
import io.prwrelay.core.remotewrite.WriteRequestVisitor;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's lower bounds of the route step find what the relay's reader finds: on every
 * generated shape, under two tenant labels, the same number of series with the tenant label ({@code
 * walkValidated} handles only the usual label encoding, which {@code long-values}, with values of
 * 128 bytes and more, leaves).
 */
class LabelWalkTest {
  @Test
  void bothWalksFindTheTenantValuesTheReaderFinds() {
    for (String label : new String[] {"instance", "service_id"}) {
      LabelWalk walk = new LabelWalk(label);
      for (String shape : Payloads.SHAPES) {
        byte[] request = Payloads.load(shape, label);
        int expected = seriesWithTheTenantLabel(request, label);
        assertEquals(true, expected > 0, shape + " by " + label);
        assertEquals(expected, walk.walk(request, 0, request.length), shape + " by " + label);
        if (!shape.equals("long-values")) {
          assertEquals(
              expected, walk.walkValidated(request, 0, request.length), shape + " by " + label);
        }
      }
    }
  }

  /**
   * {@code labelSetHash} hashes what the insight's digest hashes: for every series of every shape,
   * the range from its content to the end of its labels that a reader walking labels reports (on
   * every shape its fast scan reads whole: {@code long-values} has labels of 128 bytes and more).
   */
  @Test
  void labelRangesAreTheRangesTheDigestHashes() {
    for (String shape : Payloads.SHAPES) {
      if (shape.equals("long-values")) {
        continue;
      }
      byte[] request = Payloads.load(shape, "service_id");
      List<Integer> expected = new java.util.ArrayList<>();
      WriteRequestReader reader = new WriteRequestReader(List.of("service_id"), false, true);
      WriteRequestVisitor visitor =
          new WriteRequestVisitor() {
            @Override
            public boolean onSeries(SeriesView s) {
              expected.add(s.contentStart());
              expected.add(s.labelsEnd());
              return true;
            }

            @Override
            public void onMetadata(int start, int end) {}
          };
      assertEquals(null, reader.read(request, 0, request.length, visitor));
      int[] ranges = LabelWalk.labelRanges(request);
      assertEquals(expected.size(), ranges.length, shape);
      for (int i = 0; i < ranges.length; i++) {
        assertEquals(expected.get(i), ranges[i], shape + " at " + i);
      }
    }
  }

  /** How many series have the tenant label, as the relay's reader reports them. */
  private static int seriesWithTheTenantLabel(byte[] request, String label) {
    int[] total = new int[1];
    WriteRequestReader reader = new WriteRequestReader(List.of(label), false);
    WriteRequestVisitor visitor =
        new WriteRequestVisitor() {
          @Override
          public boolean onSeries(SeriesView s) {
            if (s.tenantLabel() != SeriesView.NO_TENANT_LABEL) {
              total[0]++;
            }
            return true;
          }

          @Override
          public void onMetadata(int start, int end) {}
        };
    assertEquals(null, reader.read(request, 0, request.length, visitor));
    return total[0];
  }
}
