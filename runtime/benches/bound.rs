//! Bounding 1 MB, 10 MB and 100 MB of text: count lines, plan the cut, retain the full text
//! in a filesystem store (on tmpfs when `/dev/shm` exists, else in the temporary directory),
//! and build the preview. Reported as throughput.
//!
//! `cargo bench -p toolprism --bench bound`

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use toolprism::bound::{BoundLimits, FsOutputStore, Retention, plan_cut, preview};

/// Log-like text: numbered lines of varying length, some multi-byte.
fn text_of(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 200);
    let mut n = 0_u64;
    while text.len() < bytes {
        n += 1;
        let width = (n * 7919 % 120) as usize;
        let _ = writeln!(text, "{n:>8} | {} | état ✓", "x".repeat(width));
    }
    text
}

fn store_dir() -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    let base = if shm.is_dir() {
        shm
    } else {
        std::env::temp_dir()
    };
    base.join(format!("toolprism-bench-bound-{}", std::process::id()))
}

fn bound(c: &mut Criterion) {
    let dir = store_dir();
    let store = FsOutputStore::new(&dir);
    let limits = BoundLimits::default();
    let mut group = c.benchmark_group("bound");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    for megabytes in [1, 10, 100] {
        let text = text_of(megabytes * 1_000_000);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{megabytes}MB")),
            &text,
            |b, text| {
                b.iter_custom(|iterations| {
                    let mut spent = Duration::ZERO;
                    for _ in 0..iterations {
                        let started = Instant::now();
                        let cut = plan_cut(text, &limits).expect("over the limits");
                        let retained = store
                            .retain_now("call_1", &[text], &Retention::default())
                            .unwrap();
                        let shown = preview(text, &cut, &retained, &limits);
                        spent += started.elapsed();
                        black_box(shown);
                        // Untimed: keep the tmpfs from filling up.
                        std::fs::remove_file(&retained.location).unwrap();
                    }
                    spent
                });
            },
        );
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bound);
criterion_main!(benches);
