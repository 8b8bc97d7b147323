#!/usr/bin/env bash
# Instructions per dispatch, counted by callgrind (`scripts/callgrind.sh`), and the ratios
# docs/performance.md quotes: pipeline / by_hand and staged / pipeline.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/callgrind.sh
cargo bench -p toolprism --bench instructions --no-run 2>/dev/null
binary=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/instructions-* | grep -v '\.d$' | head -n 1)
declare -A per
for path in by_hand pipeline read_back staged; do
    per[$path]=$(median_per_call 2000 "$binary" "$path")
    echo "$path: ${per[$path]} instructions per call"
done
awk -v h="${per[by_hand]}" -v p="${per[pipeline]}" -v b="${per[read_back]}" -v s="${per[staged]}" \
    'BEGIN { printf "pipeline / by_hand = %.3f (#[verbatim] value)\nread_back / by_hand = %.3f (any value type)\nstaged / pipeline = %.3f\n", p / h, b / h, s / p }'
