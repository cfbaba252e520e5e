//! Evaluators: the heuristic h(board) that the search maximises and that users read to understand advice.
//!
//! - [`classic`]: the explainable five-term heuristic of the seed document (002, section 5, eq. 4-9);
//! - [`tuned`]: the row heuristic whose weights were tuned by self-play optimisation, as in the best-known public
//!   heuristic expectimax engine;
//! - [`ntuple`]: a learned n-tuple network (loaded from a weight file; trained by `advisor2048 train`);
//! - [`odds`]: not an evaluator but beside them: the reach-odds model, the chance that the default play makes each
//!   tile from 2048 up, read from a move's board and search value.
//!
//! All implement [`Evaluator`]: a fast path on [`Board`] that costs a few table lookups and never allocates, an
//! exact path on [`Tiles`] (boards with tiles up to 131072), and a [`Breakdown`] that lists every component with
//! its raw value, weight and contribution. Weights have defaults and any subset can be overridden by name
//! ([`EvaluatorKind::with_weights`]).

/// Defines an evaluator's weights from one table (name, default, doc), in breakdown order: the struct, its
/// `Default`, `NAMES`, `named()` (for parsing and the docs), `apply()` (overrides by name) and `breakdown()`
/// (components from the raw terms in the same order). A weight is written once, here.
macro_rules! weight_table {
    (
        $(#[$meta:meta])*
        pub struct $name:ident: $evaluator:literal {
            $($(#[$field_meta:meta])* $field:ident = $default:expr,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name {
            $($(#[$field_meta])* pub $field: f64,)*
        }

        impl Default for $name {
            fn default() -> Self {
                $name { $($field: $default,)* }
            }
        }

        impl $name {
            /// The weight names, in breakdown order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field),)*];

            /// The weights by name, in breakdown order.
            pub fn named(&self) -> Vec<(&'static str, f64)> {
                vec![$((stringify!($field), self.$field),)*]
            }

            /// Overrides weights by name.
            pub fn apply(&mut self, overrides: &[(String, f64)]) -> Result<(), $crate::eval::WeightError> {
                $crate::eval::apply_overrides($evaluator, &mut [$((stringify!($field), &mut self.$field),)*], overrides)
            }

            /// The breakdown whose components are `raws` (in breakdown order) times these weights.
            pub fn breakdown(&self, raws: [f64; $name::NAMES.len()]) -> $crate::eval::Breakdown {
                $crate::eval::Breakdown::from_components(
                    $evaluator,
                    self.named()
                        .into_iter()
                        .zip(raws)
                        .map(|((name, weight), raw)| $crate::eval::Component::new(name, raw, weight))
                        .collect(),
                )
            }
        }
    };
}
pub mod classic;
pub mod ntuple;
pub mod odds;
pub mod tuned;

use std::sync::Arc;

use crate::engine::{Board, Tiles};
use crate::names::named_enum;

pub use classic::{ClassicEvaluator, ClassicWeights};
pub use ntuple::{NTupleEvaluator, Network};
pub use tuned::{TunedEvaluator, TunedWeights};

/// What the search calls in its hot loop, and what explains a board to a user.
pub trait Evaluator: Send + Sync {
    /// The evaluator's wire name (`classic`, `tuned` or `ntuple`).
    fn name(&self) -> &'static str;
    /// h(board) on the fast board: table lookups, no allocation.
    fn evaluate(&self, board: Board) -> f64 {
        self.evaluate_with_transpose(board, board.transpose())
    }
    /// h(board) when the caller already has `board.transpose()` (the search often does).
    fn evaluate_with_transpose(&self, board: Board, transposed: Board) -> f64;
    /// h of up to four boards at once, each given with its transpose (the boards after a position's four moves;
    /// `None` for an illegal one): the values of [`Evaluator::evaluate_with_transpose`], bit for bit. An evaluator
    /// whose lookups miss the cache overrides it to start every load before it sums any.
    #[inline]
    fn evaluate_four(&self, boards: [Option<(Board, Board)>; 4]) -> [Option<f64>; 4] {
        boards.map(|b| b.map(|(board, transposed)| self.evaluate_with_transpose(board, transposed)))
    }
    /// h of the first `n` (0 to 4) of `boards`, each given with its transpose: the values of
    /// [`Evaluator::evaluate_with_transpose`], bit for bit (the other places of the answer are unspecified). The
    /// search's leaves call it for the boards after a move node's moves whose values they do not have yet, so that an
    /// evaluator whose lookups miss the cache can value them side by side.
    #[inline]
    fn evaluate_first(&self, boards: [(Board, Board); 4], n: usize) -> [f64; 4] {
        let mut values = [0.0; 4];
        for (v, &(board, transposed)) in values.iter_mut().zip(&boards).take(n) {
            *v = self.evaluate_with_transpose(board, transposed);
        }
        values
    }
    /// Whether every value of this evaluator is an `f32` number and costs far more than a look in a small cache: the
    /// search then keeps the values of the boards after its leaves' moves (many recur among sibling leaves: a tile
    /// spawned anywhere in one gap of a row slides to the same place) in such a cache, as `f32`, exactly.
    fn values_worth_caching(&self) -> bool {
        false
    }
    /// A number naming this evaluator's values in this process: two evaluators with the same key value every board
    /// alike, now and later. The search's cache of leaf values ([`Evaluator::values_worth_caching`]) then outlives a
    /// search: the next search with the same key (the next move of a game, the next request) finds the values the
    /// last one left. `None` (the default): no such promise, and the cache lives for one search.
    fn values_key(&self) -> Option<u64> {
        None
    }
    /// h(board) on any legal board, exactly (tiles up to 131072). No allocation.
    fn evaluate_tiles(&self, tiles: &Tiles) -> f64;
    /// Every component of h(board) with its raw value, weight and contribution; they add up to the total.
    fn breakdown(&self, tiles: &Tiles) -> Breakdown;
    /// True when h values boards right after a move (before the spawn), as a learned network does: the search then
    /// keeps its leaves at such boards (odd depths).
    fn afterstate_values(&self) -> bool {
        false
    }
    /// What one node of a search with this evaluator counts for in a node budget
    /// ([`SearchSettings::node_budget`](crate::search::SearchSettings::node_budget)): 1 (the default) for a node
    /// as costly as one of the evaluator's cheapest kind; a network stage that reads twice the tuples of its first
    /// stage counts 2, so that a node budget holds the time per move where the stages differ in cost.
    fn node_cost(&self) -> f64 {
        1.0
    }
}

/// One term of a heuristic: `contribution = weight x raw`. Serialized as it is on the wire.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Component {
    pub name: &'static str,
    pub raw: f64,
    pub weight: f64,
    pub contribution: f64,
}

impl Component {
    pub fn new(name: &'static str, raw: f64, weight: f64) -> Component {
        Component {
            name,
            raw,
            weight,
            contribution: weight * raw,
        }
    }
}

/// The explanation of one evaluation: the components and their sum. Serialized as it is on the wire
/// (`evaluator`, `total`, `components`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Breakdown {
    pub evaluator: &'static str,
    pub total: f64,
    pub components: Vec<Component>,
}

impl Breakdown {
    /// A breakdown whose total is the sum of the components' contributions.
    pub fn from_components(evaluator: &'static str, components: Vec<Component>) -> Breakdown {
        let total = components.iter().map(|c| c.contribution).sum();
        Breakdown {
            evaluator,
            components,
            total,
        }
    }

    /// The component called `name`.
    pub fn component(&self, name: &str) -> Option<&Component> {
        self.components.iter().find(|c| c.name == name)
    }
}

/// What the `ntuple` evaluator lists as its known weight names: it has none.
pub const NTUPLE_KNOWN_WEIGHTS: &str = "none: a network's weights come from its weight file";

/// A weight override that cannot be applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WeightError {
    #[error("unknown weight {name:?} for evaluator {evaluator} (known: {known})")]
    Unknown {
        evaluator: &'static str,
        name: String,
        known: String,
    },
    #[error("weight {name:?} must be a finite number, found {value}")]
    NotFinite { name: String, value: f64 },
    /// The `ntuple` evaluator (profile `learned`) was asked for and no network is loaded.
    #[error(
        "evaluator ntuple (profile learned) needs a network and none is loaded: start advisor2048 with --weights FILE \
         or ADVISOR_WEIGHTS=FILE (a weight file written by `advisor2048 train`)"
    )]
    NoNetwork,
}

