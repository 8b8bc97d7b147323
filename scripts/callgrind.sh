# Sourced by the instruction-count scripts (`scripts/instructions.sh`,
# `scripts/mcp-instructions.sh`, `scripts/codemode-instructions.sh`, `comparisons/instructions.sh`):
# one way of counting for all.
#
# Counts come from callgrind, the same whatever else the machine is doing. glibc's heap is held
# steady (no fast bins to consolidate, no trimming or mapping back and forth): with malloc about
# half of every count, its housekeeping moved a per-call count by up to 8% between runs of the
# same binary; with these settings counts repeat within 1%.
steady_heap=glibc.malloc.mxfast=0:glibc.malloc.trim_threshold=4294967295:glibc.malloc.top_pad=268435456:glibc.malloc.mmap_threshold=4294967295

# `per_call n command…`: instructions per call of `command… calls`, from runs of 2n and n calls,
# so that setup and the heap work that follows it cancel out.
per_call() {
    local n=$1
    shift
    local base total
    base=$(instructions "$@" "$n")
    total=$(instructions "$@" $((2 * n)))
    echo $(((total - base) / n))
}

# `median_per_call n command…`: the median of `$runs` (default three) `per_call`s. Even with the
# heap held steady a count moves between runs of one binary, by up to 1.5% (where the heap's
# chunks fall, which the randomly seeded hash tables of registration decide): every script
# quotes medians. With `TOOLPRISM_FIXED_SEEDS=1` every seed is the same in every run (a
# preloaded `getrandom`, built from `scripts/fixed_random.c` on first use), and a count repeats
# exactly: for telling two versions of the code apart, not for quoting (one layout of the heap
# stands for all).
median_per_call() {
    local count=${runs:-3}
    # A count with fixed seeds repeats: once is enough.
    if [ "${TOOLPRISM_FIXED_SEEDS:-0}" = 1 ]; then count=1; fi
    for _ in $(seq "$count"); do per_call "$@"; done | sort -n | sed -n "$(((count + 1) / 2))p"
}

instructions() {
    local preload=
    if [ "${TOOLPRISM_FIXED_SEEDS:-0}" = 1 ]; then
        preload=$(fixed_random)
    fi
    LD_PRELOAD=$preload GLIBC_TUNABLES=$steady_heap \
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

# The preloadable `getrandom` of `TOOLPRISM_FIXED_SEEDS=1`, built under the build directory.
fixed_random() {
    local here library
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    library="${CARGO_TARGET_DIR:-$here/../target}/tools/fixed_random.so"
    if [ ! -f "$library" ] || [ "$here/fixed_random.c" -nt "$library" ]; then
        mkdir -p "$(dirname "$library")"
        cc -shared -fPIC -O2 -o "$library" "$here/fixed_random.c"
    fi
    echo "$library"
}
