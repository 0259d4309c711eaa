#!/usr/bin/env bash
# Builds the container image from docker/Dockerfile and checks it the way it runs in production:
# under a memory limit, as a non-root user on a read-only root file system, against a recording
# downstream on the host. Run from anywhere after `mvn package` (it needs
# relay-server/target/prw-relay.jar and relay-bench/target/loadgen.jar); .ci/run calls it after the
# tests. Needs root (podman as root), installs podman, runc, mmdebstrap and curl when missing.
#
# Checks, in order (each prints one line; the script exits 1 after the first that fails):
#   image      builds; its size
#   ready      /-/ready answers 200 within 30 s of `podman run`; the time it took
#   user       the relay runs as uid 65532, the root file system is read-only
#   sizing     heap + direct memory fit the limit; the request budget fits both (docs/operations.md, "Sizing")
#   health     the image's HEALTHCHECK passes
#   load       mixed-tenant load at full speed (the load generator): every tenant receives exactly its
#              series; the container is not OOM-killed and its peak memory stays below the limit
#   drain      `podman stop` with requests in flight: each is answered 204, the relay exits 0
#   queue      queue mode on a volume: every series answered 2xx reaches the downstream after
#              `podman kill` (SIGKILL) and a restart
#
# The container shares the host's network (--network host): the relay and its downstream talk over
# 127.0.0.1, so no traffic leaves loopback, and no bridge, firewall rules or port mapping are needed
# (rootful bridge networking depends on the host's netfilter setup, which a sandbox may not offer).
#
# Environment: PRW_BASE_IMAGE (default eclipse-temurin:17-jre; when it cannot be pulled, a base with
# the same JRE is built from Debian's packages with mmdebstrap and kept as
# localhost/jre17-base:bookworm), PRW_IMAGE (default localhost/prw-relay:test), PRW_MEMORY (default
# 512m), PRW_LOAD_DURATION (default 20s).
set -euo pipefail
cd "$(dirname "$0")/.."

BASE_IMAGE=${PRW_BASE_IMAGE:-eclipse-temurin:17-jre}
LOCAL_BASE=localhost/jre17-base:bookworm
IMAGE=${PRW_IMAGE:-localhost/prw-relay:test}
MEMORY=${PRW_MEMORY:-512m}
LOAD_DURATION=${PRW_LOAD_DURATION:-20s}
NAME=prw-relay-image-test-$$
QUEUE_NAME=$NAME-queue
VOLUME=$NAME-queue
JAR=relay-server/target/prw-relay.jar
LOADGEN=relay-bench/target/loadgen.jar
# podman as root on this kind of host: runc (crun refuses memory limits on hybrid cgroups) and
# explicit ulimits (podman's defaults need CAP_SYS_RESOURCE, which a sandbox may not grant).
RUN=(podman run --runtime runc --ulimit nofile=16384:16384 --ulimit nproc=4096:4096 --network host)
# What the relay needs to run read-only: a writable /tmp, executable because Netty, snappy and zstd
# load the native libraries they unpack there.
READ_ONLY=(--read-only --tmpfs /tmp:rw,exec,nosuid,size=64m)
# A request budget that fits a 512 MiB container: auto gives max(max-request-bytes,
# min(direct / 2, heap / 10)), and the default 32 MiB largest request is more than heap / 10 there.
MAX_REQUEST_BYTES=16777216

# podman's own messages go to a log shown when a check fails: on a host without systemd every run
# of an image with a HEALTHCHECK logs that no timer could be set up (the check itself runs on demand).
PODMAN_LOG=$(mktemp)

step() { printf '%-7s %s\n' "$1" "$2"; }
fail() {
  step "$1" "FAILED: $2"
  exit 1
}

# A TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
  local port
  for _ in $(seq 1 100); do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  echo "no free port found" >&2
  return 1
}

# Milliseconds since the epoch.
now_ms() { date +%s%3N; }

# Waits until GET $1 answers 200, at most $2 seconds; prints nothing.
await_ok() {
  local deadline=$(($(now_ms) + $2 * 1000))
  while [ "$(now_ms)" -lt "$deadline" ]; do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$1" || true)" = 200 ]; then
      return 0
    fi
    sleep 0.05
  done
  return 1
}

# A value of the relay's /metrics: metric line prefix $2 on port $1.
metric() {
  curl -s --max-time 5 "http://127.0.0.1:$1/metrics" | awk -v m="$2" 'index($0, m" ") == 1 { print $2 }'
}

# The container's cgroup memory file $2 (v2 name), or its cgroup v1 counterpart $3.
cgroup_memory() {
  podman exec "$1" sh -c "cat /sys/fs/cgroup/$2 2>/dev/null || cat /sys/fs/cgroup/memory/$3"
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }

