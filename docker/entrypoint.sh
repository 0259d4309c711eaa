#!/bin/sh
# Starts prw-relay with its memory sized from the container's memory limit, so that heap and direct
# memory stay inside the limit together (README, "Sizing"):
#   heap    PRW_RELAY_HEAP_PERCENT   (default 40) of the limit, -Xmx
#   direct  PRW_RELAY_DIRECT_PERCENT (default 30) of the limit, -XX:MaxDirectMemorySize
# The bodies admitted at once (relay.server.max-inflight-bytes, default auto) are half of the direct
# memory, so they live inside it. The remaining 30% is for what the JVM holds outside both:
# metaspace, code cache, thread stacks, GC structures, and the native snappy/zstd/epoll libraries.
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

# shellcheck disable=SC2086 # JAVA_OPTS is a list of flags
exec java -Xmx"$heap" -XX:MaxDirectMemorySize="$direct" -XX:+ExitOnOutOfMemoryError \
  ${JAVA_OPTS:-} -jar /opt/prw-relay/prw-relay.jar "$@"
