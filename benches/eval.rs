//! Evaluations per second of each evaluator on the fixed positions of `benches/positions.txt`.

use std::hint::black_box;

use advisor2048::engine::{Board, Tiles};
use advisor2048::eval::{Evaluator, EvaluatorKind};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn positions() -> Vec<Board> {
    include_str!("positions.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.trim().parse::<Board>().expect("a hex board"))
        .collect()
}

fn evaluations(c: &mut Criterion) {
    let boards = positions();
    let mut group = c.benchmark_group("evaluations");
    group.throughput(Throughput::Elements(boards.len() as u64));
    for kind in EvaluatorKind::HEURISTICS {
        let e = kind.default_evaluator().unwrap();
        group.bench_function(format!("{kind}/board"), |b| {
            b.iter(|| boards.iter().map(|&board| e.evaluate(black_box(board))).sum::<f64>())
        });
        let tiles: Vec<Tiles> = boards.iter().map(|&b| Tiles::from(b)).collect();
        group.bench_function(format!("{kind}/breakdown"), |b| {
            b.iter(|| tiles.iter().map(|t| e.breakdown(black_box(t)).total).sum::<f64>())
        });
    }
    group.finish();
}

criterion_group!(benches, evaluations);
criterion_main!(benches);
