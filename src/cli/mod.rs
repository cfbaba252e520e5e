//! The command line: `serve` (the default), `best-move`, `evaluate`, `simulate`, `report`, `analyze`, `bench`,
//! `healthcheck`.
//! Raw flags become validated configuration here, once; the work itself is done by the library.

pub mod analyze;
pub mod bench;
pub mod healthcheck;
pub mod net;
pub mod odds;
pub mod request;
pub mod signals;
pub mod simulate;
pub mod train;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};

use advisor2048::eval::{AnyEvaluator, EvaluatorKind, Network};
use advisor2048::request::field::Field;
use advisor2048::request::odds::{OddsSource, ODDS_FIELDS};
use advisor2048::request::{
    BestMoveRequest, EvaluateRequest, EvaluatorRequest, SearchBounds, EVALUATE, ONE_SEARCH, SEARCH,
};
use advisor2048::search::{node_budget_words, StopHandle, MAX_DEPTH};
use advisor2048::server::cors::CorsOrigins;
use advisor2048::server::{self, defaults, AppState, ServerConfig, DEFAULT_LISTEN};
use request::{Body, FieldFlags, FieldSet, Flags};

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
    /// Print the statistics of saved `simulate --json` reports, the chunks of one run merged into one (--runs: several
    /// runs pooled).
    Report(simulate::ReportArgs),
    /// Review a played game: grade every move against the best one, list the worst moves (with --odds, also what each
    /// move cost in the chance of the next milestones).
    Analyze(analyze::AnalyzeArgs),
    /// Measure search speed on a fixed set of positions from real games.
    Bench(bench::BenchArgs),
    /// Exit 0 when the service's /healthz answers ok within the timeout (for container health checks).
    Healthcheck(healthcheck::HealthcheckArgs),
    /// Train an n-tuple network by TD learning in self-play (writes a resumable checkpoint).
    Train(train::TrainArgs),
    /// Inspect or export n-tuple weight files.
    #[command(subcommand)]
    Net(net::NetCommand),
    /// Fit the reach-odds model (the chance of each tile from 2048 up) on the default play's games and write it.
    OddsFit(odds::OddsFitArgs),
    /// Check a reach-odds model against held-out games: reliability table, calibration error, Brier scores.
    OddsCheck(odds::OddsCheckArgs),
}

impl Command {
    /// Whether the command only reports on standard output, so that a reader that stops reading (`| head`) may end
    /// it, as it ends any other Unix filter. `serve` and `train` keep logging and saving, whoever reads their output.
    fn ends_with_its_reader(&self) -> bool {
        !matches!(self, Command::Serve(_) | Command::Train(_) | Command::OddsFit(_))
    }
}

