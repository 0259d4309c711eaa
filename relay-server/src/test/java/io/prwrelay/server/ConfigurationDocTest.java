package io.prwrelay.server;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.config.ConfigKey;
import io.prwrelay.server.config.ConfigKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md documents every configuration key with its environment variable and
 * default.
 */
class ConfigurationDocTest {
  @Test
  void configurationDocListsEveryKeyWithItsDefault() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "configuration.md"));
    for (ConfigKey k : ConfigKeys.ALL) {
      String shownDefault =
          k.secret()
              ? "(none)"
              : k.defaultValue().isEmpty() ? "(empty)" : "`" + k.defaultValue() + "`";
      String row =
          "| `" + k.name() + "` | `" + k.environmentVariable() + "` | " + shownDefault + " |";
      assertTrue(doc.contains(row), "docs/configuration.md row for " + k.name() + ": " + row);
    }
  }
}
