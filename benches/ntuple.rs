//! The learned evaluator: evaluations per second of a 4x6 n-tuple network on the fixed positions of
//! `benches/positions.txt`, search nodes per second with it (profile `learned`) at 3 and 5 plies, one thread,
//! greedy self-play moves per second (1 ply, one thread, 4 seeded games of at most 5,000 moves), and
//! training moves per second (`ADVISOR_BENCH_TRAIN_GAMES` games, 20,000 by default, on one thread and on two threads
//! sharing one set of tables; a quarter as many games of the default recipe on one and two threads; two independent
//! trainers at once), after the machine's ceilings for them (random lookups on one and two threads; the round trip of
//! a cache line between two threads). The network is the file named by `ADVISOR_WEIGHTS` when set (e.g. the shipped
//! one), else a 4x6 network of seeded random weights (the same memory traffic; other search trees).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use advisor2048::engine::rng::Rng;
use advisor2048::engine::{Board, Tiles};
use advisor2048::eval::ntuple::{file, Network, Shape};
use advisor2048::eval::{AnyEvaluator, Evaluator, NTupleEvaluator};
use advisor2048::search::{search, Depth, Profile, SearchSettings, StopHandle};
use advisor2048::sim::{simulate, SimConfig};
use advisor2048::train::{StartPolicy, StartSource, TrainConfig, Trainer};
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
    // Greedy self-play, as `advisor2048 simulate --depth 1 --threads 1` plays it: moves per second of the whole
    // per-move path (search, move, spawn, records), fixed seed and games.
    let greedy = SimConfig {
        max_moves: Some(5000),
        ..SimConfig::new(
            4,
            1,
            SearchSettings {
                depth: Depth::Plies(1),
                ..Profile::Learned.settings()
            },
            eval.clone(),
        )
    };
    let moves: u64 = simulate(&greedy, &StopHandle::new(), |_| {})
        .games
        .iter()
        .map(|g| g.moves)
        .sum();
    group.throughput(Throughput::Elements(moves));
    group.bench_function("learned/greedy self-play moves", |b| {
        b.iter(|| black_box(simulate(black_box(&greedy), &StopHandle::new(), |_| {})))
    });
    group.finish();

    memory_ceiling();
    line_round_trip();

    // Training speed: 4x6 from scratch, a fixed number of games (seeded), as the side-by-side with the public
    // trainers measures it (TD(0), alpha 0.1, no temporal coherence, no restarts), on one and two threads; then
    // the default recipe (TD(0.5), temporal coherence, halving restarts) on one and two threads.
    let games = std::env::var("ADVISOR_BENCH_TRAIN_GAMES")
        .ok()
        .and_then(|g| g.parse().ok())
        .unwrap_or(20_000u64);
    let plain = TrainConfig {
        games: Some(games),
        seed: 1,
        lambda: 0.0,
        alpha: 0.1,
        tc: false,
        start: StartPolicy {
            source: StartSource::Fresh,
            halving: None,
        },
        ..TrainConfig::default()
    };
    let recipe = TrainConfig {
        games: Some(games / 4),
        seed: 1,
        ..TrainConfig::default()
    };
    let train = |config: TrainConfig| {
        let trainer = Trainer::new(Shape::named("4x6", vec![0]).expect("4x6"), config);
        trainer.run(&AtomicBool::new(false), Duration::from_secs(3600), |_| {}, None, |_| {});
        trainer.progress()
    };
    let rate = |p: &advisor2048::train::TrainState| p.moves as f64 / p.seconds.max(1e-9);
    let mut rates = Vec::new();
    for (name, config) in [
        ("TD(0), 1 thread", plain.clone()),
        (
            "TD(0), 2 threads",
            TrainConfig {
                threads: 2,
                ..plain.clone()
            },
        ),
        ("default recipe, 1 thread", recipe.clone()),
        (
            "default recipe, 2 threads",
            TrainConfig {
                threads: 2,
                ..recipe.clone()
            },
        ),
    ] {
        let p = train(config);
        println!(
            "training 4x6, {name}: {} games, {} moves in {:.2} s, {:.3e} moves/s",
            p.games,
            p.moves,
            p.seconds,
            rate(&p)
        );
        rates.push(rate(&p));
    }
    // Two independent trainers at once, each with its own tables and one thread, each doing the 1-thread run's
    // work (same games, so the same kind of games): what the machine allows two threads that share nothing.
    // Against it, the 2-thread run shows what sharing one set of tables costs (the cache lines one thread writes
    // and the other then reads or writes).
    let independent: f64 = std::thread::scope(|s| {
        let runs: Vec<_> = [1u64, 2]
            .into_iter()
            .map(|seed| {
                let config = TrainConfig { seed, ..plain.clone() };
                s.spawn(move || train(config))
            })
            .collect();
        runs.into_iter()
            .map(|r| rate(&r.join().expect("a trainer thread")))
            .sum()
    });
    println!("training 4x6, TD(0), two independent trainers at once: {independent:.3e} moves/s together");
    println!(
        "training 4x6, TD(0): 2 threads / 1 thread {:.2}x; two independent trainers / 1 thread {:.2}x",
        rates[1] / rates[0],
        independent / rates[0]
    );
    println!(
        "training 4x6, default recipe: 2 threads / 1 thread {:.2}x",
        rates[3] / rates[2]
    );
}

