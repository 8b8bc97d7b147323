#!/usr/bin/env bash
# Compile time of a crate of 100 tools, written with toolprism's `#[tool]` and with rmcp's
# `#[tool_router]`: the same argument types, doc comments and bodies. Generates both crates
# under the build directory, builds their dependencies once, then times (median of 3, wall
# clock, debug profile) a full build of the crate itself and a rebuild after a one-line edit
# of one tool's body, and prints the ratios.
#
# Then counts the LLVM IR each crate generates with `cargo llvm-lines` (pinned, installed under
# the build directory on first use): build times on a shared machine move by a fifth between
# runs, the generated code does not.
#
# `comparisons/compile-time.sh [tools]` (default 100).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="${1:-100}"
work="${CARGO_TARGET_DIR:-$root/target}/compile-time"
mkdir -p "$work"
export CARGO_TARGET_DIR="$work/target"

generate() {
    local kind=$1 dir="$work/$1"
    mkdir -p "$dir/src"
    {
        echo '[package]'
        echo "name = \"tools-$kind\""
        echo 'version = "0.0.0"'
        echo 'edition = "2024"'
        echo 'publish = false'
        echo '[workspace]'
        echo '[dependencies]'
        echo 'serde = { version = "1", features = ["derive"] }'
        echo 'schemars = "1"'
        echo 'serde_json = "1"'
        if [ "$kind" = toolprism ]; then
            echo "toolprism = { path = \"$root/runtime\" }"
        else
            echo 'rmcp = { version = "=3.11.0", default-features = false, features = ["server", "macros"] }'
        fi
    } > "$dir/Cargo.toml"
    {
        if [ "$kind" = toolprism ]; then
            echo 'use toolprism::prelude::*;'
        else
            echo 'use rmcp::handler::server::wrapper::Parameters;'
            echo 'use rmcp::{ServerHandler, tool, tool_handler, tool_router};'
            echo 'use schemars::JsonSchema;'
            echo 'use serde::{Deserialize, Serialize};'
            echo '#[derive(Clone)]'
            echo 'pub struct Tools { tool_router: rmcp::handler::server::router::tool::ToolRouter<Self> }'
            echo 'impl Tools { pub fn new() -> Self { Self { tool_router: Self::tool_router() } } }'
            echo '#[tool_handler(router = self.tool_router)]'
            echo 'impl ServerHandler for Tools {}'
        fi
        for i in $(seq 1 "$tools"); do
            echo "/// The arguments of tool $i."
            echo '#[derive(Deserialize, JsonSchema)]'
            echo "pub struct Args$i {"
            echo '    /// A name.'
            echo '    pub name: String,'
            echo '    /// A count.'
            echo '    pub count: u32,'
            echo '}'
            echo '#[derive(Serialize, JsonSchema)]'
            echo "pub struct Value$i { pub greeting: String, pub total: u64 }"
        done
        if [ "$kind" = toolprism ]; then
            for i in $(seq 1 "$tools"); do
                echo "/// Tool number $i: greets."
                echo '#[tool]'
                echo "pub fn tool_$i(args: Args$i) -> Value$i {"
                if [ "$i" = 1 ]; then echo '    let _edit = 0;'; fi
                echo "    Value$i { greeting: format!(\"hello {} from $i\", args.name), total: u64::from(args.count) + $i }"
                echo '}'
            done
            echo 'pub fn registry() -> Registry {'
            echo '    Registry::builder()'
            for i in $(seq 1 "$tools"); do echo "        .tool(Tool$i)"; done
            echo '        .build().unwrap()'
            echo '}'
        else
            echo '#[tool_router]'
            echo 'impl Tools {'
            for i in $(seq 1 "$tools"); do
                echo "    /// Tool number $i: greets."
                echo '    #[tool]'
                echo "    pub async fn tool_$i(&self, Parameters(args): Parameters<Args$i>) -> rmcp::Json<Value$i> {"
                if [ "$i" = 1 ]; then echo '        let _edit = 0;'; fi
                echo "        rmcp::Json(Value$i { greeting: format!(\"hello {} from $i\", args.name), total: u64::from(args.count) + $i })"
                echo '    }'
            done
            echo '}'
        fi
    } > "$dir/src/lib.rs"
}

seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" > /dev/null 2>&1
    end=$(date +%s.%N)
    awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }'
}

median() { printf '%s\n' "$@" | sort -g | sed -n '2p'; }

declare -A full edit
for kind in toolprism rmcp; do
    generate "$kind"
    manifest="$work/$kind/Cargo.toml"
    cargo build --manifest-path "$manifest" -q # dependencies, once
    fulls=() edits=()
    for run in 1 2 3; do
        cargo clean --manifest-path "$manifest" -p "tools-$kind" -q
        fulls+=("$(seconds cargo build --manifest-path "$manifest")")
        # A one-line edit of one tool's body.
        sed -i "s/let _edit = [0-9]*;/let _edit = $run;/" "$work/$kind/src/lib.rs"
        edits+=("$(seconds cargo build --manifest-path "$manifest")")
    done
    full[$kind]=$(median "${fulls[@]}")
    edit[$kind]=$(median "${edits[@]}")
    echo "$kind: full build of the crate ${full[$kind]} s, one-line edit ${edit[$kind]} s"
done
awk -v tf="${full[toolprism]}" -v rf="${full[rmcp]}" -v te="${edit[toolprism]}" -v re="${edit[rmcp]}" \
    'BEGIN { printf "toolprism / rmcp: full build %.2fx, one-line edit %.2fx\n", tf / rf, te / re }'

llvm_lines_version=0.4.48
tools_root="$work/tools"
if ! "$tools_root/bin/cargo-llvm-lines" --version 2>/dev/null | grep -q "$llvm_lines_version"; then
    cargo install cargo-llvm-lines --version "=$llvm_lines_version" --locked --root "$tools_root" -q
fi
declare -A lines
for kind in toolprism rmcp; do
    # `cargo llvm-lines` is a cargo subcommand: found on PATH.
    lines[$kind]=$(cd "$work/$kind" && PATH="$tools_root/bin:$PATH" cargo llvm-lines --lib 2>/dev/null \
        | awk '/\(TOTAL\)/ { print $1; exit }')
    echo "$kind: ${lines[$kind]} lines of LLVM IR"
done
awk -v t="${lines[toolprism]}" -v r="${lines[rmcp]}" \
    'BEGIN { printf "toolprism / rmcp: %.2fx the LLVM IR\n", t / r }'
