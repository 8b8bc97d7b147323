#!/usr/bin/env bash
# Instructions per dispatch, counted by callgrind (stable on a noisy machine), and the ratios
# the README quotes: pipeline / by_hand and staged / pipeline.
# Per call: the difference between runs of 2n and n calls, so that setup and the heap work
# that follows it (glibc's first consolidation) cancel out.
# glibc's heap is made steady (no fast bins to consolidate, no trimming or mapping back and
# forth): with malloc about half of every count, its housekeeping moved per-call counts by up to
# 8% between runs of the same binary; with these settings they repeat within 1%.
steady=glibc.malloc.mxfast=0:glibc.malloc.trim_threshold=4294967295:glibc.malloc.top_pad=268435456:glibc.malloc.mmap_threshold=4294967295
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p toolprism --bench instructions --no-run 2>/dev/null
binary=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/instructions-* | grep -v '\.d$' | head -n 1)
count() {
    GLIBC_TUNABLES=$steady valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" "$1" "$2" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
n=2000
declare -A per_call
for path in by_hand pipeline staged; do
    base=$(count "$path" "$n")
    total=$(count "$path" $((2 * n)))
    per_call[$path]=$(( (total - base) / n ))
    echo "$path: ${per_call[$path]} instructions per call"
done
awk -v h="${per_call[by_hand]}" -v p="${per_call[pipeline]}" -v s="${per_call[staged]}" \
    'BEGIN { printf "pipeline / by_hand = %.3f\nstaged / pipeline = %.3f\n", p / h, s / p }'
