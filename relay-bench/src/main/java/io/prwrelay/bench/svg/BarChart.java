package io.prwrelay.bench.svg;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A bar chart as a static SVG: one bar per category, its value written above it, a y axis from 0
 * with round gridlines. The load generator's tenant sweep draws series/s against tenants per
 * request with it.
 */
public final class BarChart {
  /**
   * One bar.
   *
   * @param label under the bar
   * @param note a second line under the label (empty for none)
   * @param value the bar's height
   */
  public record Bar(String label, String note, double value) {}

  static final int WIDTH = 720;
  static final int HEIGHT = 400;
  private static final int LEFT = 90;
  private static final int RIGHT = 20;
  private static final int TOP = 60;
  private static final int BOTTOM = 80;

  private final String title;
  private final String subtitle;
  private final String xAxis;
  private final String yAxis;
  private final List<Bar> bars = new ArrayList<>();

  public BarChart(String title, String subtitle, String xAxis, String yAxis) {
    this.title = title;
    this.subtitle = subtitle;
    this.xAxis = xAxis;
    this.yAxis = yAxis;
  }

  public BarChart add(Bar bar) {
    bars.add(bar);
    return this;
  }

  /** The SVG document. */
  public String toSvg() {
    double max = bars.stream().mapToDouble(Bar::value).max().orElse(0);
    double step = step(max);
    double top = Math.max(step, Math.ceil(max / step) * step);
    int plotW = WIDTH - LEFT - RIGHT;
    int plotH = HEIGHT - TOP - BOTTOM;
    int baseY = TOP + plotH;
    StringBuilder svg = new StringBuilder(8 * 1024);
    svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
        .append(WIDTH)
        .append("\" height=\"")
        .append(HEIGHT)
        .append("\" viewBox=\"0 0 ")
        .append(WIDTH)
        .append(' ')
        .append(HEIGHT)
        .append("\" font-family=\"sans-serif\" font-size=\"12\">\n")
        .append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    text(svg, WIDTH / 2.0, 22, "middle", 16, title);
    text(svg, WIDTH / 2.0, 42, "middle", 12, subtitle);
    for (double v = 0; v <= top + step / 2; v += step) {
      double y = baseY - v / top * plotH;
      svg.append("<line x1=\"")
          .append(LEFT)
          .append("\" x2=\"")
          .append(WIDTH - RIGHT)
          .append("\" y1=\"")
          .append(Svg.num(y))
          .append("\" y2=\"")
          .append(Svg.num(y))
          .append("\" stroke=\"")
          .append(v == 0 ? "#333" : "#ddd")
          .append("\"/>\n");
      text(svg, LEFT - 6, y + 4, "end", 12, grouped(v));
    }
    double slot = bars.isEmpty() ? plotW : (double) plotW / bars.size();
    for (int i = 0; i < bars.size(); i++) {
      Bar b = bars.get(i);
      double h = top == 0 ? 0 : b.value() / top * plotH;
      double x = LEFT + i * slot + slot * 0.2;
      double w = slot * 0.6;
      svg.append("<rect x=\"")
          .append(Svg.num(x))
          .append("\" y=\"")
          .append(Svg.num(baseY - h))
          .append("\" width=\"")
          .append(Svg.num(w))
          .append("\" height=\"")
          .append(Svg.num(h))
          .append("\" fill=\"#4e79a7\"><title>")
          .append(Svg.escape(b.label() + ": " + grouped(b.value())))
          .append("</title></rect>\n");
      text(svg, x + w / 2, baseY - h - 6, "middle", 12, grouped(b.value()));
      text(svg, x + w / 2, baseY + 18, "middle", 12, b.label());
      if (!b.note().isEmpty()) {
        text(svg, x + w / 2, baseY + 34, "middle", 11, b.note());
      }
    }
    text(svg, LEFT + plotW / 2.0, HEIGHT - 14, "middle", 13, xAxis);
    svg.append("<text transform=\"translate(18 ")
        .append(TOP + plotH / 2)
        .append(") rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">")
        .append(Svg.escape(yAxis))
        .append("</text>\n");
    return svg.append("</svg>\n").toString();
  }

  /** A round gridline step giving four to ten lines up to {@code max}. */
  static double step(double max) {
    if (max <= 0) {
      return 1;
    }
    double magnitude = Math.pow(10, Math.floor(Math.log10(max)));
    for (double f : new double[] {0.1, 0.2, 0.25, 0.5, 1, 2}) {
      if (max / (f * magnitude) <= 10) {
        return f * magnitude;
      }
    }
    return 2 * magnitude;
  }

  private static String grouped(double v) {
    return String.format(Locale.ROOT, "%,.0f", v);
  }

  private static void text(
      StringBuilder svg, double x, double y, String anchor, int size, String text) {
    svg.append("<text x=\"")
        .append(Svg.num(x))
        .append("\" y=\"")
        .append(Svg.num(y))
        .append("\" text-anchor=\"")
        .append(anchor)
        .append("\" font-size=\"")
        .append(size)
        .append("\">")
        .append(Svg.escape(text))
        .append("</text>\n");
  }
}
