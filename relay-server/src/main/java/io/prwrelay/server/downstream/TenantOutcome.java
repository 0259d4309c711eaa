package io.prwrelay.server.downstream;

/**
 * The final outcome of one tenant batch of a sender request: what the sender's answer is made of.
 *
 * @param series series in the batch
 * @param attempts attempts made (0 when the deadline passed before the first)
 * @param last how the last attempt ended, or why none was made
 */
public record TenantOutcome(String tenant, int series, int attempts, AttemptOutcome last) {}
