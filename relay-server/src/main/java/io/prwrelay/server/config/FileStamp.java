package io.prwrelay.server.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The modification time and size of a set of files, to tell cheaply whether any of them changed
 * since they were last read. A file that cannot be looked at has its own stamp, so that its
 * reappearance is a change too. Used by every file the relay re-reads while running: the inbound
 * credentials, the ingress certificates and the per-tenant limits' overrides.
 */
public record FileStamp(List<Long> stamps) {
  public static FileStamp of(List<Path> files) {
    List<Long> stamps = new ArrayList<>(files.size() * 2);
    for (Path p : files) {
      try {
        BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
        stamps.add(a.lastModifiedTime().to(TimeUnit.NANOSECONDS));
        stamps.add(a.size());
      } catch (IOException e) {
        stamps.add(-1L);
        stamps.add(-1L);
      }
    }
    return new FileStamp(List.copyOf(stamps));
  }
}