/// Lets SIGPIPE end the process quietly, as it ends other command-line tools, when standard output's reader has
/// gone. Rust ignores SIGPIPE, which turns the next write into an error, and `println!` into a panic.
fn end_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: `signal` only sets the disposition of SIGPIPE back to the default, once, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
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
    #[arg(long, env = "ADVISOR_MAX_QUEUE", default_value_t = defaults::MAX_QUEUE)]
    pub max_queue: usize,
    /// Largest time budget of one search in ms; requests without a budget get this one.
    #[arg(long, env = "ADVISOR_MAX_BUDGET_MS", default_value_t = defaults::MAX_BUDGET_MS)]
    pub max_budget_ms: u64,
    /// Largest explicit depth in plies (`auto` is bounded by the budget only).
    #[arg(long, env = "ADVISOR_MAX_DEPTH", default_value_t = MAX_DEPTH)]
    pub max_depth: u32,
    /// Most threads one request may ask for [default: number of CPUs].
    #[arg(long, env = "ADVISOR_MAX_THREADS")]
    pub max_threads: Option<usize>,
    /// /simulate: most games per request.
    #[arg(long, env = "ADVISOR_MAX_SIM_GAMES", default_value_t = defaults::MAX_SIM_GAMES)]
    pub max_sim_games: u64,
    /// /simulate: most moves per request, over all its games.
    #[arg(long, env = "ADVISOR_MAX_SIM_MOVES", default_value_t = defaults::MAX_SIM_MOVES)]
    pub max_sim_moves: u64,
    /// /simulate: wall-clock limit in seconds; the games finished by then are returned.
    #[arg(long, env = "ADVISOR_MAX_SIM_SECONDS", default_value_t = defaults::MAX_SIM_SECONDS)]
    pub max_sim_seconds: u64,
    /// /simulate with trace: most moves per request, over all its games (bounds the answer's size: about 110 bytes
    /// per move); a traced run that reaches it stops like one at --max-sim-moves.
    #[arg(long, env = "ADVISOR_MAX_TRACE_MOVES", default_value_t = defaults::MAX_TRACE_MOVES)]
    pub max_trace_moves: u64,
    /// /simulate: largest time budget of each move's search, in ms.
    #[arg(long, env = "ADVISOR_SIM_MOVE_BUDGET_MS", default_value_t = defaults::SIM_MOVE_BUDGET_MS)]
    pub sim_move_budget_ms: u64,
    /// /analyze: most moves per request.
    #[arg(long, env = "ADVISOR_MAX_ANALYZE_MOVES", default_value_t = defaults::MAX_ANALYZE_MOVES)]
    pub max_analyze_moves: u64,
    /// /analyze: wall-clock limit in seconds; the moves graded by then are returned (complete: false).
    #[arg(long, env = "ADVISOR_MAX_ANALYZE_SECONDS", default_value_t = defaults::MAX_ANALYZE_SECONDS)]
    pub max_analyze_seconds: u64,
    /// /analyze: largest time budget of each move's search, in ms.
    #[arg(long, env = "ADVISOR_ANALYZE_MOVE_BUDGET_MS", default_value_t = defaults::ANALYZE_MOVE_BUDGET_MS)]
    pub analyze_move_budget_ms: u64,
    /// /analyze: largest request body in bytes (a whole game's record).
    #[arg(long, env = "ADVISOR_ANALYZE_BODY_LIMIT", default_value_t = defaults::ANALYZE_BODY_LIMIT)]
    pub analyze_body_limit: usize,
    /// Largest request body in bytes (every route but /analyze).
    #[arg(long, env = "ADVISOR_BODY_LIMIT", default_value_t = defaults::BODY_LIMIT)]
    pub body_limit: usize,
    /// Requests still running after this many seconds get 504.
    #[arg(long, env = "ADVISOR_REQUEST_TIMEOUT_S", default_value_t = defaults::REQUEST_TIMEOUT_S)]
    pub request_timeout_s: u64,
    /// Seconds a client has to send a request head (request line and headers), from connecting or, on a kept-alive
    /// connection, from the request's first byte; then the connection is closed.
    #[arg(long, env = "ADVISOR_HEADER_TIMEOUT_S", default_value_t = defaults::HEADER_TIMEOUT_S)]
    pub header_timeout_s: u64,
    /// Seconds a kept-alive connection may wait for its next request before it is closed.
    #[arg(long, env = "ADVISOR_IDLE_TIMEOUT_S", default_value_t = defaults::IDLE_TIMEOUT_S)]
    pub idle_timeout_s: u64,
    /// Seconds a client has to send a request body once its head arrived; then 408 and the connection is closed.
    #[arg(long, env = "ADVISOR_BODY_TIMEOUT_S", default_value_t = defaults::BODY_TIMEOUT_S)]
    pub body_timeout_s: u64,
    /// Open connections at most; a new connection beyond them is closed at once [default: half the soft limit of
    /// open files (ulimit -n), at most 10000].
    #[arg(long, env = "ADVISOR_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Largest request head (request line and headers) in bytes; larger is 431 and the connection is closed.
    #[arg(long, env = "ADVISOR_MAX_HEADER_BYTES", default_value_t = defaults::MAX_HEADER_BYTES)]
    pub max_header_bytes: usize,
    /// Most header fields in one request (1-100); more is 431 and the connection is closed.
    #[arg(long, env = "ADVISOR_MAX_HEADERS", default_value_t = defaults::MAX_HEADERS)]
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
    #[arg(long, env = "ADVISOR_SHUTDOWN_GRACE_S", default_value_t = defaults::SHUTDOWN_GRACE_S)]
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
            max_trace_moves: positive("max-trace-moves", self.max_trace_moves)?,
            sim_move_budget: Duration::from_millis(positive("sim-move-budget-ms", self.sim_move_budget_ms)?),
            max_analyze_moves: positive("max-analyze-moves", self.max_analyze_moves)?,
            max_analyze_time: Duration::from_secs(positive("max-analyze-seconds", self.max_analyze_seconds)?),
            analyze_move_budget: Duration::from_millis(positive(
                "analyze-move-budget-ms",
                self.analyze_move_budget_ms,
            )?),
            analyze_body_limit: positive("analyze-body-limit", self.analyze_body_limit as u64)? as usize,
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

