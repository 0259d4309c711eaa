package io.prwrelay.bench.svg;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** Parses written SVG with the JDK's XML parser, as a browser would have to. */
final class SvgDocuments {
  private SvgDocuments() {}

  /** The document; throws when it is not well-formed XML. */
  static Document parse(String svg) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    return f.newDocumentBuilder()
        .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
  }

  /** The width of each {@code <g><title>…</title><rect/></g>} box, by its title (unescaped). */
  static Map<String, Double> boxWidths(Document doc) {
    Map<String, Double> widths = new LinkedHashMap<>();
    NodeList groups = doc.getElementsByTagName("g");
    for (int i = 0; i < groups.getLength(); i++) {
      Element g = (Element) groups.item(i);
      String title = g.getElementsByTagName("title").item(0).getTextContent();
      Element rect = (Element) g.getElementsByTagName("rect").item(0);
      widths.put(title, Double.parseDouble(rect.getAttribute("width")));
    }
    return widths;
  }
}
