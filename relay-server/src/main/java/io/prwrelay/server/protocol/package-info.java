/**
 * The Remote Write protocol as every layer of the relay speaks it, about neither the sender nor the
 * downstream: {@link io.prwrelay.server.protocol.Protocol} (the two versions: the message a body
 * holds, its {@code Content-Type} and version header) and {@link
 * io.prwrelay.server.protocol.WrittenCounts} (the {@code X-Prometheus-Remote-Write-*-Written}
 * headers a PRW 2.0 receiver answers with). The ingress reads a request's version from its head,
 * the write pipeline and the lanes carry it with every batch, the downstream client sends it and
 * reads the counts back. Uses nothing of the relay's own.
 */
package io.prwrelay.server.protocol;
