#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/seed-* from models/ and the test fixtures (the committed seeds).
set -euo pipefail
cd "$(dirname "$0")/.."
c=fuzz/corpus
mkdir -p $c/{prism,pctl,explicit,drn,json,traces,spec,policy,classifier,monitor}
seed() { # target name file
  [ -s "$3" ] && head -c 65536 "$3" > "$c/$1/seed-$2"
}
for f in models/*.pm tests/fixtures/errors/*.pm ../shared/prism-tests/*.pm; do
  [ -e "$f" ] && [ "$(stat -c %s "$f")" -lt 8192 ] && seed prism "$(basename "$f")" "$f"
done 2>/dev/null || true
for f in models/*.props tests/fixtures/*.props tests/fixtures/errors/*.props ../shared/prism-tests/*.props; do seed pctl "$(basename "$f")" "$f"; done
for t in models/safetydrift tests/fixtures/bounded-reach-1 tests/fixtures/dtmc_total_reward; do
  { cat "$t.tra"; for e in lab srew trew sta; do printf '\0'; [ -e "$t.$e" ] && cat "$t.$e"; done; } > "$c/explicit/seed-$(basename "$t")"
done
for f in tests/fixtures/errors/*.tra; do seed explicit "$(basename "$f")" "$f"; done
for f in models/*.drn tests/fixtures/errors/*.drn; do seed drn "$(basename "$f")" "$f"; done
for f in models/*.json tests/fixtures/*.json tests/fixtures/errors/*.json; do seed json "$(basename "$f")" "$f"; done
for f in models/microwave/traces.jsonl tests/fixtures/errors/*.jsonl; do
  { printf '\0'; head -c 8192 "$f"; } > "$c/traces/seed-$(basename "$f")"
done
for f in tests/fixtures/errors/*.csv; do { printf '\1'; cat "$f"; } > "$c/traces/seed-$(basename "$f")"; done
for f in models/microwave/spec.toml tests/fixtures/errors/spec.toml tests/fixtures/errors/bad_*.toml tests/fixtures/errors/undeclared.toml; do seed spec "$(basename "$f")" "$f"; done
for f in models/microwave/policy.toml models/monitor/policy.toml; do seed policy "$(basename "$(dirname "$f")")-policy.toml" "$f"; done
seed classifier classifier.toml models/classifier.toml
# monitor: fuzz/corpus/monitor/seed-safetydrift.monitor.json is `augur monitor compile models/safetydrift.tra --prop 'P=? [ F<=5 "violated" ]'`
ls $c/* | head -100 >/dev/null
