#!/bin/sh
# Regenerates the flame graphs under docs/ (BENCHMARKS.md, "Flame graphs"):
#   docs/flame-route.svg      CPU of RouteBenchmark.route on the real payload (JMH, one fork)
#   docs/flame-e2e-cpu.svg    CPU of the relay spawned by the load generator, 10 tenants, max rate,
#                             over the measured 20 s
#   docs/flame-e2e-alloc.svg  heap bytes that relay allocated (sampled every 64 KiB), same window
# Run from the repository root after 'mvn -q package -DskipTests': 'relay-bench/flamegraphs.sh' for
# all three, 'relay-bench/flamegraphs.sh route' or '... e2e' for one part. async-profiler comes from Maven
# Central (tools.profiler:async-profiler:4.1, linux-x64, the native library inside the jar) through
# Maven's own resolver; the collapsed stacks stay in relay-bench/target/flamegraphs/.
set -eu

out=relay-bench/target/flamegraphs
mkdir -p "$out" docs
if [ ! -f "$out/linux-x64/libasyncProfiler.so" ]; then
  mvn -q -N org.apache.maven.plugins:maven-dependency-plugin:2.8:copy \
    -Dartifact=tools.profiler:async-profiler:4.1:jar:linux-x64 -DoutputDirectory="$out"
  (cd "$out" && unzip -q -o async-profiler-4.1-linux-x64.jar 'linux-x64/*')
fi
lib=$(cd "$out/linux-x64" && pwd)/libasyncProfiler.so
render="java -cp relay-bench/target/benchmarks.jar io.prwrelay.bench.svg.FlameGraph"
part=${1:-all}

# The route step: JMH's own settings (5 x 2 s warm-up, 5 x 2 s measured); the profile covers the
# whole fork, and only the stacks under RouteBenchmark.route are drawn.
if [ "$part" = all ] || [ "$part" = route ]; then
rm -f "$out/route.collapsed"
java -jar relay-bench/target/benchmarks.jar 'RouteBenchmark.route$' \
  -p payload=file:../shared/testdata/1709380533560664458.data \
  -jvmArgsPrepend "-agentpath:$lib=start,event=itimer,interval=1ms,collapsed,file=$(pwd)/$out/route.collapsed"
$render "$out/route.collapsed" docs/flame-route.svg --root 'RouteBenchmark\.route$' \
  --title "RouteBenchmark.route, real payload (1709380533560664458.data): CPU, itimer 1 ms"
fi

# End to end: the load generator's default shape (10 tenants x 2,000 series, 4 connections), max
# rate; the generator loads the profiler into the spawned relay for the measured window only, after
# 60 s of warm-up so that the JIT compiler has finished (after 10 s on a busy machine, C2 was still
# more than half of the relay's CPU).
loadgen() {
  java -jar relay-bench/target/loadgen.jar --spawn-relay relay-server/target/prw-relay.jar \
    --warmup 60s --duration 20s --rate 0 --profile-agent "$lib" \
    --jvm-args "-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints" "$@"
}
if [ "$part" = all ] || [ "$part" = e2e ]; then
loadgen --profile "event=itimer,interval=1ms,collapsed,file=$(pwd)/$out/e2e-cpu.collapsed"
$render "$out/e2e-cpu.collapsed" docs/flame-e2e-cpu.svg \
  --title "prw-relay under the load generator (10 tenants, max rate): CPU, itimer 1 ms, measured 20 s"
loadgen --profile "event=alloc,alloc=64k,total,collapsed,file=$(pwd)/$out/e2e-alloc.collapsed"
$render "$out/e2e-alloc.collapsed" docs/flame-e2e-alloc.svg --unit bytes \
  --title "prw-relay under the load generator (10 tenants, max rate): heap bytes allocated, measured 20 s"
fi
