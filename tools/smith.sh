#!/usr/bin/env bash
# The long run of seam-smith (the differential random-graph tester): one
# worker per core, each running rounds of seam-smith with a new seed per
# round until the time limit; failures are reduced and written as .mlir
# reproducers (lit tests once fixed) under OUT.
#
#   tools/smith.sh [SECONDS] [OUT]    default 3600 s, results/smith
#
# SEAM_BIN (default build/bin) names the binaries; SMITH_SEED fixes the
# first seed (default: the start time), so a run can be repeated. Prints
# graphs per minute and the outcome counts over every worker at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3600}
out=${2:-results/smith}
bin=${SEAM_BIN:-build/bin}
seed0=${SMITH_SEED:-$(date +%s)}
jobs=$(nproc)
[ -x "$bin/seam-smith" ] || { echo "smith.sh: no $bin/seam-smith (build it)" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/worker*.log
start=$(date +%s)
echo "smith.sh: $jobs worker(s) for $secs s from seed $seed0; reproducers and logs in $out"

worker() {
  local w=$1 round=0 left seed
  while :; do
    left=$((start + secs - $(date +%s)))
    [ "$left" -gt 0 ] || break
    # Seeds of different workers and rounds never meet.
    seed=$((seed0 * 1000 + round * jobs + w))
    "$bin/seam-smith" --seed "$seed" --count 100000 --time-limit "$left" \
      --keep-going --out "$out" >> "$out/worker$w.log" 2>&1 || true
    round=$((round + 1))
  done
}

pids=()
for ((w = 0; w < jobs; ++w)); do
  worker "$w" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

# Sum the per-round summaries of every worker.
wall=$(($(date +%s) - start))
cat "$out"/worker*.log | awk -v wall="$wall" '
  /^seam-smith: seed / {
    for (i = 1; i <= NF; ++i) {
      if ($i == "graphs" && $(i + 1) == "in") { graphs += $(i - 1); secs += $(i + 2) }
      if ($i ~ /^(pass|invalid-graph|compile-error|run-error|fault|mismatch|reference-error)$/)
        count[$i] += $(i + 1)
    }
  }
  /^FAIL graph / { print }
  END {
    printf "smith.sh: %d graphs in %d s: %.0f graphs/minute (%.0f per worker)", graphs, wall,
      (wall > 0 ? 60 * graphs / wall : 0), (secs > 0 ? 60 * graphs / secs : 0)
    n = split("pass invalid-graph compile-error run-error fault mismatch reference-error", k, " ")
    for (i = 1; i <= n; ++i) printf " %s %d", k[i], count[k[i]]
    printf "\n"
  }'
