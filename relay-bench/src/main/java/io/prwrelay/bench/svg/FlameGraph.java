package io.prwrelay.bench.svg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A flame graph as a static SVG from collapsed stacks (one line per distinct stack: frames from the
 * root, separated by {@code ;}, then a space and the sample count), the format async-profiler
 * writes with {@code collapsed}. Each frame is a box whose width is its share of the samples; its
 * callees stand on it, sorted by name, so the same input always gives the same file. Hovering a box
 * shows its name, samples and share (an SVG {@code <title>}); names are escaped.
 *
 * <pre>
 * java -cp relay-bench/target/benchmarks.jar io.prwrelay.bench.svg.FlameGraph IN.collapsed OUT.svg \
 *     [--title TEXT] [--include REGEX] [--root REGEX] [--unit NAME]
 * </pre>
 *
 * {@code --include} keeps only stacks with a frame matching the pattern; {@code --root} then cuts
 * each stack to start at its first frame matching the pattern, so the graph shows that method and
 * what it calls (stacks without such a frame are dropped). {@code --unit} names what the counts are
 * ({@code samples} by default; {@code bytes} for an allocation profile with {@code total}).
 */
public final class FlameGraph {
  /** Width of the image in pixels. */
  static final int WIDTH = 1200;

  static final int FRAME_HEIGHT = 16;
  private static final int PAD = 10;
  private static final int TOP = 48;
  private static final double CHAR_WIDTH = 7.0;

  /** Boxes narrower than this are left out, with their callees. */
  private static final double MIN_WIDTH = 0.3;

  /** One frame in the call tree: its samples, those of its callees included. */
  private static final class Node {
    final String name;
    final Map<String, Node> children = new TreeMap<>();
    long samples;

    Node(String name) {
      this.name = name;
    }

    int depth() {
      int d = 0;
      for (Node c : children.values()) {
        d = Math.max(d, c.depth());
      }
      return d + 1;
    }
  }

  private final Node root = new Node("all");

  /** Adds {@code samples} for one stack, given from the root. */
  public FlameGraph add(List<String> frames, long samples) {
    if (samples <= 0 || frames.isEmpty()) {
      return this;
    }
    Node n = root;
    n.samples += samples;
    for (String f : frames) {
      n = n.children.computeIfAbsent(f, Node::new);
      n.samples += samples;
    }
    return this;
  }

  /** Total samples. */
  public long samples() {
    return root.samples;
  }

  /**
   * Reads collapsed stacks.
   *
   * @param include keep only stacks that have a frame matching it; {@code null} for all
   * @param rootFrame cut each stack to start at its first frame matching it (and drop stacks
   *     without one); {@code null} to keep whole stacks
   */
  public static FlameGraph parse(Stream<String> lines, Pattern include, Pattern rootFrame) {
    FlameGraph graph = new FlameGraph();
    lines.forEach(
        line -> {
          int space = line.lastIndexOf(' ');
          if (space <= 0) {
            return;
          }
          long samples;
          try {
            samples = Long.parseLong(line.substring(space + 1).trim());
          } catch (NumberFormatException e) {
            return;
          }
          List<String> frames = List.of(line.substring(0, space).split(";"));
          if (include != null && frames.stream().noneMatch(f -> include.matcher(f).find())) {
            return;
          }
          if (rootFrame != null) {
            int start = 0;
            while (start < frames.size() && !rootFrame.matcher(frames.get(start)).find()) {
              start++;
            }
            frames = frames.subList(start, frames.size());
          }
          graph.add(frames, samples);
        });
    return graph;
  }

  /** The SVG document, counts named samples. */
  public String toSvg(String title) {
    return toSvg(title, "samples");
  }

  /** The SVG document, counts named {@code unit}. */
  public String toSvg(String title, String unit) {
    int depth = root.depth();
    int height = TOP + depth * FRAME_HEIGHT + PAD;
    StringBuilder svg = new StringBuilder(64 * 1024);
    svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
        .append(WIDTH)
        .append("\" height=\"")
        .append(height)
        .append("\" viewBox=\"0 0 ")
        .append(WIDTH)
        .append(' ')
        .append(height)
        .append("\" font-family=\"monospace\" font-size=\"12\">\n")
        .append("<rect width=\"100%\" height=\"100%\" fill=\"#f8f8f8\"/>\n")
        .append("<text x=\"")
        .append(WIDTH / 2)
        .append("\" y=\"20\" text-anchor=\"middle\" font-size=\"16\">")
        .append(Svg.escape(title))
        .append("</text>\n")
        .append("<text x=\"")
        .append(WIDTH / 2)
        .append("\" y=\"38\" text-anchor=\"middle\" fill=\"#555\">")
        .append(
            Svg.escape(
                String.format(
                    Locale.ROOT,
                    "%,d %s; a box's width is its share, callees stand on their caller;"
                        + " hover for details",
                    root.samples,
                    unit)))
        .append("</text>\n");
    if (root.samples > 0) {
      double scale = (WIDTH - 2.0 * PAD) / root.samples;
      frame(svg, root, PAD, height - PAD - FRAME_HEIGHT, scale, unit);
    }
    return svg.append("</svg>\n").toString();
  }