/// Applies `(name, value)` overrides to a weight list of `(name, &mut value)` slots.
pub(crate) fn apply_overrides(
    evaluator: &'static str,
    slots: &mut [(&'static str, &mut f64)],
    overrides: &[(String, f64)],
) -> Result<(), WeightError> {
    for (name, value) in overrides {
        let Some((_, slot)) = slots.iter_mut().find(|(n, _)| n == name) else {
            let known = slots.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
            return Err(WeightError::Unknown {
                evaluator,
                name: name.clone(),
                known,
            });
        };
        if !value.is_finite() {
            return Err(WeightError::NotFinite {
                name: name.clone(),
                value: *value,
            });
        }
        **slot = *value;
    }
    Ok(())
}

named_enum! {
    /// The evaluators by name.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum EvaluatorKind: "an evaluator" {
        Classic = "classic",
        Tuned = "tuned",
        NTuple = "ntuple",
    }
}

impl EvaluatorKind {
    /// The hand-written heuristics: the evaluators that need no loaded network and take weights by name.
    pub const HEURISTICS: [EvaluatorKind; 2] = [EvaluatorKind::Classic, EvaluatorKind::Tuned];

    /// The evaluator with its default weights (tables built once per process); [`WeightError::NoNetwork`] for
    /// `ntuple`, which needs a network ([`EvaluatorKind::with_network`]).
    pub fn default_evaluator(self) -> Result<AnyEvaluator, WeightError> {
        self.with_network(None, &[])
    }

    /// The evaluator with `overrides` applied to its default weights (tables built now when any weight changes).
    ///
    /// # Examples
    /// ```
    /// use advisor2048::eval::{EvaluatorKind, Evaluator};
    /// use advisor2048::engine::Tiles;
    /// let e = EvaluatorKind::Classic.with_weights(&[("empty".to_string(), 0.0)]).unwrap();
    /// let t = Tiles::from_rows(&[[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]).unwrap();
    /// assert_eq!(e.breakdown(&t).component("empty").unwrap().contribution, 0.0);
    /// assert!(EvaluatorKind::Tuned.with_weights(&[("dept".to_string(), 1.0)]).is_err());
    /// ```
    pub fn with_weights(self, overrides: &[(String, f64)]) -> Result<AnyEvaluator, WeightError> {
        self.with_network(None, overrides)
    }

    /// The evaluator, with `net` as the network of `ntuple` (ignored by the heuristics) and `overrides` applied to
    /// the heuristics' default weights. `ntuple` takes no weights by name: any override is an unknown weight.
    pub fn with_network(
        self,
        net: Option<&Arc<Network>>,
        overrides: &[(String, f64)],
    ) -> Result<AnyEvaluator, WeightError> {
        if self == EvaluatorKind::NTuple {
            if let Some((name, _)) = overrides.first() {
                return Err(WeightError::Unknown {
                    evaluator: EvaluatorKind::NTuple.as_str(),
                    name: name.clone(),
                    known: NTUPLE_KNOWN_WEIGHTS.into(),
                });
            }
            return net
                .map(|n| AnyEvaluator::NTuple(NTupleEvaluator::new(Arc::clone(n))))
                .ok_or(WeightError::NoNetwork);
        }
        if overrides.is_empty() {
            return Ok(match self {
                EvaluatorKind::Classic => AnyEvaluator::Classic(ClassicEvaluator::default()),
                _ => AnyEvaluator::Tuned(TunedEvaluator::default()),
            });
        }
        Ok(match self {
            EvaluatorKind::Classic => {
                let mut w = ClassicWeights::default();
                w.apply(overrides)?;
                AnyEvaluator::Classic(ClassicEvaluator::new(w))
            }
            _ => {
                let mut w = TunedWeights::default();
                w.apply(overrides)?;
                AnyEvaluator::Tuned(TunedEvaluator::new(w))
            }
        })
    }

    /// Names of the weights this evaluator takes, with their defaults (none for `ntuple`).
    pub fn default_weights(self) -> Vec<(&'static str, f64)> {
        match self {
            EvaluatorKind::Classic => ClassicWeights::default().named(),
            EvaluatorKind::Tuned => TunedWeights::default().named(),
            EvaluatorKind::NTuple => Vec::new(),
        }
    }
}

/// The error of parsing an [`EvaluatorKind`].
pub type ParseEvaluatorError = crate::names::ParseNameError;

/// Any evaluator, dispatched by a `match` (one predictable branch) so the search can be monomorphised on it.
#[derive(Clone, Debug)]
pub enum AnyEvaluator {
    Classic(ClassicEvaluator),
    Tuned(TunedEvaluator),
    NTuple(NTupleEvaluator),
}

impl AnyEvaluator {
    pub fn kind(&self) -> EvaluatorKind {
        match self {
            AnyEvaluator::Classic(_) => EvaluatorKind::Classic,
            AnyEvaluator::Tuned(_) => EvaluatorKind::Tuned,
            AnyEvaluator::NTuple(_) => EvaluatorKind::NTuple,
        }
    }
}

impl Evaluator for AnyEvaluator {
    fn name(&self) -> &'static str {
        self.kind().as_str()
    }
    #[inline]
    fn evaluate_with_transpose(&self, board: Board, transposed: Board) -> f64 {
        match self {
            AnyEvaluator::Classic(e) => e.evaluate_with_transpose(board, transposed),
            AnyEvaluator::Tuned(e) => e.evaluate_with_transpose(board, transposed),
            AnyEvaluator::NTuple(e) => e.evaluate_with_transpose(board, transposed),
        }
    }
    #[inline]
    fn evaluate_four(&self, boards: [Option<(Board, Board)>; 4]) -> [Option<f64>; 4] {
        match self {
            AnyEvaluator::Classic(e) => e.evaluate_four(boards),
            AnyEvaluator::Tuned(e) => e.evaluate_four(boards),
            AnyEvaluator::NTuple(e) => e.evaluate_four(boards),
        }
    }
    #[inline]
    fn evaluate_first(&self, boards: [(Board, Board); 4], n: usize) -> [f64; 4] {
        match self {
            AnyEvaluator::Classic(e) => e.evaluate_first(boards, n),
            AnyEvaluator::Tuned(e) => e.evaluate_first(boards, n),
            AnyEvaluator::NTuple(e) => e.evaluate_first(boards, n),
        }
    }
    fn values_worth_caching(&self) -> bool {
        matches!(self, AnyEvaluator::NTuple(_))
    }
    fn values_key(&self) -> Option<u64> {
        match self {
            AnyEvaluator::NTuple(e) => e.values_key(),
            _ => None,
        }
    }
    fn evaluate_tiles(&self, tiles: &Tiles) -> f64 {
        match self {
            AnyEvaluator::Classic(e) => e.evaluate_tiles(tiles),
            AnyEvaluator::Tuned(e) => e.evaluate_tiles(tiles),
            AnyEvaluator::NTuple(e) => e.evaluate_tiles(tiles),
        }
    }
    fn afterstate_values(&self) -> bool {
        matches!(self, AnyEvaluator::NTuple(_))
    }
    fn node_cost(&self) -> f64 {
        match self {
            AnyEvaluator::NTuple(e) => e.node_cost(),
            _ => 1.0,
        }
    }
    fn breakdown(&self, tiles: &Tiles) -> Breakdown {
        match self {
            AnyEvaluator::Classic(e) => e.breakdown(tiles),
            AnyEvaluator::Tuned(e) => e.breakdown(tiles),
            AnyEvaluator::NTuple(e) => e.breakdown(tiles),
        }
    }
}