/// The fields of what to search ([`advisor2048::request::SEARCH`]), as flags.
#[derive(Debug, Clone)]
pub struct SearchFields;

impl FieldSet for SearchFields {
    const FIELDS: &'static [&'static Field] = advisor2048::request::SEARCH;
}

/// The seed and threads of one search (`best-move`, `analyze`, `bench`: [`advisor2048::request::ONE_SEARCH`]), as
/// flags (in `simulate`, `--seed` and `--threads` are the run's own).
#[derive(Debug, Clone)]
pub struct OneSearchFields;

impl FieldSet for OneSearchFields {
    const FIELDS: &'static [&'static Field] = advisor2048::request::ONE_SEARCH;
}

/// The seed and threads of one search, as flags.
pub type OneSearchArgs = FieldFlags<OneSearchFields>;

/// Search flags shared by `best-move`, `simulate`, `analyze` and `bench`: the fields of an HTTP search request, read
/// and validated by the same code ([`advisor2048::request`]), and how this machine runs the search.
#[derive(Args, Debug, Clone)]
pub struct SearchArgs {
    #[command(flatten)]
    pub fields: FieldFlags<SearchFields>,
    /// Transposition table size as log2 of its entries (16 bytes each); 0 disables it.
    #[arg(long, default_value_t = advisor2048::search::DEFAULT_TT_BITS)]
    pub tt_bits: u8,
    #[command(flatten)]
    pub network: NetworkArgs,
}

impl SearchArgs {
    /// Adds the search fields these flags give to `body`.
    pub fn fill(&self, body: &mut Body) {
        self.fields.fill(body);
    }

    /// What a search on this machine may ask for, and how it runs (`--tt-bits`).
    pub fn bounds(&self) -> SearchBounds {
        SearchBounds {
            tt_bits: (self.tt_bits > 0).then_some(self.tt_bits),
            ..SearchBounds::local(self.network.available())
        }
    }

    /// The request's evaluator, loading the network only when it is needed.
    pub fn evaluator(&self, request: &EvaluatorRequest, flags: &Flags) -> anyhow::Result<AnyEvaluator> {
        let network = self.network.load_for(request.kind)?;
        Ok(request.build(network.as_ref()).map_err(|p| flags.invalid(p.into()))?)
    }
}

/// The n-tuple network of profile `learned` / evaluator `ntuple`.
#[derive(Args, Debug, Clone, Default)]
pub struct NetworkArgs {
    /// Weight file of the n-tuple network used by profile learned and evaluator ntuple (written by `train`)
    /// [default: the network built into this binary]; `none` runs without a network.
    #[arg(long = "weights", env = "ADVISOR_WEIGHTS", value_name = "FILE")]
    pub weights_file: Option<std::path::PathBuf>,
    /// Reach-odds model (written by `odds-fit`) for the network of --weights at the default settings [default: the
    /// model built into this binary, when it was fitted for that network].
    #[arg(long = "odds-model", env = "ADVISOR_ODDS_MODEL", value_name = "FILE")]
    pub odds_file: Option<std::path::PathBuf>,
}

impl NetworkArgs {
    /// The network named by --weights / ADVISOR_WEIGHTS (or the shipped one), loaded and checked; `None` with
    /// `--weights none`.
    pub fn load(&self) -> anyhow::Result<Option<Arc<Network>>> {
        match &self.weights_file {
            Some(path) if path.as_os_str() == "none" => Ok(None),
            Some(path) => {
                let net = advisor2048::eval::ntuple::staged::load_any(path)
                    .with_context(|| format!("cannot load the network {}", path.display()))?;
                Ok(Some(Arc::new(net)))
            }
            None => {
                let net = advisor2048::eval::ntuple::shipped::load().context("the built-in network is damaged")?;
                Ok(Some(Arc::new(net)))
            }
        }
    }

