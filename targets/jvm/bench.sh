#!/usr/bin/env bash
# Footprint of each JVM model, printed as a markdown table (docs/jvm.md):
#   startup  seconds from exec to the first 200 on /health (jar already built)
#   idle     RSS after start plus 20 warm-up requests, MiB
#   held     RSS with HOLD requests of sleep:HOLD_MS outstanding at once (client side), MiB
#   served   requests the target reported in flight at that moment (/metrics; "queued"
#            when /metrics itself waits behind the sleeping requests, as under `pool`)
#   per1k    (held - idle) / HOLD x 1000: MiB per 1,000 outstanding requests
#   threads  OS threads of the process at that moment (/proc)
# Load is curl --parallel on loopback only, bounded in count and time.
# Usage: targets/jvm/bench.sh [MODEL ...]   env: HOLD=1000 HOLD_MS=8000
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
hold=${HOLD:-1000}
hold_ms=${HOLD_MS:-8000}
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(pool virtual loop-blocking loop-offload loop-async)

"$root/scripts/jvm-target" --build
run=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$run"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

rss_mb() { awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
metric() { curl -s --max-time 3 "$1/metrics" | awk -v m="$2" '$1 == m {print $2}' || true; }
threads_of() { awk '/^Threads/ {print $2}' "/proc/$1/status"; }
now() { date +%s.%N; }

echo "| model | startup s | idle RSS MiB | RSS with $hold x sleep:$hold_ms outstanding, MiB | served in flight | MiB per 1,000 outstanding | OS threads |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for m in "${models[@]}"; do
  t0=$(now)
  "$root/scripts/jvm-target" --model "$m" --port 0 >"$run/out" 2>"$run/err" &
  pid=$!
  url=""
  for _ in $(seq 3000); do
    url=$(head -n1 "$run/out" 2>/dev/null || true)
    [ -n "$url" ] && break
    sleep 0.02
  done
  [ -n "$url" ] || { echo "$m did not start" >&2; tail "$run/err" >&2; exit 1; }
  until curl -s -o /dev/null -f --max-time 2 "$url/health"; do sleep 0.01; done
  t1=$(now)
  for _ in $(seq 20); do curl -s -o /dev/null "$url/work?steps=sleep:1"; done
  sleep 2
  idle=$(rss_mb "$pid")

  # HOLD requests at once: each URL once, one connection each.
  for i in $(seq "$hold"); do echo "url = \"$url/work?steps=sleep:$hold_ms&i=$i\""; echo "output = /dev/null"; done >"$run/urls"
  curl -s --no-progress-meter --parallel --parallel-immediate --parallel-max "$hold" --max-time 120 -K "$run/urls" -w '%{http_code}\n' >"$run/codes" &
  load=$!
  sleep "$(awk -v ms="$hold_ms" 'BEGIN {print ms / 1000 * 0.75}')"
  held=$(rss_mb "$pid")
  threads=$(threads_of "$pid")
  in_flight=$(metric "$url" iolab_requests_in_flight)
  in_flight=${in_flight:-queued}
  wait "$load" || true
  per1k=$(awk -v a="$held" -v b="$idle" -v n="$hold" 'BEGIN {printf "%.0f", (a - b) / n * 1000}')
  ok=$(grep -c '^200$' "$run/codes" || true)
  printf '| %s | %.1f | %s | %s | %s | %s | %s |\n' "$m" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
    "$idle" "$held" "${in_flight%.*}" "$per1k" "$threads"
  echo "$m: $ok of $hold answered 200" >&2
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
done
