//! The command line: `serve` (the default), `best-move`, `evaluate`, `simulate`, `bench`, `healthcheck`.
//! Raw flags become validated configuration here, once; the work itself is done by the library.

pub mod bench;
pub mod simulate;
pub mod train;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};

use advisor2048::answer::{BestMoveResponse, EvaluateResponse};
use advisor2048::engine::{Tiles, MAX_TILE};
use advisor2048::eval::{Evaluator, EvaluatorKind, Network};
use advisor2048::search::{search, Depth, Profile, SearchSettings, StopHandle, MAX_DEPTH};
use advisor2048::server::cors::CorsOrigins;
use advisor2048::server::{self, AppState, ServerConfig, DEFAULT_LISTEN};

/// advisor2048: tells a 2048 player which way to move, and why.
#[derive(Parser, Debug)]
#[command(name = "advisor2048", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve the HTTP API (the default when no command is given).
    Serve(ServeArgs),
    /// Search a board and print the chosen direction and the value of every direction.
    BestMove(BestMoveArgs),
    /// Print the heuristic breakdown of a board and of the board after each legal move.
    Evaluate(EvaluateArgs),
    /// Play seeded self-play games and print their statistics.
    Simulate(simulate::SimulateArgs),
    /// Measure search speed on a fixed set of positions from real games.
    Bench(bench::BenchArgs),
    /// Exit 0 when the service's /healthz answers ok within the timeout (for container health checks).
    Healthcheck(HealthcheckArgs),
    /// Train an n-tuple network by TD learning in self-play (writes a resumable checkpoint).
    Train(train::TrainArgs),
    /// Inspect or export n-tuple weight files.
    #[command(subcommand)]
    Net(train::NetCommand),
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum LogFormat {
    Pretty,
    Json,
}

/// Flags of `serve`; each has an `ADVISOR_*` environment fallback.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "ADVISOR_LISTEN", default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Searching threads at once [default: number of CPUs].
    #[arg(long, env = "ADVISOR_MAX_SEARCHES")]
    pub max_searches: Option<usize>,
    /// Requests that may wait for a search slot; beyond this the answer is 503 at once.
    #[arg(long, env = "ADVISOR_MAX_QUEUE", default_value_t = 64)]
    pub max_queue: usize,
    /// Largest time budget of one search in ms; requests without a budget get this one.
    #[arg(long, env = "ADVISOR_MAX_BUDGET_MS", default_value_t = 5000)]
    pub max_budget_ms: u64,
    /// Largest explicit depth in plies (`auto` is bounded by the budget only).
    #[arg(long, env = "ADVISOR_MAX_DEPTH", default_value_t = MAX_DEPTH)]
    pub max_depth: u32,
    /// Most threads one request may ask for [default: number of CPUs].
    #[arg(long, env = "ADVISOR_MAX_THREADS")]
    pub max_threads: Option<usize>,
    /// /simulate: most games per request.
    #[arg(long, env = "ADVISOR_MAX_SIM_GAMES", default_value_t = 1000)]
    pub max_sim_games: u64,
    /// /simulate: most moves per request, over all its games.
    #[arg(long, env = "ADVISOR_MAX_SIM_MOVES", default_value_t = 2_000_000)]
    pub max_sim_moves: u64,
    /// /simulate: wall-clock limit in seconds; the games finished by then are returned.
    #[arg(long, env = "ADVISOR_MAX_SIM_SECONDS", default_value_t = 120)]
    pub max_sim_seconds: u64,
    /// /simulate: largest time budget of each move's search, in ms.
    #[arg(long, env = "ADVISOR_SIM_MOVE_BUDGET_MS", default_value_t = 1000)]
    pub sim_move_budget_ms: u64,
    /// Largest request body in bytes.
    #[arg(long, env = "ADVISOR_BODY_LIMIT", default_value_t = 64 * 1024)]
    pub body_limit: usize,
    /// Requests still running after this many seconds get 504.
    #[arg(long, env = "ADVISOR_REQUEST_TIMEOUT_S", default_value_t = 150)]
    pub request_timeout_s: u64,
    /// Seconds a client has to send a request head (request line and headers), from connecting or, on a kept-alive
    /// connection, from the request's first byte; then the connection is closed.
    #[arg(long, env = "ADVISOR_HEADER_TIMEOUT_S", default_value_t = 10)]
    pub header_timeout_s: u64,
    /// Seconds a kept-alive connection may wait for its next request before it is closed.
    #[arg(long, env = "ADVISOR_IDLE_TIMEOUT_S", default_value_t = 60)]
    pub idle_timeout_s: u64,
    /// Seconds a client has to send a request body once its head arrived; then 408 and the connection is closed.
    #[arg(long, env = "ADVISOR_BODY_TIMEOUT_S", default_value_t = 30)]
    pub body_timeout_s: u64,
    /// Open connections at most; a new connection beyond them is closed at once [default: half the soft limit of
    /// open files (ulimit -n), at most 10000].
    #[arg(long, env = "ADVISOR_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Largest request head (request line and headers) in bytes; larger is 431 and the connection is closed.
    #[arg(long, env = "ADVISOR_MAX_HEADER_BYTES", default_value_t = 16 * 1024)]
    pub max_header_bytes: usize,
    /// Most header fields in one request (1-100); more is 431 and the connection is closed.
    #[arg(long, env = "ADVISOR_MAX_HEADERS", default_value_t = 64)]
    pub max_headers: usize,
    /// Origins whose web pages may call the service from a browser, comma-separated: scheme://host[:port], with
    /// port '*' for any port; '*' alone allows every origin (no credentials). Requests without an Origin header
    /// (curl, the userscript manager) are not affected.
    #[arg(
        long,
        env = "ADVISOR_CORS_ORIGINS",
        value_delimiter = ',',
        default_value = server::cors::DEFAULT_CORS_ORIGINS
    )]
    pub cors_origins: Vec<String>,
    /// Seconds shutdown waits for running searches before cancelling them.
    #[arg(long, env = "ADVISOR_SHUTDOWN_GRACE_S", default_value_t = 10)]
    pub shutdown_grace_s: u64,
    /// Log format.
    #[arg(long, env = "ADVISOR_LOG_FORMAT", value_enum, default_value_t = LogFormat::Pretty)]
    pub log_format: LogFormat,
    #[command(flatten)]
    pub network: NetworkArgs,
}

