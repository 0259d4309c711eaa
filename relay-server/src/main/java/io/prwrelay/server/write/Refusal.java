package io.prwrelay.server.write;

/**
 * A write request refused by one of {@link WriteProcessor}'s stages before anything of it was
 * delivered: the answer its sender gets. The stage that refused it has counted what its metrics
 * count (rejected series, the budget's refusals) and released what it made of the request; the
 * compressed body is its owner's to release.
 */
record Refusal(Answer answer) implements Decompression.Result, Routed {}
