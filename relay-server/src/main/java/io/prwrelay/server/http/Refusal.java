package io.prwrelay.server.http;

/**
 * A write request refused by one of {@link WriteProcessor}'s stages before anything of it was
 * delivered: the answer its sender gets. The stage that refused counted it in the metrics and
 * released what it held of the request; the compressed body is its owner's to release.
 */
record Refusal(Answer answer) implements Decompression.Result, Routed {}
