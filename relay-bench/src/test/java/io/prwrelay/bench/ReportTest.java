package io.prwrelay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The markdown BENCHMARKS.md takes from {@link Report}. */
class ReportTest {
  @Test
  void aTableIsItsHeadingAndRowsWithNoBlankLineInside() {
    List<Report.Row> rows =
        List.of(
            new Report.Row(
                "real.data", 1_690_000, 10_000, "baseline", 30_019.94, 5372.6, 1.8e7, Double.NaN),
            new Report.Row("real.data", 1_690_000, 10_000, "route", 1747.4, 162.8, 1820, 17.18),
            new Report.Row(
                "real.data", 1_690_000, 10_000, "scan", 1342.5, 159.4, Double.NaN, Double.NaN));
    assertEquals(
        String.join(
            "\n",
            "",
            "### Route step",
            "",
            "| payload | benchmark | µs/op | ± | MB/s | series/s | B/op | vs baseline |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
            "| real.data (1.69 MB, 10000 series) | baseline | 30019.9 | 5372.6 | 56 | 0.33M | 18000000 |  |",
            "| real.data (1.69 MB, 10000 series) | route | 1747.4 | 162.8 | 967 | 5.72M | 1820 | 17.2× |",
            "| real.data (1.69 MB, 10000 series) | scan | 1342.5 | 159.4 | 1259 | 7.45M | ? |  |",
            ""),
        Report.table("Route step", rows));
  }
}
