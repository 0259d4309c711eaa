package io.prwrelay.server;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.config.ConfigKey;
import io.prwrelay.server.config.ConfigKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README documents every configuration key with its environment variable and default. */
class ReadmeTest {
  @Test
  void readmeListsEveryKeyWithItsDefault() throws Exception {
    String readme = Files.readString(Path.of("..", "README.md"));
    for (ConfigKey k : ConfigKeys.ALL) {
      String shownDefault =
          k.secret()
              ? "(none)"
              : k.defaultValue().isEmpty() ? "(empty)" : "`" + k.defaultValue() + "`";
      String row =
          "| `" + k.name() + "` | `" + k.environmentVariable() + "` | " + shownDefault + " |";
      assertTrue(readme.contains(row), "README row for " + k.name() + ": " + row);
    }
  }
}
