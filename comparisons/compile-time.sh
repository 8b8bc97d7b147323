#!/usr/bin/env bash
# Compile time of a crate of 100 tools, written with toolprism's `#[tool]` and with rmcp's
# `#[tool_router]`, in the four shapes tool authors write: `async fn` and `fn`, taking an
# argument struct or a parameter list, each returning a `String`; and in the most common shape
# as users write it (`async-result`): an `async fn` taking an argument struct declared just
# above it, returning `Result<String, ToolError>` (rmcp: `Result<String, ErrorData>`), the
# same with every struct above the tools (`async-result-above`), and the same with toolprism's
# structs written with `#[tool_args]` in place of the derives (`async-result-args`; rmcp's as
# in `async-result`). rmcp takes arguments only as
# a struct (`Parameters<T>`), so a toolprism parameter list is compared with rmcp's struct:
# the same tool written the way each framework asks. Same doc comments and bodies.
#
# For each shape, generates both crates under the build directory, builds their dependencies
# once, then times (median of 5, the two frameworks taking turns, wall clock, debug profile,
# incremental) a full build of the
# crate itself and a rebuild after a one-line edit of one tool's body (its format string, a
# character longer each run),
# counts the object code that rebuild wrote anew (the codegen units it could not reuse), and
# prints the ratios.
#
# Then counts the LLVM IR each crate of the first shape generates with `cargo llvm-lines`
# (pinned, installed under the build directory on first use): build times on a shared machine
# move by a fifth between runs, the generated code does not.
#
# `comparisons/compile-time.sh [tools] [shape ...]` (default 100, these shapes:
# async-struct sync-struct async-params sync-params async-result async-result-args; also
# async-result-above).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="${1:-100}"
shift || true
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(async-struct sync-struct async-params sync-params async-result async-result-args)
work="${CARGO_TARGET_DIR:-$root/target}/compile-time"
mkdir -p "$work"
export CARGO_TARGET_DIR="$work/target"

