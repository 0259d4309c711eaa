package io.prwrelay.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The project's documents point where they say: every relative link of every Markdown file
 * (README.md, BENCHMARKS.md, docs/) reaches a file, every {@code #anchor} a heading of its target,
 * and every section the sources cite ({@code docs/ARCHITECTURE.md#lanes}, {@code (BENCHMARKS.md,
 * "Route step")}) exists. Anchors are GitHub's: the heading's text in lower case, punctuation left
 * out, spaces as hyphens, {@code -1}, {@code -2} … for repeats.
 */
class DocsLinksTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  /** {@code [text](target)} and {@code ![alt](target)}, with an optional title. */
  private static final Pattern LINK =
      Pattern.compile("!?\\[(?:[^\\]\\[]|\\[[^\\]]*\\])*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");

  private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");

  /** Bold words opening a paragraph: {@code **Direct delivery** (queue mode).}. */
  private static final Pattern BOLD_LEAD = Pattern.compile("(?m)^\\*\\*([^*\\n]+?)\\.?\\*\\*");

  /** A Markdown file and anchor named in a source file: {@code docs/ARCHITECTURE.md#lanes}. */
  private static final Pattern ANCHOR_CITATION =
      Pattern.compile("([A-Za-z0-9_./-]+\\.md)#([A-Za-z0-9_-]+)");

  /**
   * A section named by its title: {@code (README, "Fuzzing")}, {@code BENCHMARKS.md "Route step"},
   * {@code (BENCHMARKS.md, *Resident memory*)}.
   */
  private static final Pattern SECTION_CITATION =
      Pattern.compile(
          "\\b(README(?:\\.md)?|BENCHMARKS\\.md|docs/[A-Za-z0-9_.-]+\\.md),? \\(?"
              + "(?:\"([^\"]{2,80})\"|\\*([^*]{2,80})\\*)");

  @Test
  void everyRelativeLinkAndAnchorInTheMarkdownResolves() throws IOException {
    List<String> broken = new ArrayList<>();
    for (Path md : markdownFiles()) {
      String text = withoutCode(Files.readString(md));
      Matcher m = LINK.matcher(text);
      while (m.find()) {
        String target = m.group(1);
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
          continue; // http:, https:, mailto:
        }
        String problem = resolve(md, target);
        if (problem != null) {
          broken.add(ROOT.relativize(md) + ": " + target + " (" + problem + ")");
        }
      }
    }
    assertEquals(List.of(), broken, "links that do not resolve");
  }

  @Test
  void everySectionTheSourcesCiteExists() throws IOException {
    List<String> broken = new ArrayList<>();
    for (Path file : citingFiles()) {
      String text = Files.readString(file);
      boolean markdown = file.toString().endsWith(".md");
      // A Markdown file's links are the other test's; its citations by title are checked here.
      Matcher a = ANCHOR_CITATION.matcher(markdown ? "" : text);
      while (a.find()) {
        String problem = resolve(ROOT.resolve("x"), a.group(1) + "#" + a.group(2));
        if (problem != null) {
          broken.add(ROOT.relativize(file) + ": " + a.group() + " (" + problem + ")");
        }
      }
      Matcher s =
          SECTION_CITATION.matcher(
              markdown ? text.replaceAll("\\s*\\n\\s*", " ") : flattened(text));
      while (s.find()) {
        String doc = s.group(1).equals("README") ? "README.md" : s.group(1);
        String title = s.group(2) != null ? s.group(2) : s.group(3);
        Path target = ROOT.resolve(doc);
        if (!Files.isRegularFile(target)) {
          broken.add(ROOT.relativize(file) + ": " + doc + " (no such file)");
        } else if (titles(target).stream().noneMatch(t -> t.startsWith(title))) {
          broken.add(ROOT.relativize(file) + ": " + doc + " \"" + title + "\" (no such section)");
        }
      }
    }
    assertEquals(List.of(), broken, "cited sections that do not exist");
  }

  @Test
  void anchorsFollowGitHubsRules() {
    assertEquals("remote-write-20", anchor("Remote Write 2.0"));
    assertEquals(
        "maximum-rate-4-connections---rate-0", anchor("Maximum rate (4 connections, `--rate 0`)"));
    assertEquals(
        "seriess-against-tenants-per-request", anchor("Series/s against tenants per request"));
    assertEquals(
        "route-step-decompressed-bytes--per-tenant-batches",
        anchor("Route step: decompressed bytes → per-tenant batches"));
    assertEquals("migrating-from-cortex-tenant", anchor("[Migrating](x.md) from cortex-tenant"));
  }

  /** Why {@code target}, linked from {@code from}, does not resolve, or {@code null}. */
  private static String resolve(Path from, String target) throws IOException {
    int hash = target.indexOf('#');
    String path = hash < 0 ? target : target.substring(0, hash);
    String fragment = hash < 0 ? null : target.substring(hash + 1);
    Path file = path.isEmpty() ? from : from.getParent().resolve(path).normalize();
    if (!file.startsWith(ROOT)) {
      return "outside the repository";
    }
    if (!Files.exists(file)) {
      return "no such file";
    }
    if (fragment == null || fragment.isEmpty()) {
      return null;
    }
    if (!file.toString().endsWith(".md")) {
      return "an anchor into a file that is not Markdown";
    }
    return anchors(file).contains(fragment) ? null : "no heading with this anchor";
  }

  /** The anchors of a Markdown file's headings, repeats numbered as GitHub numbers them. */
  private static Set<String> anchors(Path md) throws IOException {
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    for (String title : headings(md)) {
      String a = anchor(title);
      int n = seen.merge(a, 1, Integer::sum) - 1;
      anchors.add(n == 0 ? a : a + "-" + n);
    }
    return anchors;
  }

  /** The text of every heading, outside code blocks, without code marks. */
  private static List<String> headings(Path md) throws IOException {
    List<String> titles = new ArrayList<>();
    for (String line : withoutCode(Files.readString(md)).split("\n", -1)) {
      Matcher m = HEADING.matcher(line);
      if (m.matches()) {
        titles.add(m.group(2).replace("`", ""));
      }
    }
    return titles;
  }

  /**
   * What a section may be cited by: its headings, and the bold words that open a paragraph ({@code
   * **The ledger.** When a request ...}), which the README cites as sections too.
   */
  private static List<String> titles(Path md) throws IOException {
    List<String> titles = new ArrayList<>(headings(md));
    Matcher m = BOLD_LEAD.matcher(Files.readString(md));
    while (m.find()) {
      titles.add(m.group(1).replace("`", ""));
    }
    return titles;
  }

  /** GitHub's anchor of a heading. */
  static String anchor(String title) {
    String text =
        title.replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replace("`", "").replace("*", "");
    StringBuilder sb = new StringBuilder();
    text.toLowerCase(Locale.ROOT)
        .codePoints()
        .forEach(
            c -> {
              if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                sb.appendCodePoint(c);
              } else if (c == ' ') {
                sb.append('-');
              }
            });
    return sb.toString();
  }

  /** The text with fenced code blocks blanked and inline code spans emptied. */
  private static String withoutCode(String text) {
    StringBuilder out = new StringBuilder();
    boolean fenced = false;
    for (String line : text.split("\n", -1)) {
      if (line.strip().startsWith("```") || line.strip().startsWith("~~~")) {
        fenced = !fenced;
        out.append('\n');
        continue;
      }
      out.append(fenced ? "" : line.replaceAll("``[^`]*``|`[^`]*`", "``")).append('\n');
    }
    return out.toString();
  }

  /** Comment continuations and line breaks as single spaces, so a title may span lines. */
  private static String flattened(String text) {
    return text.replaceAll("\\s*\\n\\s*(?:\\*(?!/)|//|#)?\\s*", " ");
  }

  private static List<Path> markdownFiles() throws IOException {
    return files(p -> p.toString().endsWith(".md"));
  }

  /** Sources, scripts and documents that may cite a section. */
  private static List<Path> citingFiles() throws IOException {
    return files(
        p -> {
          String name = p.getFileName().toString();
          return (name.endsWith(".java") && !name.equals("DocsLinksTest.java"))
              || name.endsWith(".md")
              || name.endsWith(".sh")
              || name.endsWith(".yml")
              || name.endsWith(".yaml");
        });
  }

  private static List<Path> files(Predicate<Path> wanted) throws IOException {
    try (Stream<Path> all = Files.walk(ROOT)) {
      return all.filter(Files::isRegularFile)
          .filter(p -> !skipped(ROOT.relativize(p)))
          .filter(wanted)
          .sorted()
          .toList();
    }
  }

  /** Build output, version control and fuzzing corpora. */
  private static boolean skipped(Path relative) {
    for (Path part : relative) {
      String s = part.toString();
      if (s.equals("target")
          || s.startsWith(".")
          || s.equals("node_modules")
          || s.equals("resources")) {
        return true;
      }
    }
    return false;
  }
}
