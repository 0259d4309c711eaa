package io.prwrelay.server.ingress;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.prwrelay.server.insight.TenantInsight;
import io.prwrelay.server.insight.TenantsJson;
import io.prwrelay.server.insight.TenantsPage;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.write.Answer;
import io.prwrelay.server.write.TenantAllowList;
import java.util.function.Predicate;

/**
 * Answers every request that is not a remote write: the {@link AdminEndpoint}s (metrics, health,
 * readiness, tenant insight) for GET and HEAD, 405 with {@code Allow} for a known path and the
 * wrong method, 404 for any other path. Encodes those responses and counts each in {@code
 * relay_http_requests_total}. None of these answers closes the connection by itself.
 */
final class AdminHandler {
  /** {@code endpoint} label of a write path asked with the wrong method. */
  static final String WRITE_TAG = "write";

  /** {@code endpoint} label of an unknown path. */
  static final String OTHER_TAG = "other";

  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  private final RelayMetrics metrics;
  private final ServerState state;
  private final TenantInsight insight;

  AdminHandler(RelayMetrics metrics, ServerState state, TenantInsight insight) {
    this.metrics = metrics;
    this.state = state;
    this.insight = insight;
  }

  /**
   * The response to {@code head}, computed now (after its body was read, so a scrape or readiness
   * check reflects the moment of the answer), with its body: the {@link AnswerWriter} sends a HEAD
   * request's headers without it.
   *
   * @param path the request's path, without query
   * @param reader the tenants whose rows and series the request's credentials may read ({@link
   *     InboundAuth#authenticateReader}); every tenant's when it allows all
   */
  FullHttpResponse respond(HttpRequest head, String path, TenantAllowList reader) {
    HttpMethod method = head.method();
    AdminEndpoint endpoint = AdminEndpoint.at(path);
    String tag;
    FullHttpResponse r;
    if (WriteRequestCheck.WRITE_PATHS.contains(path)) {
      tag = WRITE_TAG;
      r = notAllowed(method, "POST");
    } else if (endpoint == null) {
      tag = OTHER_TAG;
      r = AnswerWriter.toResponse(Answer.of(404, "not found: " + path));
    } else if (method.equals(HttpMethod.GET) || method.equals(HttpMethod.HEAD)) {
      tag = endpoint.tag();
      r = AnswerWriter.toResponse(answer(endpoint, reader));
      if (r.status().code() == 200) {
        String type = contentType(endpoint);
        if (type != null) {
          r.headers().set(HttpHeaderNames.CONTENT_TYPE, type);
        }
      }
    } else {
      tag = endpoint.tag();
      r = notAllowed(method, "GET, HEAD");
    }
    metrics.otherRequest(tag, r.status().code());
    return r;
  }

  /**
   * The answer of {@code endpoint}. A reader limited to some tenants gets only their rows of the
   * tenant insight (their lanes' states and last downstream errors, which quote their own series
   * only) and only their per-tenant series of the metrics ({@link RelayMetrics#scrape(Predicate)}).
   */
  private Answer answer(AdminEndpoint endpoint, TenantAllowList reader) {
    boolean all = reader.allowsAll();
    Predicate<String> visible = reader::allows;
    return switch (endpoint) {
      case METRICS -> Answer.of(200, all ? metrics.scrape() : metrics.scrape(visible));
      case HEALTHY -> Answer.of(200, "OK");
      case READY ->
          state.ready() ? Answer.of(200, "ready") : Answer.of(503, "not ready: " + state.reason());
      case TENANTS ->
          insight.enabled()
              ? Answer.of(
                  200, all ? TenantsPage.render(insight) : TenantsPage.render(insight, visible))
              : disabled();
      case TENANTS_API ->
          insight.enabled()
              ? Answer.of(
                  200, all ? TenantsJson.render(insight) : TenantsJson.render(insight, visible))
              : disabled();
    };
  }

  private static Answer disabled() {
    return Answer.of(404, "the tenant insight is off (relay.insight.enabled=false)");
  }

  /** The content type of a 200 from {@code endpoint} other than plain text, or {@code null}. */
  private static String contentType(AdminEndpoint endpoint) {
    return switch (endpoint) {
      case METRICS -> PROMETHEUS_TEXT;
      case TENANTS -> "text/html; charset=utf-8";
      case TENANTS_API -> "application/json";
      default -> null;
    };
  }

  private static FullHttpResponse notAllowed(HttpMethod method, String allow) {
    FullHttpResponse r =
        AnswerWriter.toResponse(Answer.of(405, method + " is not allowed here; use " + allow));
    r.headers().set(HttpHeaderNames.ALLOW, allow);
    return r;
  }
}