cleanup() {
  local status=$?
  if [ "$status" -ne 0 ]; then
    echo "--- podman messages ---"
    grep -v 'systemd connection' "$PODMAN_LOG" || true
    for c in "$NAME" "$QUEUE_NAME"; do
      if podman container exists "$c" 2>/dev/null; then
        echo "--- log of $c ---"
        podman logs --tail 40 "$c" 2>&1 || true
      fi
    done
  fi
  podman rm -f -t 0 "$NAME" "$QUEUE_NAME" >/dev/null 2>&1 || true
  podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  rm -rf "$PODMAN_LOG" "${work:-}"
}
trap cleanup EXIT

for f in "$JAR" "$LOADGEN"; do
  [ -f "$f" ] || fail setup "$f is missing: run 'mvn package -DskipTests' (or mvn verify) first"
done
[ "$(id -u)" = 0 ] || fail setup "run as root (podman as root with --runtime runc)"
need=()
for tool in podman runc mmdebstrap curl; do
  command -v "$tool" >/dev/null 2>&1 || need+=("$tool")
done
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# The base: the image users pull when it can be had, else one of the same shape from Debian's
# packages (a JRE 17 on PATH, /bin/sh), built once and kept in podman's image store.
base=$BASE_IMAGE
if ! podman image exists "$base" && ! timeout 120 podman pull -q "docker.io/library/$base" >/dev/null 2>&1; then
  base=$LOCAL_BASE
  if ! podman image exists "$base"; then
    work=$(mktemp -d)
    started=$(now_ms)
    mmdebstrap --quiet --variant=essential --include=openjdk-17-jre-headless,ca-certificates \
      --format=tar bookworm "$work/base.tar"
    podman import -q "$work/base.tar" "$base" >/dev/null
    rm -rf "$work"
    work=
    step base "$BASE_IMAGE cannot be pulled: built $base from Debian bookworm in $((($(now_ms) - started) / 1000)) s"
  else
    step base "$BASE_IMAGE cannot be pulled: using $base"
  fi
fi

