package io.prwrelay.server.ingress;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.TooLongHttpHeaderException;

/**
 * Netty's header map, validated as a {@link DefaultHttpHeadersFactory} validates, with a table
 * sized for the few headers it will hold (Netty's default makes room for 16 in every map, and the
 * relay builds one for each request, its trailers and its answer) and, for the maps the request
 * decoder fills, a bound on the number of fields: the {@code add} past it throws {@link
 * TooLongHttpHeaderException}, which Netty's decoder turns into a request that failed to decode
 * (answered 431, {@link RequestHead}).
 */
final class SmallHeaders extends DefaultHttpHeaders {
  /** Headers of requests and answers, validated as Netty's are. */
  static final DefaultHttpHeadersFactory HEADERS = DefaultHttpHeadersFactory.headersFactory();

  /** How trailers are validated: as Netty's trailers are. */
  static final DefaultHttpHeadersFactory TRAILERS_VALIDATION =
      DefaultHttpHeadersFactory.trailersFactory();

  /** Most fields the map takes; one more is refused. */
  private final int maxFields;

  /**
   * @param validation whose name and value validators the map uses
   * @param sizeHint headers the map makes room for (a power of two at least 2)
   */
  SmallHeaders(DefaultHttpHeadersFactory validation, int sizeHint) {
    this(validation, sizeHint, Integer.MAX_VALUE);
  }

  /**
   * @param maxFields most fields the map takes
   */
  SmallHeaders(DefaultHttpHeadersFactory validation, int sizeHint, int maxFields) {
    super(validation.getNameValidator(), validation.getValueValidator(), sizeHint);
    this.maxFields = maxFields;
  }

  @Override
  public HttpHeaders add(CharSequence name, Object value) {
    checkRoom();
    return super.add(name, value);
  }

  @Override
  public HttpHeaders add(String name, Object value) {
    checkRoom();
    return super.add(name, value);
  }

  private void checkRoom() {
    if (size() == maxFields) {
      throw new TooLongHttpHeaderException("more than " + maxFields + " header fields");
    }
  }

  /** A factory of maps validated as {@code validation}'s, with room for {@code sizeHint}. */
  static HttpHeadersFactory factory(DefaultHttpHeadersFactory validation, int sizeHint) {
    return factory(validation, sizeHint, Integer.MAX_VALUE);
  }

  /**
   * A factory of maps validated as {@code validation}'s, with room for {@code sizeHint}, each
   * taking at most {@code maxFields} fields.
   */
  static HttpHeadersFactory factory(
      DefaultHttpHeadersFactory validation, int sizeHint, int maxFields) {
    return new HttpHeadersFactory() {
      @Override
      public HttpHeaders newHeaders() {
        return new SmallHeaders(validation, sizeHint, maxFields);
      }

      @Override
      public HttpHeaders newEmptyHeaders() {
        return new SmallHeaders(validation, sizeHint, maxFields);
      }
    };
  }
}