impl Default for ServeArgs {
    fn default() -> Self {
        ServeArgs::parse_from_env()
    }
}

impl ServeArgs {
    /// The flags' defaults with the environment applied (for a bare `advisor2048`).
    fn parse_from_env() -> ServeArgs {
        #[derive(Parser)]
        struct Only {
            #[command(flatten)]
            serve: ServeArgs,
        }
        Only::parse_from(["advisor2048"]).serve
    }

    /// Validates the flags into the server's configuration.
    pub fn config(&self) -> anyhow::Result<ServerConfig> {
        let defaults = ServerConfig::default();
        let positive = |name: &str, v: u64| -> anyhow::Result<u64> {
            if v == 0 {
                bail!("--{name} must be at least 1");
            }
            Ok(v)
        };
        if !(1..=MAX_DEPTH).contains(&self.max_depth) {
            bail!("--max-depth must be from 1 to {MAX_DEPTH}, found {}", self.max_depth);
        }
        Ok(ServerConfig {
            max_searches: positive(
                "max-searches",
                self.max_searches.unwrap_or(defaults.max_searches) as u64,
            )? as usize,
            max_queue: self.max_queue,
            max_budget: Duration::from_millis(positive("max-budget-ms", self.max_budget_ms)?),
            max_depth: self.max_depth,
            max_threads: positive("max-threads", self.max_threads.unwrap_or(defaults.max_threads) as u64)? as usize,
            max_sim_games: positive("max-sim-games", self.max_sim_games)?,
            max_sim_moves: positive("max-sim-moves", self.max_sim_moves)?,
            max_sim_time: Duration::from_secs(positive("max-sim-seconds", self.max_sim_seconds)?),
            sim_move_budget: Duration::from_millis(positive("sim-move-budget-ms", self.sim_move_budget_ms)?),
            body_limit: positive("body-limit", self.body_limit as u64)? as usize,
            request_timeout: Duration::from_secs(positive("request-timeout-s", self.request_timeout_s)?),
            header_timeout: Duration::from_secs(positive("header-timeout-s", self.header_timeout_s)?),
            idle_timeout: Duration::from_secs(positive("idle-timeout-s", self.idle_timeout_s)?),
            body_timeout: Duration::from_secs(positive("body-timeout-s", self.body_timeout_s)?),
            max_connections: positive(
                "max-connections",
                self.max_connections.unwrap_or(defaults.max_connections) as u64,
            )? as usize,
            max_header_bytes: match self.max_header_bytes {
                n if n < 1024 => bail!("--max-header-bytes must be at least 1024, found {n}"),
                n => n,
            },
            max_headers: match self.max_headers {
                n @ 1..=100 => n,
                n => bail!("--max-headers must be from 1 to 100, found {n}"),
            },
            cors_origins: CorsOrigins::parse(&self.cors_origins)?,
            shutdown_grace: Duration::from_secs(self.shutdown_grace_s),
        })
    }
}

