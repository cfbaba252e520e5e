//! Moves per second: the bitboard ([`Board::play`]) against the plain reference model ([`reference::move_grid`]) on
//! the same fixed set of boards, all four directions.
//!
//! The boards come from seeded games played with a fixed simple policy (the first legal move in down, left, right,
//! up order, which keeps the big tiles in a corner the way people play), sampled every few moves, so they are the
//! mid-game boards a search sees. One "move" is one (board, direction) pair, legal or not.
//!
//! After the criterion groups, `main` measures both again with `Instant` over many passes and prints
//! `engine moves/s: fast X, reference Y, ratio Z`; the issue asks for a ratio of at least 50.

use std::hint::black_box;
use std::time::{Duration, Instant};

use advisor2048::engine::reference::{self, Grid};
use advisor2048::engine::rng::Rng;
use advisor2048::engine::{Board, Direction};
use criterion::{Criterion, Throughput};

/// How many boards the benchmark moves.
const BOARDS: usize = 1000;
/// Keep one board in this many, so consecutive boards of a game are not near-copies.
const STRIDE: usize = 7;
/// The fixed policy: the first legal direction in this order.
const POLICY: [Direction; 4] = [Direction::Down, Direction::Left, Direction::Right, Direction::Up];

/// The fixed set of boards: games seeded 0, 1, 2, ... played with [`POLICY`], one board in [`STRIDE`] kept.
fn fixed_boards() -> Vec<Board> {
    let mut boards = Vec::with_capacity(BOARDS);
    let mut seen = 0usize;
    for seed in 0.. {
        let mut rng = Rng::new(seed);
        let mut board = Board::new_game(&mut rng);
        while let Some(moved) = POLICY.iter().find_map(|&d| board.play(d).ok().flatten()) {
            if seen % STRIDE == 0 {
                boards.push(board);
                if boards.len() == BOARDS {
                    return boards;
                }
            }
            seen += 1;
            board = moved.board.spawn(&mut rng).expect("a legal move leaves an empty cell");
        }
    }
    unreachable!("the seeds never run out")
}

fn grids(boards: &[Board]) -> Vec<Grid> {
    boards
        .iter()
        .map(|b| b.to_rows().iter().map(|row| row.to_vec()).collect())
        .collect()
}

// The passes read their boards from a slice built at run time, so nothing can be folded away, and fold every result
// into a checksum that goes through `black_box`, so nothing can be skipped. The direction loop is the one a search
// runs; the compiler may unroll it for both sides alike.

/// One pass of the fast engine: every board, every direction. Returns a checksum of the results.
#[inline(never)]
fn fast_pass(boards: &[Board]) -> u64 {
    let mut sum = 0u64;
    for &b in boards {
        for dir in Direction::ALL {
            if let Ok(Some(moved)) = b.play(dir) {
                sum = sum.wrapping_add(moved.board.0 ^ u64::from(moved.reward));
            }
        }
    }
    sum
}

/// One pass of the reference model over the same boards and directions.
#[inline(never)]
fn reference_pass(grids: &[Grid]) -> u64 {
    let mut sum = 0u64;
    for g in grids {
        for dir in Direction::ALL {
            let (after, reward) = reference::move_grid(g, dir);
            sum = sum.wrapping_add(u64::from(after[0][0]) ^ reward);
        }
    }
    sum
}

fn bench_moves(c: &mut Criterion, boards: &[Board], grids: &[Grid]) {
    let mut group = c.benchmark_group("moves");
    group.throughput(Throughput::Elements((boards.len() * Direction::ALL.len()) as u64));
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("bitboard", |b| b.iter(|| black_box(fast_pass(black_box(boards)))));
    group.bench_function("reference", |b| b.iter(|| black_box(reference_pass(black_box(grids)))));
    group.finish();
}

/// Moves per second of the fast engine and of the reference over the same boards, measured in alternating blocks of
/// passes for at least `budget` in all. Each side's figure comes from its fastest pass: the machine may be shared,
/// and other work can only slow a pass down, so the fastest of many estimates the undisturbed speed. Alternating
/// blocks expose both sides to the same disturbances, and blocks (rather than single passes) keep the reference's
/// allocations from evicting the fast engine's tables before every pass, which a search never suffers.
fn moves_per_second(boards: &[Board], grids: &[Grid], budget: Duration) -> (f64, f64) {
    fn fastest_pass(block: Duration, best: &mut Duration, mut pass: impl FnMut() -> u64) {
        let start = Instant::now();
        while start.elapsed() < block {
            let t = Instant::now();
            black_box(pass());
            *best = (*best).min(t.elapsed());
        }
    }
    let block = budget / 40;
    let (mut fast, mut slow) = (Duration::MAX, Duration::MAX);
    let start = Instant::now();
    while start.elapsed() < budget {
        fastest_pass(block, &mut fast, || fast_pass(black_box(boards)));
        fastest_pass(block, &mut slow, || reference_pass(black_box(grids)));
    }
    let moves = (boards.len() * Direction::ALL.len()) as f64;
    (moves / fast.as_secs_f64(), moves / slow.as_secs_f64())
}

fn main() {
    let boards = fixed_boards();
    let grids = grids(&boards);

    let mut criterion = Criterion::default().configure_from_args();
    bench_moves(&mut criterion, &boards, &grids);
    criterion.final_summary();

    // `cargo bench` passes `--bench`; `cargo test --benches` does not, and then a quick check is enough.
    let benchmarking = std::env::args().any(|arg| arg == "--bench");
    let budget = Duration::from_millis(if benchmarking { 3000 } else { 20 });
    let (fast, slow) = moves_per_second(&boards, &grids, budget);
    println!(
        "engine moves/s: fast {fast:.3e}, reference {slow:.3e}, ratio {:.1} (boards: {}, max tile {})",
        fast / slow,
        boards.len(),
        1u32 << boards.iter().map(|b| b.max_exponent()).max().unwrap_or(0)
    );
}
