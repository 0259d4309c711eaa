package io.prwrelay.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The settings every microbenchmark of the relay runs with, inherited by each (JMH's annotations
 * are {@code @Inherited}): average time per operation in microseconds, five warm-up and five
 * measured iterations of 2 s, one fork with a fixed 2 GiB heap and Netty's thread caches on for
 * every thread, so that rows of different classes compare.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-Dio.netty.allocator.useCacheForAllThreads=true"})
public abstract class RelayBenchmark {}
