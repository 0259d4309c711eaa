package io.prwrelay.core.route;

/**
 * A malformed request and the typed error a router must give for it.
 *
 * @param name what is wrong, shown as the test case's name
 * @param request the request's bytes
 * @param field the field the error must name
 * @param offset the byte offset the error must name, or -1 when any offset will do
 * @param problem text the error's problem must contain
 */
record Corruption(String name, byte[] request, String field, int offset, String problem) {
  @Override
  public String toString() {
    return name;
  }
}
