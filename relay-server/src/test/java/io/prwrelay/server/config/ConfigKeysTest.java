package io.prwrelay.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The catalogue assembled from the sections: every key declared once, and listed once. */
class ConfigKeysTest {
  /** The sections that declare keys. */
  private static final List<Class<?>> SECTIONS =
      List.of(
          ServerConfig.class,
          InboundAuthConfig.class,
          IngressTlsConfig.class,
          DownstreamConfig.class,
          DeliveryConfig.class,
          TenantConfig.class,
          LimitsConfig.class,
          MetricsConfig.class,
          InsightConfig.class,
          LogConfig.class);

  @Test
  void everyNamedKeyIsListedOnceAndEveryListedKeyIsNamed() throws Exception {
    Set<ConfigKey> named = new LinkedHashSet<>();
    for (Class<?> section : SECTIONS) {
      for (Field f : section.getFields()) {
        if (Modifier.isStatic(f.getModifiers()) && f.getType() == ConfigKey.class) {
          named.add((ConfigKey) f.get(null));
        }
      }
    }
    Set<String> names = new HashSet<>();
    for (ConfigKey k : ConfigKeys.ALL) {
      assertEquals(true, names.add(k.name()), "listed twice: " + k.name());
    }
    assertEquals(named, new LinkedHashSet<>(ConfigKeys.ALL));
  }
}
