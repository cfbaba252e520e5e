//! Reach odds in the answers of `/best-move` and `/evaluate` (`"odds": true`): for the position and for each legal
//! direction (that move, then the default play), the chance that the default play makes each tile from 2048 to
//! 65536. The field ([`ODDS`]), the default play ([`default_play`]), which model a service offers ([`resolve`]) and
//! the answer's block ([`PositionOdds`]) live here; the model itself is [`crate::eval::odds`].
//!
//! The chances are those of the play the service advises: the default profile at its default settings, whatever
//! settings the request searched with. A request that searched exactly as the default play does lends its search
//! to the odds; any other runs the default play's search beside its own (about a millisecond).

use std::sync::Arc;

use serde::Serialize;

use super::field::{Absent, Accepts, Field, FlagDefault};
use super::{EvaluatorRequest, Problem};
use crate::engine::{Direction, Tiles};
use crate::eval::odds::{self, Chance, FittedFor, OddsModel, OddsUnavailable, Situation};
use crate::eval::{EvaluatorKind, Network};
use crate::search::{search, Depth, Profile, SearchOutcome, SearchSettings, StopHandle};

/// `odds`: add the reach odds to the answer.
pub const ODDS: Field = Field {
    name: "odds",
    flag: "odds",
    value_name: "",
    help: "Add the chance that the default play makes each tile from 2048 to 65536, for the position and for each \
           legal direction (that move, then the default play)",
    accepts: Accepts::Bool,
    absent: Absent::Bool(false),
    flag_default: FlagDefault::Absent,
};

/// The fields of a request that can ask for odds (`/best-move`, `/evaluate`).
pub const ODDS_FIELDS: &[&Field] = &[&ODDS];

/// The reach-odds model a service or command offers, or why it offers none.
pub type OddsSource = Result<Arc<OddsModel>, OddsUnavailable>;

/// The play the odds predict: the `learned` profile at its default settings, searched to its depth without a
/// budget, on one thread.
pub fn default_play() -> SearchSettings {
    Profile::Learned.settings()
}

/// What a model must have been fitted for to predict the default play of the network `checksum`.
pub fn default_fitted_for(checksum: &str) -> FittedFor {
    let play = default_play();
    FittedFor {
        network: checksum.to_owned(),
        profile: play.profile.as_str().to_owned(),
        depth: match play.depth {
            Depth::Plies(p) => p,
            Depth::Auto => 0,
        },
        prob_cutoff: play.prob_cutoff,
        node_budget: play.node_budget,
        late_weight: play.late_weight,
    }
}

/// The model a service running `network` offers: `loaded` (an odds file named at start-up) when given, else the
/// built-in one. An odds file that does not predict this network's default play is an error (a configuration
/// mistake, reported at start-up); the built-in model not fitting is not: the service runs, and a request for odds
/// hears why there are none.
pub fn resolve(network: Option<&Arc<Network>>, loaded: Option<OddsModel>) -> Result<OddsSource, OddsUnavailable> {
    let Some(network) = network else {
        return match loaded {
            Some(_) => Err(OddsUnavailable::NoNetwork),
            None => Ok(Err(OddsUnavailable::NoNetwork)),
        };
    };
    let checksum = network.info.as_ref().map(|i| i.checksum().to_owned());
    let wanted = default_fitted_for(checksum.as_deref().unwrap_or(""));
    if let Some(model) = loaded {
        model.check_for(checksum.as_deref(), &wanted)?;
        return Ok(Ok(Arc::new(model)));
    }
    let Some(running) = checksum else {
        return Ok(Err(OddsUnavailable::NoChecksum));
    };
    let built_in = match odds::shipped::load() {
        Ok(model) => model,
        Err(_) => return Ok(Err(OddsUnavailable::NoModel { running })),
    };
    Ok(built_in.check_for(Some(&running), &wanted).map(|()| Arc::new(built_in)))
}

/// The odds block of an answer: the position's chances and the play they predict.
#[derive(Serialize, Clone, Debug)]
pub struct PositionOdds {
    /// Chances for the position: the chances of the direction the default play chooses (a board with no legal move:
    /// 1 for its tiles, 0 for the others).
    pub chances: Vec<Chance>,
    /// The direction the default play chooses (`null` when no move is legal).
    pub direction: Option<&'static str>,
    /// The play the chances predict.
    pub play: FittedFor,
}

/// The odds of a position and of each of its directions (order of [`Direction::ALL`]; `None` when illegal).
#[derive(Clone, Debug)]
pub struct Odds {
    pub position: PositionOdds,
    pub directions: [Option<Vec<Chance>>; 4],
}

