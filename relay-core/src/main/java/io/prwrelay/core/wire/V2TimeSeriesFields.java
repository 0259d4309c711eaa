package io.prwrelay.core.wire;

/**
 * Field layout of PRW 2.0 {@code io.prometheus.write.v2.TimeSeries}.
 *
 * <pre>
 * TimeSeries
 *   1  labels_refs        repeated uint32     (packed: one length-delimited field of varints;
 *                                              or unpacked: one varint field per ref)
 *   2  samples            repeated Sample     (length-delimited; same layout as PRW 1.0 Sample)
 *   3  histograms         repeated Histogram  (length-delimited; same layout as PRW 1.0 Histogram)
 *   4  exemplars          repeated Exemplar   (length-delimited)
 *   5  metadata           Metadata            (length-delimited)
 *   6  created_timestamp  int64               (senders before Prometheus 3.10; unknown to the relay)
 * </pre>
 *
 * {@code labels_refs} holds (name ref, value ref) pairs. Note that samples, histograms and
 * exemplars are numbered differently from PRW 1.0 {@link TimeSeriesFields}.
 */
public final class V2TimeSeriesFields {
  public static final int LABELS_REFS = 1;
  public static final int SAMPLES = 2;
  public static final int HISTOGRAMS = 3;
  public static final int EXEMPLARS = 4;
  public static final int METADATA = 5;

  /** The packed form of {@code labels_refs}, as protobuf writes it. */
  public static final int LABELS_REFS_TAG = (LABELS_REFS << 3) | WireTags.LENGTH_DELIMITED;

  /** One unpacked {@code labels_refs} element, which parsers must accept too. */
  public static final int LABELS_REF_UNPACKED_TAG = (LABELS_REFS << 3) | WireTags.VARINT;

  public static final int SAMPLES_TAG = (SAMPLES << 3) | WireTags.LENGTH_DELIMITED;
  public static final int HISTOGRAMS_TAG = (HISTOGRAMS << 3) | WireTags.LENGTH_DELIMITED;
  public static final int EXEMPLARS_TAG = (EXEMPLARS << 3) | WireTags.LENGTH_DELIMITED;
  public static final int METADATA_TAG = (METADATA << 3) | WireTags.LENGTH_DELIMITED;

  private V2TimeSeriesFields() {}
}
