package io.prwrelay.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The catalogue assembled from its groups: every key named once, and listed once. */
class ConfigKeysTest {
  @Test
  void everyNamedKeyIsListedOnceAndEveryListedKeyIsNamed() throws Exception {
    Set<ConfigKey> named = new LinkedHashSet<>();
    for (Field f : ConfigKeys.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == ConfigKey.class) {
        named.add((ConfigKey) f.get(null));
      }
    }
    Set<String> names = new HashSet<>();
    for (ConfigKey k : ConfigKeys.ALL) {
      assertEquals(true, names.add(k.name()), "listed twice: " + k.name());
    }
    assertEquals(named, new LinkedHashSet<>(ConfigKeys.ALL));
  }
}
