#!/bin/sh
# The request shapes of BENCHMARKS.md ("What is measured"), end to end, against two relay jars in the
# same run: for each round and shape, the jar under test and a baseline jar one after the other (the order
# alternating from round to round, so that a machine that slows down during the run weighs on both),
# each with the load generator's own codec floor measured on the same bodies just before it. Prints
# one markdown row per run: series/s, relay CPU-s per million series, the floor, their ratio,
# allocation per sender request, and the generator's verdict. Its full output goes to
# relay-bench/target/shapes/.
#
#   relay-bench/shapes.sh BASELINE_JAR [ROUNDS] [SHAPE...]
#
# Run from the repository root after 'mvn -q package -DskipTests'; BASELINE_JAR is a prw-relay.jar
# built from another commit (e.g. from 'git archive <commit> | tar -x -C /tmp/base' and a package
# build there). SHAPE is one of single, interleaved, tenants-1000x5, mix (default: all four).
set -eu

base=$1
rounds=${2:-1}
shift $(($# < 2 ? $# : 2))
shapes=${*:-single interleaved tenants-1000x5 mix}
new=relay-server/target/prw-relay.jar
out=relay-bench/target/shapes
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

run() { # shape label jar round
  log="$out/$1-$2-$4.txt"
  # shellcheck disable=SC2046
  java -jar relay-bench/target/loadgen.jar --spawn-relay "$3" --connections 8 --rate 0 \
    --warmup 10s --duration 20s $(args_of "$1") > "$log" 2>&1 || true
  awk -v shape="$1" -v jar="$2" -v load="$(cut -d' ' -f1 /proc/loadavg)" '
    /^series / { gsub(/[(),\/s]/, "", $3); rate = $3 }
    /^relay CPU/ { for (i = 1; i <= NF; i++) if ($i == "CPU-s") cpu = $(i - 1) }
    /^relay allocation/ { for (i = 1; i <= NF; i++) if ($i == "per" && $(i + 1) == "sender") alloc = $(i - 2) }
    /^codec floor/ { floor = $3; for (i = 1; i <= NF; i++) if ($i == "×") ratio = $(i - 1) }
    /^RESULT/ { result = $2 }
    END { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", shape, jar, rate, cpu, floor, ratio, alloc, result, load }
  ' "$log"
}

echo "| shape | relay | series/s | relay CPU-s per M series | floor | relay / floor | B per sender request | result | load |"
echo "|---|---|---:|---:|---:|---:|---:|---|---:|"
r=1
while [ "$r" -le "$rounds" ]; do
  for s in $shapes; do
    if [ $((r % 2)) -eq 1 ]; then
      run "$s" new "$new" "$r"
      run "$s" base "$base" "$r"
    else
      run "$s" base "$base" "$r"
      run "$s" new "$new" "$r"
    fi
  done
  r=$((r + 1))
done
