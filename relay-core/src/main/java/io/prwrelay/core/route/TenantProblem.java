package io.prwrelay.core.route;

/** Why a series has no valid tenant. Counted per request so metrics can show each reason. */
public enum TenantProblem {
  /** None of the configured tenant labels is present with a non-empty value. */
  MISSING("missing"),
  /**
   * The value holds a byte outside {@code a-z A-Z 0-9 ! - _ . * ' ( )} (CR, LF, '|', '/', ':',
   * UTF-8...).
   */
  INVALID_CHARACTER("invalid_character"),
  /** Prefix plus value is longer than {@value TenantIds#MAX_LENGTH} bytes. */
  TOO_LONG("too_long"),
  /**
   * Prefix plus value is {@code .}, {@code ..}, {@code __markers__} or {@code user-index.json.gz}.
   */
  RESERVED("reserved"),
  /**
   * Prefix plus value is a valid tenant ID that is not among the allowed tenants ({@link
   * TenantRules#allowed()}).
   */
  NOT_ALLOWED("not_allowed");

  private static final TenantProblem[] VALUES = values();

  private final String tag;

  TenantProblem(String tag) {
    this.tag = tag;
  }

  /** Lower-case name used in metric tags and messages. */
  public String tag() {
    return tag;
  }

  static TenantProblem of(int ordinal) {
    return VALUES[ordinal];
  }
}