/// Whether a request's search is the default play's search (so that its outcome gives the odds as it is).
pub fn searches_as_default_play(settings: &SearchSettings, evaluator: &EvaluatorRequest) -> bool {
    let play = default_play();
    evaluator.kind == EvaluatorKind::NTuple
        && evaluator.weights.is_empty()
        && settings.profile == play.profile
        && settings.depth == play.depth
        && settings.reward_weight == play.reward_weight
        && settings.terminal == play.terminal
        && settings.prob_cutoff == play.prob_cutoff
        && settings.node_budget == play.node_budget
        && settings.late_weight == play.late_weight
        && settings.sample_cells.is_none()
        && settings.top_k.is_none()
}

/// The default play's search of `tiles` with `network`: within its node budget, with no time limit (the odds were
/// fitted on that play, which is the same on every machine).
pub fn default_search(tiles: &Tiles, network: &Arc<Network>, stop: &StopHandle) -> SearchOutcome {
    let evaluator = EvaluatorKind::NTuple
        .with_network(Some(network), &[])
        .expect("the ntuple evaluator without weight overrides builds with a network");
    search(tiles, &evaluator, &default_play(), stop)
}

/// Whether `outcome`, a search with the default play's settings, is the default play's search: nothing cut it short
/// (a time budget or a stop handle can). Its node budget ends it without cutting it, and a forced move ends after
/// one ply, as in the default play.
pub fn complete(outcome: &SearchOutcome) -> bool {
    outcome.game_over() || (!outcome.stats.truncated && outcome.stats.depth > 0)
}

/// The odds of `tiles` from `outcome`, the default play's search of it, by `model`.
pub fn odds_of(tiles: &Tiles, outcome: &SearchOutcome, model: &OddsModel) -> Odds {
    let directions: [Option<Vec<Chance>>; 4] = Direction::ALL.map(|d| {
        let (after, _) = tiles.play(d)?;
        let value = outcome.values[d.index()]?;
        Some(model.chances(&Situation { after, value }).to_vec())
    });
    let chances = match outcome.best {
        Some(d) => directions[d.index()].clone(),
        None => None,
    };
    Odds {
        position: PositionOdds {
            chances: chances.unwrap_or_else(|| odds::lost(tiles).to_vec()),
            direction: outcome.best.map(Direction::as_str),
            play: model.fitted_for.clone(),
        },
        directions,
    }
}

/// The model and the network a request's odds come from, once the service was found to offer them.
#[derive(Clone, Copy, Debug)]
pub struct OddsGiver<'a> {
    pub model: &'a OddsModel,
    pub network: &'a Arc<Network>,
}

impl<'a> OddsGiver<'a> {
    /// The model of `source` and the learned network, or the problem at `/odds` saying why the service offers no odds.
    pub fn new(network: Option<&'a Arc<Network>>, source: &'a OddsSource) -> Result<OddsGiver<'a>, Problem> {
        let model = source
            .as_ref()
            .map_err(|why| Problem::new(ODDS.pointer(), why.to_string()))?;
        let Some(network) = network else {
            return Err(Problem::new(ODDS.pointer(), OddsUnavailable::NoNetwork.to_string()));
        };
        Ok(OddsGiver { model, network })
    }

    /// The odds of `tiles`: from `own` (a search of it) when that search is the default play's and completed, else
    /// from the default play's own search. `None` when that search was stopped before it completed.
    pub fn odds(&self, tiles: &Tiles, own: Option<&SearchOutcome>, stop: &StopHandle) -> Option<Odds> {
        let searched;
        let outcome = match own.filter(|o| complete(o)) {
            Some(o) => o,
            None => {
                searched = default_search(tiles, self.network, stop);
                &searched
            }
        };
        complete(outcome).then(|| odds_of(tiles, outcome, self.model))
    }
}

/// The odds of `tiles` for a request that asked for them: from `own` (the request's search) when it searched as the
/// default play does and completed, else from the default play's own search. `Err` when the service offers no odds
/// (at `/odds`, saying why); `None` when the search was stopped before it completed.
pub fn answer(
    tiles: &Tiles,
    own: Option<&SearchOutcome>,
    network: Option<&Arc<Network>>,
    source: &OddsSource,
    stop: &StopHandle,
) -> Result<Option<Odds>, Problem> {
    Ok(OddsGiver::new(network, source)?.odds(tiles, own, stop))
}
