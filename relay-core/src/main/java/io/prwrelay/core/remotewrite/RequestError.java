package io.prwrelay.core.remotewrite;

/**
 * Why a request cannot be relayed: the field path being read, the byte offset in the decompressed
 * request, and what was wrong there. Every error but {@link Kind#OVER_BUDGET} is the sender's fault
 * and is answered with 400 carrying {@link #message()}.
 *
 * @param kind {@link Kind#MALFORMED} for bytes that are not a valid request, {@link Kind#NO_TENANT}
 *     for a series without a valid tenant under {@code relay.tenant.missing=reject}, {@link
 *     Kind#TOO_MANY_TENANTS} for a request with more tenants than {@code
 *     relay.tenant.max-per-request}, {@link Kind#TOO_LARGE} for a request whose rebuilt form would
 *     pass {@code relay.server.max-decompressed-bytes}, {@link Kind#OVER_BUDGET} for a request
 *     whose rebuilt form, or the scratch memory to build it, the caller's memory budget refused
 * @param field path of the field, e.g. {@code timeseries[12].labels[3].name}; {@code request} for
 *     {@link Kind#TOO_LARGE}, which concerns the request as a whole
 * @param offset byte offset from the start of the decompressed request; 0 for {@link
 *     Kind#TOO_LARGE}
 * @param problem what was wrong, e.g. {@code length 500 exceeds the 20 bytes left}
 */
public record RequestError(Kind kind, String field, int offset, String problem) {
  /** What kind of problem the request has. */
  public enum Kind {
    /** The bytes are not a valid remote-write request. */
    MALFORMED,
    /** A series has no valid tenant and the configuration rejects such requests. */
    NO_TENANT,
    /** The request carries more tenants than one request may. */
    TOO_MANY_TENANTS,
    /**
     * The requests the relay would build from this one (converted to PRW 1.0, or one PRW 2.0
     * request per tenant with its own symbols table) would take more bytes than a request may
     * decompress to: a symbol is copied once per reference or per tenant, so a small request can
     * ask for a very large output.
     */
    TOO_LARGE,
    /**
     * The caller's {@link io.prwrelay.core.codec.MemoryGrant} refused the memory the requests built
     * from this one, or the scratch memory to build them, would take: nothing of that size was
     * allocated. The caller knows why (now, or ever) and answers accordingly.
     */
    OVER_BUDGET
  }

  /**
   * A {@link Kind#TOO_LARGE} error.
   *
   * @param problem the whole message: what would take how many bytes, and the bound and its key
   */
  public static RequestError tooLarge(String problem) {
    return new RequestError(Kind.TOO_LARGE, "request", 0, problem);
  }

  /**
   * A {@link Kind#OVER_BUDGET} error.
   *
   * @param problem what the memory was refused for
   */
  public static RequestError overBudget(String problem) {
    return new RequestError(Kind.OVER_BUDGET, "request", 0, problem);
  }

  /**
   * Returns a one-line description naming the field, the offset and the problem; for {@link
   * Kind#TOO_LARGE} and {@link Kind#OVER_BUDGET}, which have no field, the problem alone.
   */
  public String message() {
    String what =
        switch (kind) {
          case MALFORMED -> "malformed request";
          case NO_TENANT -> "series without a valid tenant";
          case TOO_MANY_TENANTS -> "too many tenants";
          case TOO_LARGE, OVER_BUDGET -> null;
        };
    if (what == null) {
      return problem;
    }
    return what + " at byte " + offset + " in " + field + ": " + problem;
  }

  @Override
  public String toString() {
    return message();
  }
}
