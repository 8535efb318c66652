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

  # HOLD requests outstanding, opened 100 at a time every 250 ms (all at once would overflow
  # the listen backlog and leave most clients in SYN retry), each URL once, one connection each.
  batches=$(( (hold + 99) / 100 ))
  loads=()
  for b in $(seq "$batches"); do
    n=$(( b < batches ? 100 : hold - 100 * (batches - 1) ))
    for i in $(seq "$n"); do echo "url = \"$url/work?steps=sleep:$hold_ms&b=$b&i=$i\""; echo "output = /dev/null"; done >"$run/urls$b"
    curl -s --no-progress-meter --parallel --parallel-immediate --parallel-max 100 \
      --max-time $(( hold_ms / 1000 + 10 )) -K "$run/urls$b" -w '%{http_code}\n' >"$run/codes$b" &
    loads+=($!)
    sleep 0.25
  done
  sleep "$(awk -v ms="$hold_ms" -v r="$batches" 'BEGIN {t = ms / 1000 * 0.6 - r * 0.25; print (t < 0.5 ? 0.5 : t)}')"
  held=$(rss_mb "$pid")
  threads=$(threads_of "$pid")
  in_flight=$(metric "$url" iolab_requests_in_flight)
  in_flight=${in_flight:-queued}
  for l in "${loads[@]}"; do wait "$l" || true; done
  per1k=$(awk -v a="$held" -v b="$idle" -v n="$hold" 'BEGIN {printf "%.0f", (a - b) / n * 1000}')
  ok=$(cat "$run"/codes* | grep -c '^200$' || true)
  printf '| %s | %.1f | %s | %s | %s | %s | %s |\n' "$m" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
    "$idle" "$held" "${in_flight%.*}" "$per1k" "$threads"
  echo "$m: $ok of $hold answered 200 within $(( hold_ms / 1000 + 10 )) s" >&2
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
done