previous=$(podman image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
podman build -q --format docker --build-arg "BASE_IMAGE=$base" -f docker/Dockerfile -t "$IMAGE" . >/dev/null
# The image this build replaced, now untagged: removed so that repeated runs do not pile them up.
if [ -n "$previous" ] && [ "$previous" != "$(podman image inspect --format '{{.Id}}' "$IMAGE")" ]; then
  podman rmi "$previous" >/dev/null 2>&1 || true
fi
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
base_size=$(podman image inspect --format '{{.Size}}' "$base")
step image "$IMAGE built on $base: $(mib "$size") ($(mib $((size - base_size))) above the base)"
[ "$(podman image inspect --format '{{.Config.User}}' "$IMAGE")" = 65532:65532 ] ||
  fail image "the image does not run as 65532:65532"
[ "$(podman image inspect --format '{{index .Config.Labels "org.opencontainers.image.licenses"}}' "$IMAGE")" = Apache-2.0 ] ||
  fail image "the image does not state its license (org.opencontainers.image.licenses)"

port=$(free_port)
sink=$(free_port)
limit=$(numfmt --from=iec "${MEMORY^^}")
env=(-e RELAY_SERVER_HOST=127.0.0.1 -e "RELAY_SERVER_PORT=$port"
  -e "RELAY_DOWNSTREAM_URL=http://127.0.0.1:$sink/api/v1/push"
  -e "RELAY_SERVER_MAX_REQUEST_BYTES=$MAX_REQUEST_BYTES")

# ready: from `podman run` to the first 200 of /-/ready.
started=$(now_ms)
"${RUN[@]}" -d --name "$NAME" --memory "$MEMORY" --memory-swap "$MEMORY" "${READ_ONLY[@]}" \
  "${env[@]}" "$IMAGE" >/dev/null 2>>"$PODMAN_LOG"
await_ok "http://127.0.0.1:$port/-/ready" 30 || fail ready "/-/ready did not answer 200 within 30 s"
step ready "/-/ready answered 200 $(($(now_ms) - started)) ms after podman run (limit $MEMORY)"

# user: the process, not only the image's USER line.
uid=$(podman exec "$NAME" awk '/^Uid:/ { print $2 }' /proc/1/status)
[ "$uid" = 65532 ] || fail user "the relay runs as uid $uid"
[ "$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$NAME")" = true ] ||
  fail user "the root file system is not read-only"
if podman exec "$NAME" sh -c 'echo x > /opt/prw-relay/probe' 2>/dev/null; then
  fail user "the root file system accepted a write"
fi
step user "uid 65532, root file system read-only (a write to /opt/prw-relay is refused)"

# sizing: the flags entrypoint.sh chose and the budget the relay took from them.
cmdline=$(podman exec "$NAME" cat /proc/1/cmdline | tr '\0' ' ')
heap=$(sed -n 's/.*-Xmx\([0-9]*\) .*/\1/p' <<<"$cmdline")
direct=$(sed -n 's/.*-XX:MaxDirectMemorySize=\([0-9]*\) .*/\1/p' <<<"$cmdline")
budget=$(metric "$port" relay_inflight_body_limit_bytes | awk '{ printf "%d", $1 }')
[ -n "$heap" ] && [ -n "$direct" ] && [ -n "$budget" ] ||
  fail sizing "cannot read -Xmx, -XX:MaxDirectMemorySize or relay_inflight_body_limit_bytes: $cmdline"
[ $((heap + direct)) -le "$limit" ] && [ $((budget * 4)) -le "$heap" ] && [ $((budget * 2)) -le "$direct" ] ||
  fail sizing "heap $heap + direct $direct vs limit $limit, budget $budget"
step sizing "heap $(mib "$heap") + direct $(mib "$direct") of $(mib "$limit"); budget $(mib "$budget") (x4 within the heap, x2 within direct memory)"

# health: the image's own HEALTHCHECK command (podman runs it on demand: no systemd timer here).
podman healthcheck run "$NAME" >/dev/null 2>&1 || fail health "the image's HEALTHCHECK failed"
step health "HEALTHCHECK ($(podman image inspect --format '{{join .Config.Healthcheck.Test " "}}' "$IMAGE")) passes"

# load: the load generator checks that every tenant received exactly its series.
out=$(mktemp)
if ! java -jar "$LOADGEN" --relay-url "http://127.0.0.1:$port/api/v1/write" --sink-port "$sink" \
  --connections 16 --tenants 10 --warmup 5s --duration "$LOAD_DURATION" --codec-floor 0s >"$out" 2>&1; then
  cat "$out"
  fail load "the load generator reported a failure"
fi
# "series             1,234,567 (61.7 k/s)": the rate.
rate() { sed -n 's/^series  *[0-9,]* (\(.*\)\/s)$/\1/p' "$out"; }
rate2k=$(rate)
# 8 connections: a 10,000-series request holds about 2.4 MB of the memory budget (its 0.4 MB body and
# the 2 MB it decompresses to), and one client may hold half the budget (about 25 MiB at 512 MiB):
# 16 such requests at once from one address would be answered 503 + Retry-After, by design.
if ! java -jar "$LOADGEN" --relay-url "http://127.0.0.1:$port/api/v1/write" --sink-port "$sink" \
  --connections 8 --tenants 10 --series-per-request 10000 --warmup 2s --duration 10s \
  --codec-floor 0s >"$out" 2>&1; then
  cat "$out"
  fail load "the load generator reported a failure (10,000 series per request)"
fi
rate10k=$(rate)
rm -f "$out"
[ "$(podman inspect --format '{{.State.Running}} {{.State.OOMKilled}}' "$NAME")" = "true false" ] ||
  fail load "the container is not running or was OOM-killed"
peak=$(cgroup_memory "$NAME" memory.peak memory.max_usage_in_bytes)
[ "$peak" -lt "$limit" ] || fail load "peak memory $peak reached the limit $limit"
step load "every tenant received exactly its series: $rate2k series/s at 2,000 (16 connections) and $rate10k at 10,000 series per request (8 connections), 10 tenants; peak container memory $(mib "$peak") of $(mib "$limit")"

# drain: podman stop (SIGTERM) while every request waits for a slow downstream.
java -cp "$LOADGEN" io.prwrelay.bench.container.ContainerCheck drain \
  --relay "http://127.0.0.1:$port" --sink-port "$sink" --stop-command "podman stop -t 30 $NAME >/dev/null 2>>$PODMAN_LOG" ||
  fail drain "requests in flight were not all answered before the relay stopped"
exit_code=$(podman inspect --format '{{.State.ExitCode}}' "$NAME")
[ "$exit_code" = 0 ] || fail drain "the relay exited $exit_code after podman stop"
step drain "podman stop: every request in flight answered 204, exit code 0"
podman rm "$NAME" >/dev/null 2>>"$PODMAN_LOG"

# queue: SIGKILL while senders write, restart on the same volume, count at the downstream.
podman volume create "$VOLUME" >/dev/null
"${RUN[@]}" -d --name "$QUEUE_NAME" --memory "$MEMORY" --memory-swap "$MEMORY" "${READ_ONLY[@]}" \
  "${env[@]}" -e RELAY_DELIVERY_MODE=queue -e RELAY_DELIVERY_QUEUE_DIR=/var/lib/prw-relay/queue \
  -e RELAY_DOWNSTREAM_RETRY_MAX_BACKOFF=500ms -v "$VOLUME:/var/lib/prw-relay/queue" "$IMAGE" \
  >/dev/null 2>>"$PODMAN_LOG"
await_ok "http://127.0.0.1:$port/-/ready" 30 || fail queue "the queue-mode relay was not ready within 30 s"
java -cp "$LOADGEN" io.prwrelay.bench.container.ContainerCheck queue \
  --relay "http://127.0.0.1:$port" --sink-port "$sink" \
  --kill-command "podman kill $QUEUE_NAME >/dev/null 2>>$PODMAN_LOG" \
  --start-command "podman start $QUEUE_NAME >/dev/null 2>>$PODMAN_LOG" ||
  fail queue "series answered 2xx were lost across podman kill and a restart"
step queue "podman kill while writing, restart on the same volume: every series answered 2xx delivered"
echo "image checks passed"