# The crate of `kind` (toolprism or rmcp) in `shape`, under `$work/$kind-$shape`.
generate() {
    local kind=$1 shape=$2 dir="$work/$1-$2"
    local asyncness='' params=struct result='' derives='#[derive(Deserialize, JsonSchema)]'
    case "$shape" in async-*) asyncness='async ' ;; esac
    case "$shape" in *-params) params=list ;; esac
    # A fallible body; the user's own struct beside each tool (`-result`) or all above them
    # (`-result-above`), to tell the two apart.
    case "$shape" in
        *-result) params=beside result=yes ;;
        *-result-above) result=yes ;;
        *-result-args)
            params=beside result=yes
            if [ "$kind" = toolprism ]; then derives='#[tool_args]'; fi
            ;;
    esac
    mkdir -p "$dir/src"
    {
        echo '[package]'
        echo "name = \"tools-$kind-$shape\""
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
    # An argument struct with its derives and documented fields.
    args_struct() {
        echo "/// The arguments of tool $1."
        echo "$derives"
        echo "pub struct Args$1 {"
        echo '    /// A name.'
        echo '    pub name: String,'
        echo '    /// A count.'
        echo '    pub count: u32,'
        echo '}'
    }
    {
        if [ "$kind" = toolprism ]; then
            echo 'use toolprism::prelude::*;'
            [ "$params" = beside ] && [ "$derives" != '#[tool_args]' ] && echo 'use schemars::JsonSchema;' && echo 'use serde::Deserialize;'
        else
            echo 'use rmcp::handler::server::wrapper::Parameters;'
            echo 'use rmcp::{ServerHandler, tool, tool_handler, tool_router};'
            echo 'use schemars::JsonSchema;'
            echo 'use serde::Deserialize;'
            echo '#[derive(Clone)]'
            echo 'pub struct Tools { tool_router: rmcp::handler::server::router::tool::ToolRouter<Self> }'
            echo 'impl Tools { pub fn new() -> Self { Self { tool_router: Self::tool_router() } } }'
            echo '#[tool_handler(router = self.tool_router)]'
            echo 'impl ServerHandler for Tools {}'
        fi
        if [ "$kind" = rmcp ] || [ "$params" = struct ]; then
            for i in $(seq 1 "$tools"); do args_struct "$i"; done
        fi
        [ "$kind" = toolprism ] || { echo '#[tool_router]'; echo 'impl Tools {'; }
        for i in $(seq 1 "$tools"); do
            # Tool 1's format string carries the mark the edit changes.
            local mark=''
            [ "$i" = 1 ] && mark=' (edit 0)'
            local body="format!(\"hello {} from $i, {} times$mark\", args.name, args.count)"
            local returns=String
            if [ -n "$result" ]; then
                body="Ok($body)"
                returns='Result<String, ToolError>'
                [ "$kind" = rmcp ] && returns='Result<String, rmcp::ErrorData>'
            fi
            # rmcp's tools sit in its router's `impl`: a struct beside each stays above it.
            [ "$params" = beside ] && [ "$kind" = toolprism ] && args_struct "$i"
            echo "/// Tool number $i: greets."
            if [ "$kind" = toolprism ]; then
                echo '#[tool]'
                if [ "$params" != list ]; then
                    echo "pub ${asyncness}fn tool_$i(args: Args$i) -> $returns {"
                else
                    echo "pub ${asyncness}fn tool_$i(#[arg(description = \"A name.\")] name: String, #[arg(description = \"A count.\")] count: u32) -> String {"
                    body="format!(\"hello {} from $i, {} times$mark\", name, count)"
                fi
            else
                echo '#[tool]'
                echo "pub ${asyncness}fn tool_$i(&self, Parameters(args): Parameters<Args$i>) -> $returns {"
            fi
            echo "    $body"
            echo '}'
        done
        if [ "$kind" = toolprism ]; then
            echo 'pub fn registry() -> Registry {'
            echo '    Registry::builder()'
            for i in $(seq 1 "$tools"); do echo "        .tool(Tool$i)"; done
            echo '        .build().unwrap()'
            echo '}'
        else
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

median() { printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"; }

# The object code the last edit's build wrote anew: the codegen units incremental compilation
# could not reuse, in bytes. Steadier than the times.
recompiled() {
    local crate=$1 marker=$2 session
    session=$(ls -td "$CARGO_TARGET_DIR"/debug/incremental/"${crate//-/_}"-*/s-* | grep -v '\.lock$' | sed -n 1p)
    find "$session" -name '*.o' -newer "$marker" -printf '%s\n' | awk '{ total += $1 } END { print total + 0 }'
}

runs=5
declare -A full edit written fulls edits
for shape in "${shapes[@]}"; do
    for kind in toolprism rmcp; do
        generate "$kind" "$shape"
        cargo build --manifest-path "$work/$kind-$shape/Cargo.toml" -q # dependencies, once
        fulls[$kind]='' edits[$kind]=''
    done
    # The two frameworks take turns, so that a change in the machine's load falls on both.
    for run in $(seq 1 $runs); do
        for kind in toolprism rmcp; do
            manifest="$work/$kind-$shape/Cargo.toml"
            cargo clean --manifest-path "$manifest" -p "tools-$kind-$shape" -q
            fulls[$kind]+=" $(seconds cargo build --manifest-path "$manifest")"
            # A one-line edit of one tool's body: its format string, a character longer each
            # run, so that (as in most edits) everything after it moves.
            sed -i "s/(edit [0-9]*)/(edit $(printf '%0*d' $((run + 1)) 0))/" "$work/$kind-$shape/src/lib.rs"
            touch "$work/marker-$kind" && sleep 0.1
            edits[$kind]+=" $(seconds cargo build --manifest-path "$manifest")"
        done
    done
    for kind in toolprism rmcp; do
        # shellcheck disable=SC2086 # the runs, one word each
        full[$kind]=$(median ${fulls[$kind]})
        # shellcheck disable=SC2086
        edit[$kind]=$(median ${edits[$kind]})
        written[$kind]=$(recompiled "tools-$kind-$shape" "$work/marker-$kind")
        echo "$shape, $kind: full build of the crate ${full[$kind]} s, one-line edit ${edit[$kind]} s, recompiled ${written[$kind]} bytes of object code"
    done
    awk -v shape="$shape" -v tf="${full[toolprism]}" -v rf="${full[rmcp]}" -v te="${edit[toolprism]}" -v re="${edit[rmcp]}" \
        -v tw="${written[toolprism]}" -v rw="${written[rmcp]}" \
        'BEGIN { printf "%s, toolprism / rmcp: full build %.2fx, one-line edit %.2fx, recompiled object code %.2fx\n", shape, tf / rf, te / re, tw / rw }'
done

llvm_lines_version=0.4.48
tools_root="$work/tools"
if ! "$tools_root/bin/cargo-llvm-lines" --version 2>/dev/null | grep -q "$llvm_lines_version"; then
    cargo install cargo-llvm-lines --version "=$llvm_lines_version" --locked --root "$tools_root" -q
fi
declare -A lines
for kind in toolprism rmcp; do
    # `cargo llvm-lines` is a cargo subcommand: found on PATH.
    lines[$kind]=$(cd "$work/$kind-${shapes[0]}" && PATH="$tools_root/bin:$PATH" cargo llvm-lines --lib 2>/dev/null \
        | awk '/\(TOTAL\)/ { print $1; exit }')
    echo "${shapes[0]}, $kind: ${lines[$kind]} lines of LLVM IR"
done
awk -v t="${lines[toolprism]}" -v r="${lines[rmcp]}" \
    'BEGIN { printf "toolprism / rmcp: %.2fx the LLVM IR\n", t / r }'
