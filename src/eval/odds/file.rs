//! The file of a reach-odds model (`nets/odds-<network checksum>.json`, written by `advisor2048 odds-fit`): JSON, a
//! few kilobytes, readable.
//!
//! ```text
//! {"format": "advisor2048-odds", "version": 2,
//!  "fitted_for": {"network": "6ede512830f0a44c", "profile": "learned", "depth": 5, "prob_cutoff": 0.0001},
//!  "fit": {"seeds": [1001, 2002], "games": 300, "positions": 123456, "sample_every": 20},
//!  "features": ["bias", "progress", ...],
//!  "tiles": [{"tile": 2048, "weights": [...], "calibration": [[score, probability], ...]}, ...]}
//! ```
//! Version 1 (the files written before a model could be fitted on several runs) is read as well: its `fit` names one
//! run, as `"seed": 1001`.
//!
//! A file is checked in this order, each failure with its own [`OddsFileError`]: JSON, format name, version, the
//! feature list (a file fitted by a build whose features differ is refused), then the model's shape
//! ([`OddsModel::new`]).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{FitSummary, FittedFor, ModelError, OddsModel, TileModel, FEATURES};

/// The `format` of every odds file.
pub const FORMAT: &str = "advisor2048-odds";
/// The format version this build writes.
pub const VERSION: u32 = 2;
/// The oldest format version this build reads (version 1 names one fitted run, as `seed`).
pub const OLDEST_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct OddsFile {
    format: String,
    version: u32,
    fitted_for: FittedFor,
    fit: FitSummary,
    features: Vec<String>,
    tiles: Vec<TileModel>,
}

/// Why an odds file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OddsFileError {
    #[error("cannot read the odds file: {0}")]
    Io(#[from] std::io::Error),
    #[error("the odds file is not valid: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not an odds file: its format is {0:?}, expected {FORMAT:?}")]
    Format(String),
    #[error("unsupported odds file version {0} (this build reads versions {OLDEST_VERSION} to {VERSION})")]
    Version(u32),
    #[error(
        "the odds file was fitted on the features {found:?}, this build reads {:?}",
        FEATURES
    )]
    Features { found: Vec<String> },
    #[error("the odds file's model is invalid: {0}")]
    Model(#[from] ModelError),
}

/// Decodes and checks an odds file's bytes.
pub fn decode(bytes: &[u8]) -> Result<OddsModel, OddsFileError> {
    let file: OddsFile = serde_json::from_slice(bytes)?;
    if file.format != FORMAT {
        return Err(OddsFileError::Format(file.format));
    }
    if !(OLDEST_VERSION..=VERSION).contains(&file.version) {
        return Err(OddsFileError::Version(file.version));
    }
    if file.features.iter().map(String::as_str).ne(FEATURES) {
        return Err(OddsFileError::Features { found: file.features });
    }
    Ok(OddsModel::new(file.fitted_for, file.fit, file.tiles)?)
}

/// Reads and checks an odds file.
pub fn load(path: &Path) -> Result<OddsModel, OddsFileError> {
    decode(&std::fs::read(path)?)
}

/// The file's text for `model` (pretty JSON, so that a diff of two fits reads).
pub fn encode(model: &OddsModel) -> String {
    let file = OddsFile {
        format: FORMAT.to_owned(),
        version: VERSION,
        fitted_for: model.fitted_for.clone(),
        fit: model.fit.clone(),
        features: FEATURES.iter().map(|&f| f.to_owned()).collect(),
        tiles: model.tiles().to_vec(),
    };
    let mut text = serde_json::to_string_pretty(&file).expect("an odds model serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::odds::TILES;

    fn model() -> OddsModel {
        let fitted_for = crate::eval::odds::test_play();
        let tiles = TILES
            .iter()
            .map(|&tile| TileModel {
                tile,
                weights: vec![0.5; FEATURES.len()],
                calibration: vec![(-1.0, 0.0), (2.5, 0.75)],
            })
            .collect();
        OddsModel::new(fitted_for, FitSummary::default(), tiles).expect("valid")
    }

    #[test]
    fn a_model_reads_back_as_written() {
        let m = model();
        assert_eq!(decode(encode(&m).as_bytes()).expect("reads back"), m);
    }

    #[test]
    fn a_file_of_several_runs_reads_back_and_one_of_version_1_names_its_one_run() {
        let mut m = model();
        m.fit = FitSummary {
            seeds: vec![1001, 2002],
            games: 300,
            positions: 500_000,
            sample_every: 20,
        };
        let text = encode(&m);
        assert!(text.contains("\"version\": 2"), "{text}");
        assert_eq!(decode(text.as_bytes()).expect("reads back"), m);
        assert_eq!(m.fit.total_games(), 600);
        // A version 1 file: one run, as a number.
        let seeds = "\"seeds\": [\n      1001,\n      2002\n    ]";
        assert!(text.contains(seeds), "{text}");
        let old = text
            .replace("\"version\": 2", "\"version\": 1")
            .replace(seeds, "\"seed\": 1001");
        let read = decode(old.as_bytes()).expect("a version 1 file reads");
        assert_eq!(read.fit.seeds, vec![1001]);
        assert_eq!(read.fit.total_games(), 300);
    }

    #[test]
    fn a_file_of_another_format_version_or_feature_list_is_refused() {
        let text = encode(&model());
        let other = text.replace(FORMAT, "something-else");
        assert!(matches!(decode(other.as_bytes()), Err(OddsFileError::Format(_))));
        let newer = text.replace("\"version\": 2", "\"version\": 3");
        assert!(matches!(decode(newer.as_bytes()), Err(OddsFileError::Version(3))));
        let older = text.replace("\"version\": 2", "\"version\": 0");
        assert!(matches!(decode(older.as_bytes()), Err(OddsFileError::Version(0))));
        let features = text.replace("\"to_come\"", "\"score\"");
        assert!(matches!(
            decode(features.as_bytes()),
            Err(OddsFileError::Features { .. })
        ));
        assert!(matches!(decode(b"{"), Err(OddsFileError::Json(_))));
    }
}
