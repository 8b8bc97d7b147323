#!/usr/bin/env bash
# Instructions per nested call from a Code Mode program, counted by callgrind
# (`scripts/callgrind.sh`), against the same dispatch from Rust and against the same program
# calling a JavaScript function: `(count of 2n calls − count of n) ÷ n`, so a run's start
# cancels out.
#
# `scripts/codemode-instructions.sh`
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/callgrind.sh
cargo bench -p toolprism-codemode --bench nested_instructions --no-run 2>/dev/null
binary=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/nested_instructions-* | grep -v '\.d$' | head -n 1)
declare -A per
per[rust]=$(median_per_call 400 "$binary" rust)
# A program's calls are counted on the engine's thread alone (`drive`): what the host's threads
# do meanwhile (parking, making the next run's runtime) depends on how they interleave.
for path in program javascript; do
    per[$path]=$(median_per_call 400 --toggle-collect='*engine*drive*' "$binary" "$path")
done
for path in rust program javascript; do
    echo "$path: ${per[$path]} instructions per call"
done
awk -v r="${per[rust]}" -v p="${per[program]}" -v j="${per[javascript]}" \
    'BEGIN { printf "program / rust = %.3f; javascript / rust = %.3f; the tool call beyond the JavaScript one: %d\n", p / r, j / r, p - j }'
