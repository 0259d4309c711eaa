package io.prwrelay.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A property checked once per seed: the method takes a {@code long seed}, and the test class has a
 * static {@code seeds()} method (usually {@link RequestBuffers#seeds}) naming them.
 *
 * <p>Each seed is independent of the others, so a method's seeds run in parallel (relay-core's pom
 * turns on JUnit's parallel execution); the class still runs alone, so its leak check sees only its
 * own buffers.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@ParameterizedTest(name = "seed {0}")
@Execution(ExecutionMode.CONCURRENT)
@MethodSource("seeds")
public @interface ForEachSeed {}
