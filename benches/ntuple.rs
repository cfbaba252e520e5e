//! The learned evaluator: evaluations per second of a 4x6 n-tuple network on the fixed positions of
//! `benches/positions.txt`, search nodes per second with it (profile `learned`) at 3 and 5 plies, one thread, and
//! training moves per second (one thread). The network is the file named by `ADVISOR_WEIGHTS` when set (e.g. the
//! shipped one), else a 4x6 network of seeded random weights (the same memory traffic; other search trees).

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use advisor2048::engine::rng::Rng;
use advisor2048::engine::{Board, Tiles};
use advisor2048::eval::ntuple::{file, Network, Shape};
use advisor2048::eval::{AnyEvaluator, Evaluator, NTupleEvaluator};
use advisor2048::search::{search, Depth, Profile, SearchSettings, StopHandle};
use advisor2048::train::{TrainConfig, Trainer};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn positions() -> Vec<Board> {
    include_str!("positions.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.trim().parse::<Board>().expect("a hex board"))
        .collect()
}

fn network() -> Arc<Network> {
    if let Some(path) = std::env::var_os("ADVISOR_WEIGHTS") {
        let (net, info, _) = file::load(std::path::Path::new(&path)).expect("ADVISOR_WEIGHTS names a weight file");
        println!("network {} ({})", info.checksum(), net.shape().describe());
        return Arc::new(net);
    }
    let shape = Shape::named("4x6", vec![0]).expect("4x6");
    let mut rng = Rng::new(1);
    let weights = (0..shape.weight_count()).map(|_| rng.below(1000) as f32).collect();
    Arc::new(Network::from_weights(shape, weights).expect("sizes agree"))
}

fn ntuple(c: &mut Criterion) {
    let boards = positions();
    let eval = AnyEvaluator::NTuple(NTupleEvaluator::new(network()));
    let mut group = c.benchmark_group("ntuple");
    group.throughput(Throughput::Elements(boards.len() as u64));
    group.bench_function("evaluate/board", |b| {
        b.iter(|| boards.iter().map(|&board| eval.evaluate(black_box(board))).sum::<f64>())
    });

    group.sample_size(10);
    let tiles: Vec<Tiles> = boards.iter().map(|&b| Tiles::from(b)).collect();
    for depth in [3, 5] {
        let settings = SearchSettings {
            depth: Depth::Plies(depth),
            time_budget: None,
            ..Profile::Learned.settings()
        };
        let nodes: u64 = tiles
            .iter()
            .map(|t| search(t, &eval, &settings, &StopHandle::new()).stats.nodes)
            .sum();
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("learned/depth{depth}"), |b| {
            b.iter(|| {
                for t in &tiles {
                    black_box(search(black_box(t), &eval, &settings, &StopHandle::new()));
                }
            })
        });
        let start = Instant::now();
        for t in &tiles {
            black_box(search(t, &eval, &settings, &StopHandle::new()));
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "learned depth {depth}: {nodes} nodes on {} positions, {:.3e} nodes/s",
            tiles.len(),
            nodes as f64 / secs
        );
    }
    group.finish();

    // Training speed: 4x6 from scratch, one thread, a fixed number of games (seeded: the same games every run).
    let trainer = Trainer::new(
        Shape::named("4x6", vec![0]).expect("4x6"),
        TrainConfig {
            games: Some(2000),
            seed: 1,
            ..TrainConfig::default()
        },
    );
    let start = Instant::now();
    trainer.run(&AtomicBool::new(false), Duration::from_secs(3600), |_| {}, None, |_| {});
    let p = trainer.progress();
    println!(
        "training 4x6, 1 thread: {} moves in {:.2} s, {:.3e} moves/s",
        p.moves,
        start.elapsed().as_secs_f64(),
        p.moves as f64 / start.elapsed().as_secs_f64()
    );
}

criterion_group!(benches, ntuple);
criterion_main!(benches);
