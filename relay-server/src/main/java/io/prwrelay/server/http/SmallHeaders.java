package io.prwrelay.server.http;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;

/**
 * Netty's header map, validated as a {@link DefaultHttpHeadersFactory} validates, with a table
 * sized for the few headers it will hold: Netty's default makes room for 16 in every map, and the
 * relay builds one for each request, its trailers and its answer.
 */
final class SmallHeaders extends DefaultHttpHeaders {
  /** Headers of requests and answers, validated as Netty's are. */
  static final DefaultHttpHeadersFactory HEADERS = DefaultHttpHeadersFactory.headersFactory();

  /** How trailers are validated: as Netty's trailers are. */
  static final DefaultHttpHeadersFactory TRAILERS_VALIDATION =
      DefaultHttpHeadersFactory.trailersFactory();

  /**
   * Trailers of requests (senders send none, yet the decoder makes a map for every request whose
   * body has a {@code Content-Length}), validated as Netty's trailers are: names that only a head
   * may carry are refused. Each map's storage is made only when a trailer arrives ({@link
   * CompactHeaders} with no room at first).
   */
  static final HttpHeadersFactory TRAILERS =
      CompactHeaders.factory(TRAILERS_VALIDATION, 0, HttpIngress.MAX_HEADER_FIELDS);

  /**
   * @param validation whose name and value validators the map uses
   * @param sizeHint headers the map makes room for (a power of two at least 2)
   */
  SmallHeaders(DefaultHttpHeadersFactory validation, int sizeHint) {
    super(validation.getNameValidator(), validation.getValueValidator(), sizeHint);
  }

  /** A factory of maps validated as {@code validation}'s, with room for {@code sizeHint}. */
  static HttpHeadersFactory factory(DefaultHttpHeadersFactory validation, int sizeHint) {
    return new HttpHeadersFactory() {
      @Override
      public HttpHeaders newHeaders() {
        return new SmallHeaders(validation, sizeHint);
      }

      @Override
      public HttpHeaders newEmptyHeaders() {
        return new SmallHeaders(validation, sizeHint);
      }
    };
  }
}
