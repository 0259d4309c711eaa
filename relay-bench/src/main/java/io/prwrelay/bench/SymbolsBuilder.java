package io.prwrelay.bench;

import io.prwrelay.oracle.v2.Request;
import java.util.HashMap;
import java.util.Map;

/**
 * The symbols table of a PRW 2.0 request being built with the generated classes: each string is
 * added once, on first use, and its ref returned every time.
 */
final class SymbolsBuilder {
  private final Request.Builder request;
  private final Map<String, Integer> refs = new HashMap<>();

  /**
   * @param request the request whose symbols this adds to; it should have none yet
   */
  SymbolsBuilder(Request.Builder request) {
    this.request = request;
  }

  /** The ref of {@code symbol}, added to the table when new. */
  int ref(String symbol) {
    Integer r = refs.get(symbol);
    if (r == null) {
      r = request.getSymbolsCount();
      request.addSymbols(symbol);
      refs.put(symbol, r);
    }
    return r;
  }
}
