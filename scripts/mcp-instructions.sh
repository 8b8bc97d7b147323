#!/usr/bin/env bash
# Instructions per MCP request, counted by callgrind (`scripts/callgrind.sh`): one `tools/call`
# and `tools/list` at 10/150/1,000 tools, through toolprism's server and through an rmcp
# `#[tool_router]` server, both driven by rmcp's client over an in-process pipe; and `handler`,
# the same call made on each server's `call_tool` directly (what each server's own code costs,
# without JSON-RPC). Each count is the median of five runs (a call) or three (a listing).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/callgrind.sh
cargo bench -p toolprism-mcp --bench mcp_instructions --no-run 2>/dev/null
binary=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/mcp_instructions-* | grep -v '\.d$' | head -n 1)
for op in call handler list10 list150 list1000; do
    # A call's count moves by up to 1.5% between runs (a listing's far less): five runs for it.
    case $op in call | handler) n=400 runs=5 ;; list10) n=100 runs=3 ;; list150) n=20 runs=3 ;; *) n=4 runs=3 ;; esac
    declare -A per
    for server in toolprism rmcp; do
        per[$server]=$(median_per_call "$n" "$binary" "$server" "$op")
    done
    awk -v op="$op" -v t="${per[toolprism]}" -v r="${per[rmcp]}" \
        'BEGIN { printf "%s: toolprism %d, rmcp %d instructions per request; toolprism / rmcp = %.3f\n", op, t, r, t / r }'
done
