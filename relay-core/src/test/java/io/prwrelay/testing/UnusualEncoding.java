package io.prwrelay.testing;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.str;
import static io.prwrelay.testing.RawProto.tag;
import static io.prwrelay.testing.RawProto.varint;
import static io.prwrelay.testing.RawProto.varintField;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Re-encodes a PRW 1.0 request the ways protobuf allows but senders rarely write, so that a
 * reader's fast path hands over to its general path at every kind of field: length prefixes padded
 * with a redundant varint byte (series, labels, label names), labels whose value comes before the
 * name or is written explicitly empty, unknown fields inside labels and between a series' fields,
 * and samples, exemplars and histograms before or between the labels. The labels keep their order,
 * so the tenant label lands wherever the generator put it (last, too). Every encoding parses, with
 * the generated classes, to the same series (unknown fields included): the oracle answer for the
 * bytes is {@code WriteRequest.parseFrom(encode(request))}. Deterministic for a {@link Random}.
 */
public final class UnusualEncoding {
  private final Random random;

  public UnusualEncoding(Random random) {
    this.random = random;
  }

  /** The request with each series (and label) encoded one of the ways above, metadata as is. */
  public byte[] encode(WriteRequest request) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (TimeSeries ts : request.getTimeseriesList()) {
      out.writeBytes(series(ts));
    }
    for (MetricMetadata m : request.getMetadataList()) {
      out.writeBytes(len(3, m.toByteArray()));
    }
    return out.toByteArray();
  }

  private byte[] series(TimeSeries ts) {
    List<byte[]> labels = new ArrayList<>();
    for (Label l : ts.getLabelsList()) {
      labels.add(label(l));
    }
    // The other fields keep their order per field, as repeated fields must.
    List<byte[]> others = new ArrayList<>();
    ts.getSamplesList().forEach(s -> others.add(len(2, s.toByteArray())));
    ts.getExemplarsList().forEach(e -> others.add(len(3, e.toByteArray())));
    ts.getHistogramsList().forEach(h -> others.add(len(4, h.toByteArray())));
    List<byte[]> fields = new ArrayList<>();
    switch (random.nextInt(4)) {
      case 0: // as protobuf writes it
        fields.addAll(labels);
        fields.addAll(others);
        break;
      case 1: // everything else first
        fields.addAll(others);
        fields.addAll(labels);
        break;
      default: // interleaved
        int l = 0;
        int o = 0;
        while (l < labels.size() || o < others.size()) {
          boolean label = o == others.size() || (l < labels.size() && random.nextBoolean());
          fields.add(label ? labels.get(l++) : others.get(o++));
        }
    }
    if (random.nextInt(3) == 0) {
      // Unknown fields anywhere, mostly after the labels.
      int n = 1 + random.nextInt(3);
      for (int i = 0; i < n; i++) {
        byte[] unknown = random.nextBoolean() ? varintField(9, random.nextInt(1000)) : str(15, "u");
        int at =
            random.nextInt(4) == 0
                ? random.nextInt(fields.size() + 1)
                : fields.size() - random.nextInt(Math.min(2, fields.size()) + 1);
        fields.add(at, unknown);
      }
    }
    return field(1, cat(fields.toArray(new byte[0][])), random.nextInt(5) == 0);
  }

  private byte[] label(Label l) {
    byte[] name = field(1, bytes(l.getName()), random.nextInt(8) == 0);
    byte[] value =
        l.getValue().isEmpty() && random.nextBoolean()
            ? new byte[0]
            : field(2, bytes(l.getValue()), false);
    byte[] body;
    switch (random.nextInt(8)) {
      case 0:
        body = cat(value, name);
        break;
      case 1:
        body = cat(name, varintField(7, 1), value);
        break;
      default:
        body = cat(name, value);
    }
    return field(1, body, random.nextInt(8) == 0);
  }

  /** A length-delimited field, its length varint padded with one redundant byte when asked. */
  private static byte[] field(int number, byte[] body, boolean padded) {
    byte[] length = varint(body.length);
    if (padded) {
      length[length.length - 1] |= (byte) 0x80;
      length = cat(length, new byte[] {0});
    }
    return cat(tag(number, 2), length, body);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }
}
