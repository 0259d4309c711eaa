#!/bin/bash
# The relay against vmagent at fixed offered rates (BENCHMARKS.md, "Where it stands"): for each round,
# rate and shape, every tool one after the other (the order turning from round to round, so that a
# machine that slows down during the run weighs on all), each started fresh by this script in front
# of the load generator's sink, driven by loadgen.jar at --rate R requests/s of 2,000 series over 8
# connections. Every tool's CPU comes from /proc/PID/stat over the generator's measured window (read
# when it prints its first "measuring" and its first "finishing" line), its resident memory from
# /proc/PID/status at the end; the relay's GC pauses in that window from its GC log, and its codec
# floor (decompression, validated label walk and label-set hash of every body, plus the compression
# of the split batches) timed by the generator on the same bodies before the run, paced at the run's
# rate (the "floor" column) and back to back ("b2b"). Prints one
# markdown row per run; full output under relay-bench/target/rates/.
#
#   relay-bench/rates.sh [ROUNDS] [RATES] [SHAPES] [TOOLS]
#
#   ROUNDS  default 1
#   RATES   requests/s, default "25 100 400"
#   SHAPES  default "single interleaved tenants-1000x5 mix"
#   TOOLS   default "relay vmagent vmagent-1.79": relay-server/target/prw-relay.jar with the flags
#           docker/entrypoint.sh computes for a 512 MiB container; vmagent from $VMAGENT (default
#           /root/go/bin/vmagent) and vmagent-1.79 from /usr/bin/vmagent, each with one
#           -remoteWrite.url per tenant, a keep relabelling on the tenant label and the tenant in
#           X-Scope-OrgID (the newer one with -remoteWrite.forcePromProto). vmagent is not run for
#           tenants-1000x5 (a thousand remote-write queues).
#
# Run from the repository root after 'mvn -q package -DskipTests'. WARMUP and DURATION (seconds,
# default 45 and 20) set the generator's windows: at 25 requests/s the JIT compiler is still busy
# in the relay 30 s after its start on a loaded machine (a cost of its first minute, not of its
# steady state), so the warm-up is longer than the load generator's default.
set -u

rounds=${1:-1}
rates=${2:-25 100 400}
shapes=${3:-single interleaved tenants-1000x5 mix}
tools=${4:-relay vmagent vmagent-1.79}
warmup=${WARMUP:-45}
duration=${DURATION:-20}
vmagent=${VMAGENT:-/root/go/bin/vmagent}
jar=relay-server/target/prw-relay.jar
out=relay-bench/target/rates
sink_port=19009
port=18429
series=2000
hz=$(getconf CLK_TCK)
mkdir -p "$out"

args_of() {
  case $1 in
    single) echo "--shape single" ;;
    interleaved) echo "--shape interleaved" ;;
    tenants-1000x5) echo "--tenants 1000 --series-per-request 5000" ;;
    mix) echo "--shape mix" ;;
    *) echo "unknown shape $1" >&2; exit 2 ;;
  esac
}

tenants_of() {
  case $1 in
    tenants-1000x5) echo 1000 ;;
    *) echo 10 ;;
  esac
}

cpu_ticks() { # utime + stime of PID
  awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}

start_tool() { # tool shape dir; prints the PID
  local tool=$1 dir=$3 n i
  case $tool in
    relay)
      java -Xmx214m -XX:MaxDirectMemorySize=161m -XX:MaxNewSize=53m -XX:MaxRAM=512m \
        -XX:+ExitOnOutOfMemoryError "-Xlog:gc:file=$dir/gc.log:timemillis" \
        -Drelay.server.host=127.0.0.1 -Drelay.server.port=$port \
        -Drelay.downstream.url=http://127.0.0.1:$sink_port/api/v1/push \
        -jar "$jar" > "$dir/tool.log" 2>&1 &
      ;;
    vmagent*)
      local bin=$vmagent extra=-remoteWrite.forcePromProto
      if [ "$tool" = vmagent-1.79 ]; then bin=/usr/bin/vmagent; extra=""; fi
      n=$(tenants_of "$2")
      set --
      i=0
      while [ "$i" -lt "$n" ]; do
        printf -- '- action: keep\n  source_labels: [service_id]\n  regex: tenant-%d\n' "$i" \
          > "$dir/keep-$i.yml"
        set -- "$@" -remoteWrite.url=http://127.0.0.1:$sink_port/api/v1/push \
          "-remoteWrite.urlRelabelConfig=$dir/keep-$i.yml" \
          "-remoteWrite.headers=X-Scope-OrgID:tenant-$i"
        if [ -n "$extra" ]; then set -- "$@" "$extra"; fi
        i=$((i + 1))
      done
      "$bin" -httpListenAddr=127.0.0.1:$port "-remoteWrite.tmpDataPath=$dir/queue" \
        -loggerLevel=WARN "$@" > "$dir/tool.log" 2>&1 &
      ;;
  esac
  # The tool's own process, not a wrapper that started it.
  local pid=$! child
  sleep 0.5
  case $(cat "/proc/$pid/comm" 2>/dev/null) in
    java | vmagent) ;;
    *) child=$(pgrep -P "$pid" | head -1); [ -n "$child" ] && pid=$child ;;
  esac
  echo "$pid"
}

