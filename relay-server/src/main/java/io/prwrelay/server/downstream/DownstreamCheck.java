package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.prwrelay.server.config.DownstreamConfig;
import java.net.URI;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Checks the downstream once at startup with an empty push (a valid, empty {@code WriteRequest},
 * snappy-compressed, with the tenant header of the default tenant) and logs in one line what it
 * answered and what that means: 2xx, the path and credentials work; 404 or 405, nothing takes
 * remote writes at that path; 401 or 403, the credentials are refused; no answer, the downstream
 * cannot be reached. A wrong path otherwise shows only as every batch answered 400 while {@code
 * /-/ready} says 200.
 *
 * <p>It never blocks startup (the attempt runs on an event loop, bounded by {@code
 * relay.downstream.attempt-timeout}) and never changes readiness: a downstream that is down at
 * startup may come up a second later, and a relay that is not ready would only stop the senders.
 */
public final class DownstreamCheck {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.downstream");

  /**
   * An empty {@code WriteRequest} (no bytes) in the snappy block format: the preamble varint of the
   * uncompressed length, 0, and no elements.
   */
  private static final byte[] EMPTY_SNAPPY_REQUEST = {0};

  private DownstreamCheck() {}

  /**
   * Sends the check and logs its answer when it comes.
   *
   * @param tenant the tenant of the header (the default tenant, prefix included)
   * @param queueMode whether batches the downstream does not take are queued on disk ({@code
   *     relay.delivery.mode=queue}) rather than answered 503: what the line says happens to them
   * @return the attempt's outcome, completed on {@code loop}; the line is logged by then
   */
  public static Future<AttemptOutcome> run(
      TenantSender sender,
      EventLoop loop,
      DownstreamConfig config,
      String tenant,
      boolean queueMode) {
    ByteBuf body = Unpooled.wrappedBuffer(EMPTY_SNAPPY_REQUEST);
    Promise<AttemptOutcome> done = loop.newPromise();
    sender
        .send(loop, tenant, body, config.attemptTimeout().toNanos())
        .addListener(
            f -> {
              body.release();
              AttemptOutcome o = (AttemptOutcome) f.getNow();
              if (o != null) {
                log(o, config, tenant, queueMode);
                done.setSuccess(o);
              } else {
                done.setFailure(f.cause());
              }
            });
    return done;
  }

  private static void log(
      AttemptOutcome o, DownstreamConfig config, String tenant, boolean queueMode) {
    String what = "downstream check: an empty push to " + url(config) + " as tenant " + tenant;
    int status = o.status();
    String message = o.message().replace('\n', ' ');
    String answer = " answered " + status + (message.isEmpty() ? "" : " (" + message + ")");
    if (status == AttemptOutcome.TRANSPORT_FAILURE) {
      if (message.contains("shutting down")) {
        return;
      }
      LOG.warning(
          what
              + " got no answer: "
              + message
              + ". The relay is ready anyway; "
              + (queueMode
                  ? "batches are queued on disk (answered 2xx once written) and sent once the"
                      + " downstream can be reached"
                  : "batches are answered 503 until the downstream can be reached"));
    } else if (o.success()) {
      LOG.info(what + answer + ": the downstream takes writes");
    } else if (status == 404 || status == 405) {
      LOG.warning(
          what
              + answer
              + ": nothing takes remote writes at the path "
              + config.url().getRawPath()
              + ". Check "
              + DownstreamConfig.URL.name()
              + " (Cortex and Mimir take /api/v1/push); until then every batch fails");
    } else if (status == 401 || status == 403) {
      LOG.warning(
          what
              + answer
              + ": the downstream refuses the relay's credentials (auth "
              + config.auth().kind()
              + "). Check relay.downstream.basic-auth.* or "
              + DownstreamConfig.BEARER_TOKEN.name()
              + "; until then every batch fails");
    } else if (status == 429) {
      LOG.info(what + answer + ": the path and credentials work; the tenant is over its limit");
    } else if (status >= 500) {
      LOG.warning(
          what
              + answer
              + ": the downstream is failing; batches are "
              + (queueMode ? "queued on disk and sent again" : "retried"));
    } else {
      LOG.log(Level.WARNING, what + answer + ": the downstream may reject the relay's batches");
    }
  }

  /** The URL without its query (which might carry a secret). */
  private static String url(DownstreamConfig config) {
    URI u = config.url();
    return u.getScheme()
        + "://"
        + u.getHost()
        + (u.getPort() < 0 ? "" : ":" + u.getPort())
        + u.getRawPath();
  }
}