/// The machine's ceiling for the trainer's memory pattern: groups of 32 random lookups into a table the size of a
/// 4x6 network (f32), each group prefetched and then summed, on one thread and on two at once (the same work per
/// thread): how far the machine's memory lets random lookups scale. The trainer's own ceiling, printed after its
/// runs, is two independent trainers at once.
fn memory_ceiling() {
    let n = Shape::named("4x6", vec![0]).expect("4x6").weight_count();
    let table: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let groups = 1_000_000u64;
    let work = |seed: u64| {
        let mut rng = Rng::new(seed);
        let mut idx = [0usize; 32];
        let mut sum = 0.0f32;
        for _ in 0..groups {
            for i in idx.iter_mut() {
                *i = rng.below(n as u64) as usize;
                advisor2048::eval::ntuple::prefetch(&table, *i);
            }
            sum += idx.iter().map(|&i| table[i]).sum::<f32>();
        }
        black_box(sum)
    };
    let mut rates = Vec::new();
    for threads in [1u64, 2] {
        let t0 = Instant::now();
        std::thread::scope(|s| {
            for k in 0..threads {
                let work = &work;
                s.spawn(move || work(k + 1));
            }
        });
        let rate = (threads * groups * 32) as f64 / t0.elapsed().as_secs_f64();
        println!("memory ceiling, {threads} thread(s): {rate:.3e} random prefetched lookups/s");
        rates.push(rate);
    }
    println!("memory ceiling, 2 threads / 1 thread: {:.2}x", rates[1] / rates[0]);
}

/// What a cache line costs to move between two cores: two threads pass a counter back and forth through one atomic
/// (each waits for the other's write, then writes), so each round trip moves the line there and back. On a two-core
/// machine the two spinning threads run on the two cores. A trainer's thread pays about half a round trip for each
/// weight line the other thread wrote last, so this figure, against the time of a move on one thread, bounds how far
/// two threads sharing one set of tables can scale (docs/training.md). Skipped on one core, where each wait would
/// last a scheduler time slice.
fn line_round_trip() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        println!("cache line round trip between two threads: skipped (one core)");
        return;
    }
    let trips = 1_000_000u32;
    let counter = AtomicU32::new(0);
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..trips {
                while counter.load(Ordering::Acquire) != 2 * i + 1 {}
                counter.store(2 * i + 2, Ordering::Release);
            }
        });
        for i in 0..trips {
            counter.store(2 * i + 1, Ordering::Release);
            while counter.load(Ordering::Acquire) != 2 * i + 2 {}
        }
    });
    let ns = start.elapsed().as_nanos() as f64 / f64::from(trips);
    println!("cache line round trip between two threads: {ns:.0} ns");
}

criterion_group!(benches, ntuple);
criterion_main!(benches);
