//! Fixed-depth search on fixed positions from real games (`benches/positions.txt`): nodes per second of the tuned
//! profile at 3 and 5 plies, one thread. (`advisor2048 bench` measures depth `auto` with per-position times.)

use std::hint::black_box;
use std::time::Instant;

use advisor2048::engine::Tiles;
use advisor2048::eval::EvaluatorKind;
use advisor2048::search::{search, Depth, Profile, SearchSettings, StopHandle};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn positions() -> Vec<Tiles> {
    include_str!("positions.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| Tiles::from_hex(l.trim()).expect("a hex board"))
        .collect()
}

fn fixed_depth(c: &mut Criterion) {
    let boards = positions();
    let eval = EvaluatorKind::Tuned.default_evaluator().unwrap();
    let mut group = c.benchmark_group("search");
    group.sample_size(10);
    for depth in [3, 5] {
        let settings = SearchSettings {
            depth: Depth::Plies(depth),
            ..Profile::Tuned.settings()
        };
        let nodes: u64 = boards
            .iter()
            .map(|t| search(t, &eval, &settings, &StopHandle::new()).stats.nodes)
            .sum();
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("tuned/depth{depth}"), |b| {
            b.iter(|| {
                for t in &boards {
                    black_box(search(black_box(t), &eval, &settings, &StopHandle::new()));
                }
            })
        });
        let start = Instant::now();
        for t in &boards {
            black_box(search(t, &eval, &settings, &StopHandle::new()));
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "search depth {depth}: {nodes} nodes on {} positions, {:.3e} nodes/s",
            boards.len(),
            nodes as f64 / secs
        );
    }
    group.finish();
}

criterion_group!(benches, fixed_depth);
criterion_main!(benches);
