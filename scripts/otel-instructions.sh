#!/usr/bin/env bash
# Instructions per dispatch of `add(2, 3)` under each tracing setup of toolprism-otel's
# overhead benchmark, counted by callgrind (`scripts/callgrind.sh`), and each over the
# dispatch with no subscriber: the ratios docs/telemetry.md quotes.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/callgrind.sh
cargo bench -p toolprism-otel --bench otel_instructions --no-run 2>/dev/null
binary=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/otel_instructions-* | grep -v '\.d$' | head -n 1)
declare -A per
for setup in no_subscriber nothing_sampled nothing_sampled_with_metrics sampled_exporting; do
    per[$setup]=$(median_per_call 2000 "$binary" "$setup")
done
for setup in no_subscriber nothing_sampled nothing_sampled_with_metrics sampled_exporting; do
    awk -v s="$setup" -v n="${per[$setup]}" -v b="${per[no_subscriber]}" \
        'BEGIN { printf "%s: %d instructions per call, %.3f x no_subscriber\n", s, n, n / b }'
done
