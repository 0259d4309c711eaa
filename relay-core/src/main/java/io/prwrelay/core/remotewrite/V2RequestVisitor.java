package io.prwrelay.core.remotewrite;

/** Receives what {@link V2RequestReader} finds, in request order. */
public interface V2RequestVisitor {
  /**
   * Called once per {@code timeseries} field after it was read and validated (every ref in range,
   * label refs in pairs), with its tenant resolved.
   *
   * @param series borrowed flyweight, valid only during this call
   * @return {@code false} to stop reading the request
   */
  boolean onSeries(V2SeriesView series);
}