run() { # tool rate shape round
  local tool=$1 rate=$2 shape=$3 dir pid t0 t1 c0 c1 w0 w1 line gc
  dir="$out/$3-$2-$1-$4"
  rm -rf "$dir"
  mkdir -p "$dir"
  pid=$(start_tool "$tool" "$shape" "$dir")
  for _ in $(seq 100); do
    if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then break; fi
    sleep 0.2
  done
  # The relay's codec floor (what it cannot avoid for the same bodies), timed in the generator
  # before the run.
  floor=0s
  if [ "$tool" = relay ]; then floor=2s; fi
  # shellcheck disable=SC2046
  java -jar relay-bench/target/loadgen.jar --relay-url http://127.0.0.1:$port/api/v1/write \
    --sink-port $sink_port --connections 8 --rate "$rate" --series-per-request $series \
    --warmup "${warmup}s" --duration "${duration}s" --codec-floor $floor $(args_of "$shape") 2>&1 |
    while IFS= read -r line; do
      printf '%s\n' "$line"
      case $line in
        *" measuring "*) if [ ! -f "$dir/w0" ]; then
          echo "$(cpu_ticks "$pid") $(date +%s%3N)" > "$dir/w0"; fi ;;
        *" finishing "*) if [ ! -f "$dir/w1" ]; then
          echo "$(cpu_ticks "$pid") $(date +%s%3N)" > "$dir/w1"; fi ;;
      esac
    done > "$dir/loadgen.txt"
  grep -E '^Vm(HWM|RSS)' "/proc/$pid/status" > "$dir/memory.txt" 2>/dev/null
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  read -r c0 w0 < "$dir/w0" 2>/dev/null || { c0=0; w0=0; }
  read -r c1 w1 < "$dir/w1" 2>/dev/null || { c1=0; w1=0; }
  gc="-"
  if [ "$tool" = relay ]; then
    # Pauses whose log time falls inside the window: "[1764282000123ms] GC(7) Pause Young ... 3.1ms".
    gc=$(awk -v a="$w0" -v b="$w1" -F'[][]' '
      / Pause / { t = $2; sub(/ms$/, "", t); if (t + 0 >= a && t + 0 <= b) {
        ms = $NF; sub(/.* /, "", ms); sub(/ms$/, "", ms); n++; s += ms; if (ms + 0 > m) m = ms + 0 } }
      END { printf "%d / %.1f / %.1f", n, s, m }' "$dir/gc.log")
  fi
  awk -v tool="$tool" -v rate="$rate" -v shape="$shape" -v hz="$hz" -v cpu=$((c1 - c0)) \
      -v secs="$(( (w1 - w0) ))" -v gc="$gc" -v load="$(cut -d' ' -f1 /proc/loadavg)" \
      -v hwm="$(awk '/VmHWM/ { print $2 }' "$dir/memory.txt")" \
      -v rss="$(awk '/VmRSS/ { print $2 }' "$dir/memory.txt")" '
    /^series / { n = $2; gsub(/,/, "", n); gsub(/[(),\/s]/, "", $3); sps = $3 }
    /^latency / { p50 = $3; p99 = $9; gsub(/,/, "", p50); gsub(/,/, "", p99) }
    /^codec floor/ { floor = $3; if (match($0, /[0-9.]+ back to back/)) b2b = substr($0, RSTART, RLENGTH) + 0 }
    /^RESULT/ { result = $2 }
    END {
      cps = secs > 0 ? cpu / hz / (secs / 1000) : 0
      per = sps > 0 ? cps / sps * 1e6 : 0
      f = floor > 0 ? sprintf("%.3f | %.2f | %.3f | %.2f", floor, per / floor, b2b, b2b > 0 ? per / b2b : 0) : "- | - | - | -"
      printf "| %s | %s | %s | %s | %.3f | %s | %.2f | %s | %s | %.0f / %.0f | %s | %s | %s |\n",
        shape, rate, tool, sps, per, f, cps, p50, p99, hwm / 1024, rss / 1024, gc, result, load
    }' "$dir/loadgen.txt"
}

echo "| shape | req/s | tool | series/s | CPU-s per M series | floor | ÷ floor | b2b floor | ÷ b2b | cores | p50 ms | p99 ms | RSS peak / end MB | GC pauses n / total / max ms | result | load |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"
r=1
while [ "$r" -le "$rounds" ]; do
  for rate in $rates; do
    for shape in $shapes; do
      order=$tools
      if [ $((r % 2)) -eq 0 ]; then order=$(echo "$tools" | tr ' ' '\n' | tac | tr '\n' ' '); fi
      for tool in $order; do
        case $tool in vmagent*) [ "$shape" = tenants-1000x5 ] && continue ;; esac
        run "$tool" "$rate" "$shape" "$r"
      done
    done
  done
  r=$((r + 1))
done
