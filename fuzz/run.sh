#!/usr/bin/env bash
# Runs fuzz targets one after the other, each until it has used its budget of CPU seconds (or
# its optional wall-clock budget has passed, on a busy machine where a niced fuzzer gets little)
# (measured from /proc: the fuzzer plus its fork-mode children), niced, in fork mode (a crash,
# timeout or OOM is recorded and the run goes on). Logs, the growing corpus and the artifacts
# go to $OUT (default /tmp/augur-fuzz), outside the repository; seeds come from
# fuzz/corpus/<target> (and models/ for prism).
#
#   fuzz/run.sh DEADLINE_EPOCH target:cpu_seconds[:wall_seconds] ...
#   e.g. fuzz/run.sh $(date -d '+1 hour' +%s) prism:1200 explicit:600 &
#        fuzz/run.sh $(date -d '+1 hour' +%s) pctl:1200 drn:600 &     # at most two lanes
#
# Build first: (cd fuzz && cargo +nightly fuzz build -O).
set -u
deadline=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/fuzz/target/x86_64-unknown-linux-gnu/release
out=${OUT:-/tmp/augur-fuzz}
tck=$(getconf CLK_TCK)
mkdir -p "$out"
cpu_of() { # utime+stime+cutime+cstime of $1 and the utime+stime of its live children, in s
  local t c
  t=$(awk -v t="$tck" '{print int(($14+$15+$16+$17)/t)}' "/proc/$1/stat" 2>/dev/null || echo 0)
  for c in $(pgrep -P "$1"); do
    t=$((t + $(awk -v t="$tck" '{print int(($14+$15)/t)}' "/proc/$c/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}
for spec in "$@"; do
  IFS=: read -r t budget wall <<< "$spec"
  now=$(date +%s); [ "$now" -ge "$deadline" ] && break
  stop_at=$deadline; [ -n "$wall" ] && [ $((now + wall)) -lt "$deadline" ] && stop_at=$((now + wall))
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
  extra=(); [ "$t" = prism ] && extra=("$root/models")
  round=$(ls "$out/$t".*.log 2>/dev/null | wc -l)
  log=$out/$t.$round.log
  echo "start $(date -u +%FT%TZ) budget ${budget}s cpu, until $(date -u -d @"$stop_at" +%T)" > "$log.meta"
  nice -n 19 "$bin/$t" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -rss_limit_mb=2048 -timeout=10 -max_total_time=$((stop_at - now)) \
    -artifact_prefix="$out/artifacts/$t/" -print_final_stats=1 \
    "$out/corpus/$t" "$root/fuzz/corpus/$t" "${extra[@]}" > "$log" 2>&1 &
  pid=$!
  cpu=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 10
    c=$(cpu_of "$pid"); [ "$c" -gt "$cpu" ] && cpu=$c
    echo "$(date -u +%T) cpu ${cpu}s" >> "$log.meta"
    if [ "$cpu" -ge "$budget" ] || [ "$(date +%s)" -ge "$stop_at" ]; then
      kids=$(pgrep -P "$pid")
      kill -INT "$pid"; sleep 3
      for k in $kids; do kill -TERM "$k" 2>/dev/null; done
      sleep 2; kill -0 "$pid" 2>/dev/null && kill -TERM "$pid"
    fi
  done
  wait "$pid"
  echo "end $(date -u +%FT%TZ) cpu ${cpu}s" >> "$log.meta"
done
