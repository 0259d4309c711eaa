/**
 * Reading a decompressed Remote Write request in place. {@link
 * io.prwrelay.core.remotewrite.WriteRequestReader} (PRW 1.0) reads each series' labels only up to
 * the label that decides its tenant and skips the rest by its length; {@link
 * io.prwrelay.core.remotewrite.V2RequestReader} (PRW 2.0) reads the symbols first, then checks
 * every ref. Each hands its visitor a flyweight ({@link io.prwrelay.core.remotewrite.SeriesView},
 * {@link io.prwrelay.core.remotewrite.V2SeriesView}) that points into the request array and is
 * valid only during the call; nothing is copied and no {@code String} is made per label. A
 * malformed request is a {@link io.prwrelay.core.remotewrite.RequestError} naming the field path
 * and byte offset. {@link io.prwrelay.core.remotewrite.SeededHash} keys every table indexed by
 * bytes a client chose.
 */
package io.prwrelay.core.remotewrite;