/// Search flags shared by `best-move`, `simulate` and `bench`. (`simulate` seeds each move's search itself and runs
/// it on one thread, so the seed and thread flags of a single search live in [`OneSearchArgs`].)
#[derive(Args, Debug, Clone)]
pub struct SearchArgs {
    /// Named defaults: learned (evaluator ntuple, the network of --weights, depth 3, reward weight 1; leaves right
    /// after a move), tuned (evaluator tuned, depth auto) or classic (evaluator classic, depth 4, reward weight 1)
    /// [default: learned; tuned with --weights none].
    #[arg(long)]
    pub profile: Option<Profile>,
    /// Plies to search (1-29) or auto [default: the profile's].
    #[arg(long)]
    pub depth: Option<Depth>,
    /// Time budget in ms: deepen iteratively and return the deepest completed depth.
    #[arg(long = "budget-ms")]
    pub budget_ms: Option<u64>,
    /// Evaluator, overriding the profile's: classic, tuned or ntuple (ntuple needs --weights FILE).
    #[arg(long)]
    pub evaluator: Option<EvaluatorKind>,
    /// Chance nodes whose path probability is below this use the heuristic [default: 0.0001].
    #[arg(long)]
    pub prob_cutoff: Option<f64>,
    /// Average over at most this many empty cells per chance node (seeded sample).
    #[arg(long)]
    pub sample_cells: Option<u32>,
    /// Expand only the k best moves (by immediate evaluation) below the root.
    #[arg(long)]
    pub top_k: Option<u32>,
    /// Transposition table size as log2 of its entries (16 bytes each); 0 disables it.
    #[arg(long, default_value_t = advisor2048::search::DEFAULT_TT_BITS)]
    pub tt_bits: u8,
    /// Override an evaluator weight, NAME=VALUE (repeatable), e.g. --weight empty=3.
    #[arg(long = "weight", value_parser = parse_weight)]
    pub weights: Vec<(String, f64)>,
    #[command(flatten)]
    pub network: NetworkArgs,
}

/// The n-tuple network of profile `learned` / evaluator `ntuple`.
#[derive(Args, Debug, Clone, Default)]
pub struct NetworkArgs {
    /// Weight file of the n-tuple network used by profile learned and evaluator ntuple (written by `train`)
    /// [default: the network built into this binary]; `none` runs without a network.
    #[arg(long = "weights", env = "ADVISOR_WEIGHTS", value_name = "FILE")]
    pub weights_file: Option<std::path::PathBuf>,
}

impl NetworkArgs {
    /// The network named by --weights / ADVISOR_WEIGHTS (or the shipped one), loaded and checked; `None` with
    /// `--weights none`.
    pub fn load(&self) -> anyhow::Result<Option<Arc<Network>>> {
        match &self.weights_file {
            Some(path) if path.as_os_str() == "none" => Ok(None),
            Some(path) => {
                let (net, _, _) = advisor2048::eval::ntuple::file::load(path)
                    .with_context(|| format!("cannot load the network {}", path.display()))?;
                Ok(Some(Arc::new(net)))
            }
            None => {
                let net = advisor2048::eval::ntuple::shipped::load().context("the built-in network is damaged")?;
                Ok(Some(Arc::new(net)))
            }
        }
    }

    /// False with `--weights none`: then no network is loaded and the default profile is `tuned`.
    pub fn available(&self) -> bool {
        !matches!(&self.weights_file, Some(path) if path.as_os_str() == "none")
    }

    /// Like [`NetworkArgs::load`], but only when `kind` needs a network or a file was named (a heuristic search
    /// does not pay for inflating the built-in network).
    pub fn load_for(&self, kind: EvaluatorKind) -> anyhow::Result<Option<Arc<Network>>> {
        if kind == EvaluatorKind::NTuple || self.weights_file.is_some() {
            self.load()
        } else {
            Ok(None)
        }
    }
}

