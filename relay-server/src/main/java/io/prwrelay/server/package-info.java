/**
 * The command line: {@link io.prwrelay.server.Main} ({@code java -jar prw-relay.jar}: loads the
 * configuration, starts the relay, shuts it down on SIGTERM), {@link
 * io.prwrelay.server.HealthCheck} ({@code --healthcheck}) and the log format ({@link
 * io.prwrelay.server.Logging}). The relay itself is assembled in {@code app}.
 */
package io.prwrelay.server;
