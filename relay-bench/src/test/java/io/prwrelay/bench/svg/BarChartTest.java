package io.prwrelay.bench.svg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class BarChartTest {
  @Test
  void barsAreWellFormedSvgWithHeightsProportionalToValues() throws Exception {
    String svg =
        new BarChart("series/s & <tenants>", "sub", "x", "y")
            .add(new BarChart.Bar("1", "(1.0)", 2_000_000))
            .add(new BarChart.Bar("1,000", "(865.2)", 500_000))
            .toSvg();
    Document doc = SvgDocuments.parse(svg);
    List<Double> heights = new ArrayList<>();
    NodeList rects = doc.getElementsByTagName("rect");
    for (int i = 0; i < rects.getLength(); i++) {
      Element r = (Element) rects.item(i);
      if (r.getElementsByTagName("title").getLength() > 0) {
        heights.add(Double.parseDouble(r.getAttribute("height")));
      }
    }
    assertEquals(2, heights.size(), svg);
    assertEquals(4.0, heights.get(0) / heights.get(1), 0.01, svg);
    assertTrue(svg.contains("series/s &amp; &lt;tenants&gt;"), svg);
    assertTrue(svg.contains(">2,000,000<"), svg);
  }

  @Test
  void gridlineStepsAreRound() {
    assertEquals(250_000, BarChart.step(2_300_000));
    assertEquals(500_000, BarChart.step(4_100_000));
    assertEquals(0.2, BarChart.step(1.5), 1e-9);
    assertEquals(1, BarChart.step(0));
  }
}
