package io.prwrelay.testing;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.str;
import static io.prwrelay.testing.RawProto.varint;
import static io.prwrelay.testing.RawProto.varintField;

import java.io.ByteArrayOutputStream;

/**
 * PRW 2.0 fields built by hand, for requests the generated classes would never write: malformed
 * ones, unpacked refs, symbols after series, unknown fields. Field numbers are spelled out here on
 * purpose: the tests check the relay's descriptors against the specification, not against
 * themselves.
 */
public final class V2RawProto {
  private V2RawProto() {}

  /** {@code Request.symbols} (4). */
  public static byte[] symbol(String s) {
    return str(4, s);
  }

  /** The symbols fields of a table, in order. */
  public static byte[] symbols(String... table) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (String s : table) {
      out.writeBytes(symbol(s));
    }
    return out.toByteArray();
  }

  /** {@code Request.timeseries} (5) holding {@code parts}. */
  public static byte[] series(byte[]... parts) {
    return len(5, parts);
  }

  /** {@code labels_refs} (1), packed. */
  public static byte[] refs(long... refs) {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    for (long r : refs) {
      body.writeBytes(varint(r));
    }
    return len(1, body.toByteArray());
  }

  /** {@code labels_refs} (1), unpacked: one varint field per ref. */
  public static byte[] unpackedRefs(long... refs) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (long r : refs) {
      out.writeBytes(varintField(1, r));
    }
    return out.toByteArray();
  }

  /** {@code TimeSeries.samples} (2): the same layout as PRW 1.0. */
  public static byte[] sample(double value, long timestamp) {
    return RawProto.sample(value, timestamp);
  }

  /** {@code TimeSeries.histograms} (3) holding raw histogram fields. */
  public static byte[] histogram(byte[]... parts) {
    return len(3, parts);
  }

  /** {@code TimeSeries.exemplars} (4) holding {@code parts}. */
  public static byte[] exemplar(byte[]... parts) {
    return len(4, parts);
  }

  /**
   * {@code TimeSeries.metadata} (5) with {@code type} (1), {@code help_ref} (3), {@code unit_ref}
   * (4).
   */
  public static byte[] metadata(int type, long helpRef, long unitRef) {
    return len(5, varintField(1, type), varintField(3, helpRef), varintField(4, unitRef));
  }

  /** {@code TimeSeries.created_timestamp} (6), unknown to the relay. */
  public static byte[] createdTimestamp(long ms) {
    return varintField(6, ms);
  }

  /** A whole request: the symbols table first, then the series. */
  public static byte[] request(String[] table, byte[]... series) {
    return cat(symbols(table), cat(series));
  }

  /**
   * The shape of a request that asks for a much larger output: {@code series} series {@code
   * up{blob=<symbol>, service_id="t<i % tenants>"}}, each with one sample, all referencing the one
   * {@code symbol}. PRW 1.0 copies it into every series; one PRW 2.0 request per tenant copies it
   * into every tenant's symbols table.
   */
  public static byte[] symbolInEverySeries(String symbol, int series, int tenants) {
    String[] table = new String[6 + tenants];
    String[] head = {"", "__name__", "up", "blob", symbol, "service_id"};
    System.arraycopy(head, 0, table, 0, head.length);
    for (int t = 0; t < tenants; t++) {
      table[6 + t] = "t" + t;
    }
    byte[][] all = new byte[series][];
    for (int i = 0; i < series; i++) {
      all[i] = series(refs(1, 2, 3, 4, 5, 6 + i % tenants), sample(i, 1_700_000_000_000L + i));
    }
    return request(table, all);
  }
}
