/**
 * The two peers every end-to-end run of the relay needs, shared by {@code --demo}, the load
 * generator and the tests: {@link io.prwrelay.testkit.WriteRequestEncoder} builds the sender's
 * remote-write requests and {@link io.prwrelay.testkit.ScriptedDownstream} plays Cortex. Nothing
 * here depends on the relay's own code, so what they check is checked independently of it.
 */
package io.prwrelay.testkit;
