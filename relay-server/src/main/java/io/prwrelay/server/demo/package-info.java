/**
 * {@code --demo}: the relay between an embedded sender and an embedded downstream on loopback
 * ({@link io.prwrelay.server.demo.Demo}), built on the testkit's peers.
 */
package io.prwrelay.server.demo;
