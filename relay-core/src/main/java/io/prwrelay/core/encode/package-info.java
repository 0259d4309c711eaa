/**
 * Writing the tenant batches. {@link io.prwrelay.core.encode.BatchEncoder} splices each PRW 1.0
 * series' bytes into its tenant's batch as received (a concatenation of {@code timeseries} fields
 * is a valid {@code WriteRequest}): byte ranges recorded while the request is read, then each batch
 * sized first and written once (16 KiB or more into a buffer of its own, smaller ones into slices
 * of one shared buffer). {@link io.prwrelay.core.encode.V2BatchEncoder} builds a PRW 2.0 request
 * per tenant with a symbols table of its own, or PRW 1.0 batches ({@link
 * io.prwrelay.core.encode.V1FromV2Writer}) for a downstream that takes only 1.0. A batch is a
 * {@link io.prwrelay.core.encode.TenantBatch} with its {@link
 * io.prwrelay.core.encode.SeriesCounts}.
 */
package io.prwrelay.core.encode;