  private void frame(StringBuilder svg, Node node, double x, int y, double scale, String unit) {
    double w = node.samples * scale;
    String label =
        String.format(
            Locale.ROOT,
            "%s (%,d %s, %.2f%%)",
            node.name,
            node.samples,
            unit,
            100.0 * node.samples / root.samples);
    svg.append("<g><title>")
        .append(Svg.escape(label))
        .append("</title><rect x=\"")
        .append(Svg.num(x))
        .append("\" y=\"")
        .append(y)
        .append("\" width=\"")
        .append(Svg.num(Math.max(0, w - 0.5)))
        .append("\" height=\"")
        .append(FRAME_HEIGHT - 1)
        .append("\" fill=\"")
        .append(color(node.name))
        .append("\"/>");
    int fits = (int) ((w - 6) / CHAR_WIDTH);
    if (fits >= 3) {
      String text =
          node.name.length() <= fits ? node.name : node.name.substring(0, fits - 2) + "..";
      svg.append("<text x=\"")
          .append(Svg.num(x + 3))
          .append("\" y=\"")
          .append(y + FRAME_HEIGHT - 4)
          .append("\">")
          .append(Svg.escape(text))
          .append("</text>");
    }
    svg.append("</g>\n");
    double cx = x;
    for (Node c : node.children.values()) {
      if (c.samples * scale >= MIN_WIDTH) {
        frame(svg, c, cx, y - FRAME_HEIGHT, scale, unit);
      }
      cx += c.samples * scale;
    }
  }

  /**
   * A fill that depends only on the name: green for Java frames, blue for JIT-inlined or compiled
   * stubs, orange for the kernel, red for native code, with a shade from the name's hash.
   */
  static String color(String name) {
    int h = Math.floorMod(name.hashCode(), 64);
    if (name.endsWith("_[k]")) {
      return rgb(230, 140 + h, 40);
    }
    if (name.endsWith("_[j]") || name.endsWith("_[i]")) {
      return rgb(80 + h, 160 + h, 220);
    }
    if (name.contains(".") || name.contains("/")) {
      return rgb(60 + h, 180 + h / 2, 60);
    }
    return rgb(220, 80 + h, 70);
  }

  private static String rgb(int r, int g, int b) {
    return "rgb(" + r + "," + g + "," + b + ")";
  }

  /** Writes the SVG of {@code args[0]} (collapsed stacks) to {@code args[1]}; see the class. */
  public static void main(String[] args) throws IOException {
    List<String> rest = new ArrayList<>(List.of(args));
    String title = option(rest, "--title");
    String include = option(rest, "--include");
    String rootFrame = option(rest, "--root");
    String unit = option(rest, "--unit");
    if (rest.size() != 2) {
      System.err.println(
          "usage: FlameGraph IN.collapsed OUT.svg [--title TEXT] [--include REGEX] [--root REGEX]"
              + " [--unit NAME]");
      System.exit(2);
    }
    Path in = Path.of(rest.get(0));
    Path out = Path.of(rest.get(1));
    FlameGraph graph;
    try (Stream<String> lines = Files.lines(in, StandardCharsets.UTF_8)) {
      graph =
          parse(
              lines,
              include == null ? null : Pattern.compile(include),
              rootFrame == null ? null : Pattern.compile(rootFrame));
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
    Files.writeString(
        out,
        graph.toSvg(
            title == null ? in.getFileName().toString() : title, unit == null ? "samples" : unit),
        StandardCharsets.UTF_8);
    System.out.printf(
        Locale.ROOT, "%s: %,d %s%n", out, graph.samples(), unit == null ? "samples" : unit);
  }

  /** Removes {@code --name value} from {@code args} and returns the value, or {@code null}. */
  static String option(List<String> args, String name) {
    int i = args.indexOf(name);
    if (i < 0 || i + 1 >= args.size()) {
      return null;
    }
    String value = args.get(i + 1);
    args.subList(i, i + 2).clear();
    return value;
  }
}
