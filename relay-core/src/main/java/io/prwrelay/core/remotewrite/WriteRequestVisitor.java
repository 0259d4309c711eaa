package io.prwrelay.core.remotewrite;

/** Receives what {@link WriteRequestReader} finds, in request order. */
public interface WriteRequestVisitor {
  /**
   * Called once per {@code timeseries} field after its labels were scanned.
   *
   * @param series borrowed flyweight, valid only during this call
   * @return {@code false} to stop reading the request
   */
  boolean onSeries(SeriesView series);

  /**
   * Called once per {@code metadata} field.
   *
   * @param start index of the field's tag in the request array
   * @param end index one past the field
   */
  void onMetadata(int start, int end);
}