    /// The reach odds offered with `network` (the loaded one): the model of --odds-model, which must have been fitted
    /// for that network and the default settings (else an error), or the built-in one when it was (else requests for
    /// odds hear why there are none).
    pub fn odds(&self, network: Option<&Arc<Network>>) -> anyhow::Result<OddsSource> {
        let loaded = match &self.odds_file {
            Some(path) => Some(
                advisor2048::eval::odds::file::load(path)
                    .with_context(|| format!("cannot load the odds model {}", path.display()))?,
            ),
            None => None,
        };
        let named = loaded.is_some();
        advisor2048::request::odds::resolve(network, loaded)
            .with_context(|| format!("the odds model of --odds-model does not fit (named: {named})"))
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

/// How `bench` names the request's fields.
pub const ONE_SEARCH_FLAGS: Flags = Flags::new("BOARD", &[SEARCH, ONE_SEARCH]);

/// How `best-move` names the request's fields.
pub const BEST_MOVE_FLAGS: Flags = Flags::new("BOARD", &[SEARCH, ONE_SEARCH, ODDS_FIELDS]);

/// The `odds` switch of `best-move` and `evaluate`.
#[derive(Debug, Clone)]
pub struct OddsFields;

impl FieldSet for OddsFields {
    const FIELDS: &'static [&'static Field] = ODDS_FIELDS;
}

/// The fields of `evaluate` beside its board, as flags.
#[derive(Debug, Clone)]
pub struct EvaluateFields;

impl FieldSet for EvaluateFields {
    const FIELDS: &'static [&'static Field] = EVALUATE;
}

/// How `evaluate` names the request's fields.
pub const EVALUATE_FLAGS: Flags = Flags::new("BOARD", &[EVALUATE, ODDS_FIELDS]);

#[derive(Args, Debug)]
pub struct BestMoveArgs {
    /// The board: 16 hex digits of exponents (top-left first), JSON rows of tile values (top row first), or the
    /// original game's saved state as JSON.
    pub board: String,
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub one: OneSearchArgs,
    #[command(flatten)]
    pub odds: FieldFlags<OddsFields>,
    /// Print the same JSON the HTTP API returns.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct EvaluateArgs {
    /// The board: 16 hex digits, JSON rows of tile values, or the original game's saved state as JSON.
    pub board: String,
    #[command(flatten)]
    pub fields: FieldFlags<EvaluateFields>,
    #[command(flatten)]
    pub odds: FieldFlags<OddsFields>,
    #[command(flatten)]
    pub network: NetworkArgs,
    /// Print the same JSON the HTTP API returns.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if cli.command.as_ref().is_some_and(Command::ends_with_its_reader) {
        end_on_closed_pipe();
    }
    match cli.command {
        None => serve(ServeArgs::default()),
        Some(Command::Serve(args)) => serve(args),
        Some(Command::BestMove(args)) => best_move(&args),
        Some(Command::Evaluate(args)) => evaluate(&args),
        Some(Command::Simulate(args)) => simulate::run(&args),
        Some(Command::Report(args)) => simulate::report(&args),
        Some(Command::Analyze(args)) => analyze::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::Healthcheck(args)) => healthcheck::run(&args),
        Some(Command::Train(args)) => train::run_train(&args),
        Some(Command::Net(cmd)) => net::run(&cmd),
        Some(Command::OddsFit(args)) => odds::run_fit(&args),
        Some(Command::OddsCheck(args)) => odds::run_check(&args),
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
    let odds = args.network.odds(network.as_ref())?;
    match &odds {
        Ok(model) => {
            tracing::info!(network = %model.fitted_for.network, depth = model.fitted_for.depth, "reach odds loaded")
        }
        Err(why) => tracing::info!(%why, "no reach odds"),
    }
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
    // At most this many threads search at once: their transposition tables are kept and reused, never freed.
    advisor2048::search::keep_spare_tables(config.max_searches);
    tracing::debug!(ms = start.elapsed().as_secs_f64() * 1e3, "tables built");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        tracing::info!(addr = %listener.local_addr()?, ?config, "advisor2048 serving");
        server::serve(
            listener,
            AppState::with_odds(config, network, odds),
            server::shutdown_signal(),
        )
        .await?;
        tracing::info!("stopped");
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

