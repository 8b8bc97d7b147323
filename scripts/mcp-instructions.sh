#!/usr/bin/env bash
# Instructions per MCP request, counted by callgrind (stable on a noisy machine): one
# `tools/call` and `tools/list` at 10/150/1,000 tools, through toolprism's server and through an
# rmcp `#[tool_router]` server, both driven by rmcp's client over an in-process pipe.
# Per call: the difference between runs of 2n and n calls, so that setup and the heap work
# that follows it (glibc's first consolidation) cancel out.
# glibc's heap is made steady (no fast bins to consolidate, no trimming or mapping back and
# forth): with malloc about half of every count, its housekeeping moved per-call counts by up to
# 8% between runs of the same binary; with these settings they repeat within 1%.
steady=glibc.malloc.mxfast=0:glibc.malloc.trim_threshold=4294967295:glibc.malloc.top_pad=268435456:glibc.malloc.mmap_threshold=4294967295
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p toolprism-mcp --bench mcp_instructions --no-run 2>/dev/null
binary=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/mcp_instructions-* | grep -v '\.d$' | head -n 1)
count() {
    GLIBC_TUNABLES=$steady valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" "$@" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for op in call list10 list150 list1000; do
    case $op in call) n=400 ;; list10) n=100 ;; list150) n=20 ;; *) n=4 ;; esac
    declare -A per
    for server in toolprism rmcp; do
        base=$(count "$server" "$op" "$n")
        total=$(count "$server" "$op" $((2 * n)))
        per[$server]=$(( (total - base) / n ))
    done
    awk -v op="$op" -v t="${per[toolprism]}" -v r="${per[rmcp]}" \
        'BEGIN { printf "%s: toolprism %d, rmcp %d instructions per request; toolprism / rmcp = %.3f\n", op, t, r, t / r }'
done
