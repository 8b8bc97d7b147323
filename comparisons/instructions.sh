#!/usr/bin/env bash
# Instructions per call, counted by callgrind (`scripts/callgrind.sh`), for the speed bench's
# cases: toolprism's dispatch, rmcp's `call_tool` with its router stored, and the serde floor,
# and the ratios docs/performance.md quotes. Built without rig (`preserve_order` off), like the timings.
#
# `comparisons/instructions.sh`
set -euo pipefail
cd "$(dirname "$0")"
source ../scripts/callgrind.sh
cargo bench --no-default-features --bench speed --no-run 2>/dev/null
binary=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/speed-* | grep -v '\.d$' | head -n 1)
for case in read add many; do
    case $case in read) n=200 ;; *) n=2000 ;; esac
    declare -A per
    for side in serde_floor toolprism rmcp_stored; do
        per[$side]=$(median_per_call "$n" "$binary" instructions "$case" "$side")
    done
    awk -v c="$case" -v f="${per[serde_floor]}" -v t="${per[toolprism]}" -v r="${per[rmcp_stored]}" \
        'BEGIN { printf "%s: serde floor %d, toolprism %d, rmcp stored %d instructions per call; toolprism / rmcp = %.3f; above the floor %d vs %d\n", c, f, t, r, t / r, t - f, r - f }'
done
# What a configured feature adds to `add`: a time limit on the tool, and a caller whose scope the
# tool requires (checked before the body runs), against the same call with nothing configured.
declare -A configured
for side in toolprism toolprism_timeout toolprism_caller; do
    configured[$side]=$(median_per_call 2000 "$binary" instructions add "$side")
done
awk -v p="${configured[toolprism]}" -v t="${configured[toolprism_timeout]}" -v c="${configured[toolprism_caller]}" \
    'BEGIN { printf "configured: add %d; with a time limit %d (%.3fx); with a caller and a scope %d (%.3fx) instructions per call\n", p, t, t / p, c, c / p }'
