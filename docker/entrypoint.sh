#!/bin/sh
# Starts prw-relay with its memory sized from the container's memory limit, so that heap and direct
# memory stay inside the limit together (docs/operations.md, "Sizing"):
#   heap    PRW_RELAY_HEAP_PERCENT   (default 40) of the limit, -Xmx
#   direct  PRW_RELAY_DIRECT_PERCENT (default 30) of the limit, -XX:MaxDirectMemorySize
# The bodies admitted at once (relay.server.max-inflight-bytes, default auto) are half of the direct
# memory, so they live inside it. The remaining 30% is for what the JVM holds outside both:
# metaspace, code cache, thread stacks, GC structures, and the native snappy/zstd/epoll libraries.
#   young   a quarter of the heap, at most PRW_RELAY_YOUNG_MB (default 64) MiB, -XX:MaxNewSize
# The relay keeps little on the heap for long (pooled buffers, the ledger), and G1's pauses stay
# short, so G1 would grow the young generation towards 60% of the heap and every byte of it would
# become resident: 338 MB peak RSS at 10 tenants × 2,000 series, max rate, on a 24 GB machine,
# against 196 MB with 64 MiB (BENCHMARKS.md, "Resident memory").
# Set JAVA_OPTS to add JVM flags.
set -eu

limit=""
if [ -r /sys/fs/cgroup/memory.max ]; then
  limit=$(cat /sys/fs/cgroup/memory.max)                       # cgroup v2
elif [ -r /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
  limit=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)     # cgroup v1
fi
total=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 ))
# No limit ("max", or v1's huge sentinel): size from the machine's memory.
case "$limit" in
  ''|max) limit=$total ;;
esac
if [ "$limit" -gt "$total" ]; then
  limit=$total
fi

heap=$((limit / 100 * ${PRW_RELAY_HEAP_PERCENT:-40}))
direct=$((limit / 100 * ${PRW_RELAY_DIRECT_PERCENT:-30}))
young=$((heap / 4))
young_max=$((${PRW_RELAY_YOUNG_MB:-64} * 1024 * 1024))
if [ "$young" -gt "$young_max" ]; then
  young=$young_max
fi

# shellcheck disable=SC2086 # JAVA_OPTS is a list of flags
exec java -Xmx"$heap" -XX:MaxDirectMemorySize="$direct" -XX:MaxNewSize="$young" \
  -XX:+ExitOnOutOfMemoryError \
  ${JAVA_OPTS:-} -jar /opt/prw-relay/prw-relay.jar "$@"
