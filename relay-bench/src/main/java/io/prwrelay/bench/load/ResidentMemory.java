package io.prwrelay.bench.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A process's resident memory as Linux reports it in {@code /proc/PID/status}: the peak ({@code
 * VmHWM}, the most the process ever had in RAM) and the current size ({@code VmRSS}). What the
 * kernel charges the process, heap, direct buffers, metaspace, code and thread stacks together.
 *
 * @param peakBytes {@code VmHWM}
 * @param currentBytes {@code VmRSS}
 */
public record ResidentMemory(long peakBytes, long currentBytes) {
  /** Reads the process's status; empty when it has exited or the platform has no {@code /proc}. */
  static Optional<ResidentMemory> of(long pid) {
    try {
      return parse(
          Files.readString(Path.of("/proc", Long.toString(pid), "status"), StandardCharsets.UTF_8));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** Reads both fields of a status file's text; empty when one is missing. */
  static Optional<ResidentMemory> parse(String status) {
    OptionalLong peak = kilobytes(status, "VmHWM:");
    OptionalLong current = kilobytes(status, "VmRSS:");
    return peak.isPresent() && current.isPresent()
        ? Optional.of(new ResidentMemory(peak.getAsLong() * 1024, current.getAsLong() * 1024))
        : Optional.empty();
  }

  /** The value of a line {@code "<field> 123 kB"}. */
  private static OptionalLong kilobytes(String status, String field) {
    for (String line : status.split("\n")) {
      if (line.startsWith(field)) {
        String[] parts = line.substring(field.length()).trim().split("\\s+");
        try {
          return OptionalLong.of(Long.parseLong(parts[0]));
        } catch (NumberFormatException e) {
          return OptionalLong.empty();
        }
      }
    }
    return OptionalLong.empty();
  }
}