fn best_move(args: &BestMoveArgs) -> anyhow::Result<ExitCode> {
    let flags = &BEST_MOVE_FLAGS;
    let mut body = Body::default();
    body.board(Some(&args.board));
    args.search.fill(&mut body);
    args.one.fill(&mut body);
    args.odds.fill(&mut body);
    let json = body.finish().map_err(|p| flags.invalid(p))?;
    let request = BestMoveRequest::from_json(&json, &args.search.bounds()).map_err(|p| flags.invalid(p))?;
    let (network, odds) = network_and_odds(&args.search.network, request.search.evaluator.kind, request.odds)?;
    let response = request
        .run(network.as_ref(), &odds, &StopHandle::new())
        .map_err(|p| flags.invalid(p.into()))?;
    let tiles = request.board;
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
        "profile {}, evaluator {}, depth {}/{} plies{}, {} nodes, {} tt hits, {:.1} ms{}",
        s.profile,
        s.evaluator,
        s.depth,
        s.target_depth,
        node_budget_words(s.node_budget, s.late_weight),
        s.nodes,
        s.tt_hits,
        s.elapsed_ms,
        if s.truncated { ", truncated" } else { "" }
    );
    if let Some(odds) = &response.odds {
        print_odds(odds, response.moves.iter().map(|m| (m.direction, m.odds.as_deref())));
    }
    Ok(ExitCode::SUCCESS)
}

/// The network a request needs (`kind`'s, or the learned one for odds) and the odds offered with it.
pub(crate) fn network_and_odds(
    args: &NetworkArgs,
    kind: EvaluatorKind,
    odds: bool,
) -> anyhow::Result<(Option<Arc<Network>>, OddsSource)> {
    let network = args.load_for(if odds { EvaluatorKind::NTuple } else { kind })?;
    let source = if odds {
        args.odds(network.as_ref())?
    } else {
        Err(advisor2048::eval::odds::OddsUnavailable::NoNetwork)
    };
    Ok((network, source))
}

/// Prints the reach odds of a position and of its directions.
fn print_odds<'a>(
    odds: &advisor2048::request::odds::PositionOdds,
    directions: impl Iterator<Item = (&'a str, Option<&'a [advisor2048::eval::odds::Chance]>)>,
) {
    let tiles: Vec<String> = odds.chances.iter().map(|c| format!("{:>7}", c.tile)).collect();
    println!(
        "reach odds (network {}, profile {}, depth {}):",
        odds.play.network, odds.play.profile, odds.play.depth
    );
    println!("  {:<8} {}", "", tiles.join(" "));
    let row = |chances: &[advisor2048::eval::odds::Chance]| {
        chances
            .iter()
            .map(|c| format!("{:>7.3}", c.chance))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!("  {:<8} {}", "position", row(&odds.chances));
    for (direction, chances) in directions {
        if let Some(chances) = chances {
            println!("  {direction:<8} {}", row(chances));
        }
    }
}

fn evaluate(args: &EvaluateArgs) -> anyhow::Result<ExitCode> {
    let flags = &EVALUATE_FLAGS;
    let mut body = Body::default();
    body.board(Some(&args.board));
    args.fields.fill(&mut body);
    args.odds.fill(&mut body);
    let json = body.finish().map_err(|p| flags.invalid(p))?;
    let request = EvaluateRequest::from_json(&json, args.network.available()).map_err(|p| flags.invalid(p))?;
    let (network, odds) = network_and_odds(&args.network, request.evaluator.kind, request.odds)?;
    let Some(response) = request
        .run(network.as_ref(), &odds, &StopHandle::new())
        .map_err(|p| flags.invalid(p.into()))?
    else {
        bail!("the search for the odds was stopped");
    };
    let tiles = request.board;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&response)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{tiles}\nevaluator {}: total {:.4}", response.evaluator, response.total);
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
    if let Some(odds) = &response.odds {
        print_odds(
            odds,
            response.after_moves.iter().map(|m| (m.direction, m.odds.as_deref())),
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// clap's own check of every command: no two flags share an id or a name (the request fields' flags are built
    /// from their declarations, beside each command's own flags).
    #[test]
    fn every_command_s_flags_are_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_request_field_s_flag_carries_its_value_into_the_request() {
        let cli = Cli::parse_from([
            "advisor2048",
            "bench",
            "--seed",
            "7",
            "--search-seed",
            "9",
            "--top-k",
            "2",
        ]);
        let Some(Command::Bench(args)) = cli.command else {
            panic!("not bench");
        };
        assert_eq!(args.seed, 7);
        let mut body = Body::default();
        args.search.fill(&mut body);
        args.one.fill(&mut body);
        let json = body.finish().map_err(|p| p.len()).expect("no problems");
        assert_eq!(json, serde_json::json!({"seed": 9, "top_k": 2}));
    }
}