/// The seed and threads of one search (`best-move`, `bench`).
#[derive(Args, Debug, Clone)]
pub struct OneSearchArgs {
    /// Seed of the search's random choices (sample-cells).
    #[arg(long, default_value_t = 0)]
    pub search_seed: u64,
    /// Threads for the root moves of one search.
    #[arg(long, default_value_t = 1)]
    pub search_threads: usize,
}

impl OneSearchArgs {
    /// `settings` with this seed and thread count.
    pub fn apply(&self, settings: SearchSettings) -> SearchSettings {
        SearchSettings {
            seed: self.search_seed,
            threads: self.search_threads.max(1),
            ..settings
        }
    }
}

fn parse_weight(s: &str) -> Result<(String, f64), String> {
    let (name, value) = s.split_once('=').ok_or_else(|| format!("{s:?} is not NAME=VALUE"))?;
    let v: f64 = value.parse().map_err(|_| format!("{value:?} is not a number"))?;
    if !v.is_finite() {
        return Err(format!("weight {name:?} must be a finite number"));
    }
    Ok((name.to_owned(), v))
}

impl SearchArgs {
    /// The settings and evaluator these flags describe.
    pub fn settings(&self) -> anyhow::Result<(SearchSettings, advisor2048::eval::AnyEvaluator)> {
        let profile = self
            .profile
            .unwrap_or_else(|| Profile::default_for(self.network.available()));
        let mut s = profile.settings();
        if let Some(d) = self.depth {
            s.depth = d;
        }
        s.time_budget = self.budget_ms.map(Duration::from_millis);
        if let Some(e) = self.evaluator {
            s.evaluator = e;
        }
        if let Some(p) = self.prob_cutoff {
            if !(0.0..1.0).contains(&p) {
                bail!("--prob-cutoff must be at least 0 and below 1");
            }
            s.prob_cutoff = p;
        }
        if let Some(k) = self.sample_cells {
            if !(1..=16).contains(&k) {
                bail!("--sample-cells must be from 1 to 16");
            }
            s.sample_cells = Some(k);
        }
        if let Some(k) = self.top_k {
            if !(1..=4).contains(&k) {
                bail!("--top-k must be from 1 to 4");
            }
            s.top_k = Some(k);
        }
        s.tt_bits = (self.tt_bits > 0).then_some(self.tt_bits);
        let network = self.network.load_for(s.evaluator)?;
        let evaluator = s.evaluator.with_network(network.as_ref(), &self.weights)?;
        Ok((s, evaluator))
    }
}

/// Parses a board given on the command line: 16 hex digits, or JSON rows such as `[[0,2,4,8],...]`.
pub fn parse_board(text: &str) -> anyhow::Result<Tiles> {
    let text = text.trim();
    if text.starts_with('[') {
        let rows: Vec<Vec<serde_json::Value>> =
            serde_json::from_str(text).context("a board is 16 hex digits or JSON rows like [[0,2,4,8],...]")?;
        let mut values: Vec<Vec<i64>> = Vec::new();
        for (r, row) in rows.iter().enumerate() {
            let mut out = Vec::new();
            for (c, v) in row.iter().enumerate() {
                match v.as_i64() {
                    Some(i) => out.push(i),
                    None => bail!("/{r}/{c}: {v} is not a tile value (0 or a power of two from 2 to {MAX_TILE})"),
                }
            }
            values.push(out);
        }
        Ok(Tiles::from_rows(&values)?)
    } else {
        Ok(Tiles::from_hex(text)?)
    }
}

#[derive(Args, Debug)]
pub struct BestMoveArgs {
    /// The board: 16 hex digits of exponents (top-left first) or JSON rows of values, top row first.
    pub board: String,
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub one: OneSearchArgs,
    /// Print the same JSON the HTTP API returns.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct EvaluateArgs {
    /// The board: 16 hex digits or JSON rows.
    pub board: String,
    /// Evaluator: classic, tuned or ntuple (ntuple needs --weights FILE).
    #[arg(long, default_value = "classic")]
    pub evaluator: EvaluatorKind,
    /// Override a weight, NAME=VALUE (repeatable).
    #[arg(long = "weight", value_parser = parse_weight)]
    pub weights: Vec<(String, f64)>,
    #[command(flatten)]
    pub network: NetworkArgs,
    /// Print the same JSON the HTTP API returns.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct HealthcheckArgs {
    /// The health endpoint to ask.
    #[arg(
        long,
        env = "ADVISOR_HEALTHCHECK_URL",
        default_value = "http://127.0.0.1:2048/healthz"
    )]
    pub url: String,
    /// Seconds to wait for an answer.
    #[arg(long, default_value_t = 3)]
    pub timeout_s: u64,
}

