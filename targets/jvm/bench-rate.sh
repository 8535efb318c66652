#!/usr/bin/env bash
# Highest constant arrival rate each JVM model sustains on sleep:100 with p99 <= 1.1 x 100 ms
# and every request answered 200, measured with `iolab attack` (open loop, latency from the
# intended send time). Rates are tried in order and a model stops at its first miss; each
# step is bounded (DURATION at RATE, 2 s client timeout). Prints a markdown table.
# Usage: IOLAB_BIN=path/to/iolab targets/jvm/bench-rate.sh [MODEL ...]
#        env: RATES="100 200 400 800 1600" DURATION=10s STEPS=sleep:100 IO_MS=100 WARMUP=5000
# Each target first warms its JIT with WARMUP requests (scripts/jvm-target --warmup).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${IOLAB_BIN:?set IOLAB_BIN to an iolab binary (cargo build --release -p iolab)}
rates=${RATES:-100 200 400 800 1600}
duration=${DURATION:-10s}
steps=${STEPS:-sleep:100}
io_ms=${IO_MS:-100}
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(pool virtual loop-blocking loop-offload loop-async)

"$root/scripts/jvm-target" --build
run=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$run"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "| model | rate req/s | ok / planned | p50 ms | p99 ms | sustained (p99 <= $(awk -v m="$io_ms" 'BEGIN {print m * 1.1}') ms, all ok) |"
echo "| --- | --- | --- | --- | --- | --- |"
for m in "${models[@]}"; do
  "$root/scripts/jvm-target" --model "$m" --port 0 --warmup "${WARMUP:-5000}" >"$run/out" 2>"$run/err" &
  pid=$!
  url=""
  for _ in $(seq 3000); do
    url=$(head -n1 "$run/out" 2>/dev/null || true)
    [ -n "$url" ] && break
    sleep 0.05
  done
  [ -n "$url" ] || { echo "$m did not start" >&2; exit 1; }
  for r in $rates; do
    "$bin" attack "$url/work?steps=$steps" --rate "$r" --duration "$duration" --timeout 2s --json >"$run/a.json" 2>"$run/a.err" || true
    line=$(python3 - "$run/a.json" "$io_ms" <<'EOF'
import json, sys
try:
    a = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"? | ? | ? | attack failed: {e} | no"); sys.exit()
io = float(sys.argv[2])
req, lat = a["requests"], a["latency_ms"]
ok = req["ok"] == req["planned"] and lat["p99"] <= 1.1 * io
print(f'{req["ok"]} / {req["planned"]} | {lat["p50"]:.1f} | {lat["p99"]:.1f} | {"yes" if ok else "no"}')
EOF
)
    echo "| $m | $r | $line |"
    [[ $line == *"| yes" ]] || break
  done
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
done
