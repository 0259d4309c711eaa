package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.demo.Demo;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code --demo} as README.md documents it: a live table, then exit 0 when every tenant matched.
 */
class DemoTest {
  @Test
  void everyTenantReceivesExactlyItsSeriesAndTheDemoExitsZero() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int code = Demo.run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);

    assertEquals(0, code, out);
    assertTrue(out.contains("tenant       series/s        bytes downstream status"), out);
    for (String tenant : new String[] {"anonymous", "checkout", "frontend", "payments", "search"}) {
      Matcher row = Pattern.compile("(?m)^" + tenant + " +\\d+ +\\d+ 200$").matcher(out);
      assertTrue(row.find(), tenant + " row in\n" + out);
      Matcher total =
          Pattern.compile(
                  "(?m)^" + tenant + " +sent +(\\d+) series, downstream received +(\\d+) ok$")
              .matcher(out);
      assertTrue(total.find(), tenant + " total in\n" + out);
      assertEquals(total.group(1), total.group(2));
    }
    assertTrue(out.contains("relay answers to the sender: {204="), out);
    assertTrue(out.contains("demo OK: every tenant received exactly its series"), out);
  }
}
