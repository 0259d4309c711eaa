package io.prwrelay.bench.svg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class FlameGraphTest {
  private static final String[] COLLAPSED = {
    "main;route;scan 6", "main;route;encode 2", "main;<init> & \"x\" 8", "not a stack line", ""
  };

  private static FlameGraph graph() {
    return FlameGraph.parse(Stream.of(COLLAPSED), null, null);
  }

  @Test
  void writesWellFormedSvgWithEveryFrameAsATitledBox() throws Exception {
    String svg = graph().toSvg("a <tiny> profile");
    Map<String, Double> boxes = SvgDocuments.boxWidths(SvgDocuments.parse(svg));
    assertEquals(
        java.util.List.of(
            "all (16 samples, 100.00%)",
            "main (16 samples, 100.00%)",
            "<init> & \"x\" (8 samples, 50.00%)",
            "route (8 samples, 50.00%)",
            "encode (2 samples, 12.50%)",
            "scan (6 samples, 37.50%)"),
        java.util.List.copyOf(boxes.keySet()));
    assertTrue(svg.contains("a &lt;tiny&gt; profile"), svg);
  }

  @Test
  void escapesFrameNames() {
    String svg = graph().toSvg("t");
    assertFalse(svg.contains("<init>"), svg);
    assertTrue(svg.contains("&lt;init&gt; &amp; &quot;x&quot;"), svg);
  }

  @Test
  void boxWidthsAreProportionalToSamples() throws Exception {
    Map<String, Double> w = SvgDocuments.boxWidths(SvgDocuments.parse(graph().toSvg("t")));
    double all = w.get("all (16 samples, 100.00%)");
    assertEquals(all / 2, w.get("route (8 samples, 50.00%)"), 0.5);
    assertEquals(all * 6 / 16, w.get("scan (6 samples, 37.50%)"), 0.5);
    assertEquals(all * 2 / 16, w.get("encode (2 samples, 12.50%)"), 0.5);
  }

  @Test
  void theSameInputGivesTheSameFile() {
    String a = graph().toSvg("t");
    String b =
        FlameGraph.parse(
                Stream.of("main;<init> & \"x\" 8", "main;route;encode 2", "main;route;scan 6"),
                null,
                null)
            .toSvg("t");
    assertEquals(a, b);
  }

  @Test
  void aRootPatternCutsStacksToStartAtThatFrame() throws Exception {
    FlameGraph g = FlameGraph.parse(Stream.of(COLLAPSED), null, Pattern.compile("^route$"));
    Map<String, Double> boxes = SvgDocuments.boxWidths(SvgDocuments.parse(g.toSvg("t")));
    assertEquals(8, g.samples());
    assertTrue(boxes.containsKey("route (8 samples, 100.00%)"), boxes.toString());
    assertFalse(boxes.keySet().stream().anyMatch(k -> k.startsWith("main")), boxes.toString());
  }

  @Test
  void countsCanBeNamedBytes() {
    String svg = graph().toSvg("t", "bytes");
    assertTrue(svg.contains("16 bytes;"), svg);
    assertTrue(svg.contains("scan (6 bytes, 37.50%)"), svg);
  }

  @Test
  void anIncludePatternKeepsOnlyMatchingStacks() {
    FlameGraph g = FlameGraph.parse(Stream.of(COLLAPSED), Pattern.compile("scan"), null);
    assertEquals(6, g.samples());
  }
}