/// Runs the command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => serve(ServeArgs::default()),
        Some(Command::Serve(args)) => serve(args),
        Some(Command::BestMove(args)) => best_move(&args),
        Some(Command::Evaluate(args)) => evaluate(&args),
        Some(Command::Simulate(args)) => simulate::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::Healthcheck(args)) => healthcheck(&args),
        Some(Command::Train(args)) => train::run_train(&args),
        Some(Command::Net(cmd)) => train::run_net(&cmd),
    }
}

fn init_tracing(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,tower_http=info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Pretty => builder.init(),
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = args.config()?;
    init_tracing(args.log_format);
    let loading = std::time::Instant::now();
    let network = args.network.load()?;
    if let Some(net) = &network {
        tracing::info!(
            shape = %net.shape().describe(),
            checksum = net.info.as_ref().map_or("-", |i| i.checksum()),
            ms = loading.elapsed().as_secs_f64() * 1e3,
            "network loaded"
        );
    }
    let start = std::time::Instant::now();
    advisor2048::search::warm_up();
    tracing::debug!(ms = start.elapsed().as_secs_f64() * 1e3, "tables built");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        tracing::info!(addr = %listener.local_addr()?, ?config, "advisor2048 serving");
        server::serve(
            listener,
            AppState::with_network(config, network),
            server::shutdown_signal(),
        )
        .await?;
        tracing::info!("stopped");
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

fn best_move(args: &BestMoveArgs) -> anyhow::Result<ExitCode> {
    let tiles = parse_board(&args.board)?;
    let (settings, evaluator) = args.search.settings()?;
    let settings = args.one.apply(settings);
    let outcome = search(&tiles, &evaluator, &settings, &StopHandle::new());
    let response = BestMoveResponse::new(&tiles, &outcome, &evaluator, &settings);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&response)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{tiles}");
    match response.direction {
        Some(d) => println!("best move: {d}"),
        None if response.game_over => println!("game over: no legal move"),
        None => println!("no search iteration completed"),
    }
    for m in &response.moves {
        match m.value {
            Some(v) => println!("  {:<5} {:>16.4}  reward {}", m.direction, v, m.reward.unwrap_or(0)),
            None => println!("  {:<5} {:>16}", m.direction, if m.legal { "-" } else { "illegal" }),
        }
    }
    let s = &response.search;
    println!(
        "profile {}, evaluator {}, depth {}/{} plies, {} nodes, {} tt hits, {:.1} ms{}",
        s.profile,
        s.evaluator,
        s.depth,
        s.target_depth,
        s.nodes,
        s.tt_hits,
        s.elapsed_ms,
        if s.truncated { ", truncated" } else { "" }
    );
    Ok(ExitCode::SUCCESS)
}

fn evaluate(args: &EvaluateArgs) -> anyhow::Result<ExitCode> {
    let tiles = parse_board(&args.board)?;
    let network = args.network.load_for(args.evaluator)?;
    let evaluator = args.evaluator.with_network(network.as_ref(), &args.weights)?;
    let response = EvaluateResponse::new(&tiles, &evaluator);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&response)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{tiles}\nevaluator {}: total {:.4}", evaluator.name(), response.total);
    println!(
        "  {:<14} {:>14} {:>12} {:>16}",
        "component", "raw", "weight", "contribution"
    );
    for c in &response.components {
        println!(
            "  {:<14} {:>14.4} {:>12.4} {:>16.4}",
            c.name, c.raw, c.weight, c.contribution
        );
    }
    for m in &response.after_moves {
        println!(
            "after {:<5}: total {:>16.4}, reward {}",
            m.direction, m.heuristic.total, m.reward
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn healthcheck(args: &HealthcheckArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let result: anyhow::Result<()> = runtime.block_on(async {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(args.timeout_s))
            .build()?;
        let response = client
            .get(&args.url)
            .send()
            .await
            .with_context(|| format!("cannot reach {}", args.url))?;
        let status = response.status();
        let body: serde_json::Value = response.json().await.context("the health answer is not JSON")?;
        if !status.is_success() || body.get("status").and_then(|s| s.as_str()) != Some("ok") {
            bail!("{} answered {status}: {body}", args.url);
        }
        Ok(())
    });
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("unhealthy: {e:#}");
            Ok(ExitCode::FAILURE)
        }
    }
}
