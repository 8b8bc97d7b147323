#!/usr/bin/env bash
# Instructions per call, counted by callgrind (stable on a noisy machine), for the speed bench's
# cases: toolprism's dispatch, rmcp's `call_tool` with its router stored, and the serde floor,
# and the ratios the README quotes. Built without rig (`preserve_order` off), like the timings.
# Per call: the difference between runs of 2n and n calls, so that setup and the heap work
# that follows it (glibc's first consolidation) cancel out.
# glibc's heap is made steady (no fast bins to consolidate, no trimming or mapping back and
# forth): with malloc about half of every count, its housekeeping moved per-call counts by up to
# 8% between runs of the same binary; with these settings they repeat within 1%.
steady=glibc.malloc.mxfast=0:glibc.malloc.trim_threshold=4294967295:glibc.malloc.top_pad=268435456:glibc.malloc.mmap_threshold=4294967295
#
# `comparisons/instructions.sh`
set -euo pipefail
cd "$(dirname "$0")"
cargo bench --no-default-features --bench speed --no-run 2>/dev/null
binary=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/speed-* | grep -v '\.d$' | head -n 1)
count() {
    GLIBC_TUNABLES=$steady valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" instructions "$@" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for case in read add many; do
    case $case in read) n=200 ;; *) n=2000 ;; esac
    declare -A per
    for side in serde_floor toolprism rmcp_stored; do
        base=$(count "$case" "$side" "$n")
        total=$(count "$case" "$side" $((2 * n)))
        per[$side]=$(( (total - base) / n ))
    done
    awk -v c="$case" -v f="${per[serde_floor]}" -v t="${per[toolprism]}" -v r="${per[rmcp_stored]}" \
        'BEGIN { printf "%s: serde floor %d, toolprism %d, rmcp stored %d instructions per call; toolprism / rmcp = %.3f; above the floor %d vs %d\n", c, f, t, r, t / r, t - f, r - f }'
done
