//! A network split into files, one weight set (stage) per file: a small JSON **stage list** names the parts, the
//! tile each part starts at and each part's checksum; every part is an ordinary one-stage weight file (`.a2n`,
//! see [`file`](mod@super::file)) that can also be used on its own.
//!
//! Why: a network of two 4x6 stages is about 170 MB as one file, and no file of this project may pass 100 MB. Kept as
//! parts, each stage stays a file of its own size, and a stage taken from a network already shipped costs nothing
//! new in the repository (the same bytes).
//!
//! # Stage list, version 1
//! ```json
//! {"format": "advisor2048-stages", "version": 1,
//!  "stages": [{"from_tile": 0,     "file": "4x6-9610fc26ea7e3d8b.a2n", "checksum": "9610fc26ea7e3d8b"},
//!             {"from_tile": 16384, "file": "4x6-6ede512830f0a44c.a2n", "checksum": "6ede512830f0a44c"}]}
//! ```
//! `file` is relative to the stage list's folder; `checksum` is the part's short checksum (`advisor2048 net info`),
//! so a part replaced by another file is refused, naming it. The first stage starts at tile 0 (every board), the
//! others at increasing tiles (powers of two up to 32768). Every part has one stage.
//!
//! **Stages of different tuples, stages in several files.** A stage may read more tuples than another (a 4x6 stage
//! for the opening, an 8x6 stage for the late game), as long as each stage's tuples are the first ones of the
//! widest stage's (4x6 is the first four tuples of 8x6). And one stage may be kept in several files, each a
//! one-stage network of some of its tuples, listed after the stage's `file` in `more_tuples` (an 8x6 stage is some
//! 170 MB of compressed f16: two files of four tuples each stay under 100 MB):
//! ```json
//! {"from_tile": 16384, "file": "8x6-late-a.a2n", "checksum": "...",
//!  "more_tuples": [{"file": "8x6-late-b.a2n", "checksum": "..."}]}
//! ```
//! A list that uses neither reads and writes as before (no `more_tuples` field).
//!
//! The loaded network is one [`Network`] with the parts' stages, valued as the multi-stage rule of
//! [`Network::decision_stage`] says. Its checksum is that of the stage list's bytes, which name every part's.
//!
//! **Scales.** An f16 part stores its weights divided by a power-of-two scale; one network has one scale, the
//! largest of its parts', and a part with a smaller scale has its weights divided by the ratio (a power of two)
//! when loaded: exact for every weight above f16's normal range (6.1e-5 of the larger scale), within one unit of
//! 2^-24 of it below (a weight of magnitude below about 2e-4, nothing a value of tens of thousands can notice).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::file::{self, NetFileError, NetHeader, NetInfo, TrainingSummary, ValueType};
use super::{Network, Shape, ShapeError};

/// The `format` of a stage list.
pub const FORMAT: &str = "advisor2048-stages";
/// The stage-list version this build reads and writes.
pub const VERSION: u32 = 1;
/// Stage lists longer than this are refused before parsing.
const MAX_LIST_BYTES: usize = 1 << 16;

/// A stage list: which file holds each stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageList {
    pub format: String,
    pub version: u32,
    pub stages: Vec<StagePart>,
}

/// One stage of a stage list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StagePart {
    /// The smallest largest tile of the boards this stage values (0 for the first stage).
    pub from_tile: u32,
    /// The part's weight file, relative to the stage list's folder.
    pub file: String,
    /// The part's short checksum (the first 16 hex digits of its SHA-256).
    pub checksum: String,
    /// Files holding the stage's further tuples, in order after `file`'s (none: the stage is `file`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_tuples: Vec<PartFile>,
}

/// One more file of a stage kept in several ([`StagePart::more_tuples`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartFile {
    /// The weight file, relative to the stage list's folder.
    pub file: String,
    /// Its short checksum.
    pub checksum: String,
}

/// Why a network cannot be loaded from a stage list or its parts.
#[derive(Debug, thiserror::Error)]
pub enum StagedError {
    #[error("cannot read {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{} is not a stage list: {reason}", path.display())]
    List { path: PathBuf, reason: String },
    #[error("stage {stage}'s weight file {}: {source}", path.display())]
    Part {
        stage: usize,
        path: PathBuf,
        source: NetFileError,
    },
    #[error("stage {stage}'s weight file {} has checksum {found}, the stage list names {expected}", path.display())]
    PartChecksum {
        stage: usize,
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("stage {stage}'s weight file {} {reason}", path.display())]
    PartShape {
        stage: usize,
        path: PathBuf,
        reason: String,
    },
    #[error("{0}")]
    Shape(#[from] ShapeError),
    #[error(transparent)]
    File(#[from] NetFileError),
}

impl StageList {
    /// Reads a stage list's text (checked: format, version, stage starts).
    pub fn parse(bytes: &[u8]) -> Result<StageList, String> {
        if bytes.len() > MAX_LIST_BYTES {
            return Err(format!("{} bytes is longer than a stage list can be", bytes.len()));
        }
        let list: StageList = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if list.format != FORMAT {
            return Err(format!("format is {:?}, expected {FORMAT:?}", list.format));
        }
        if list.version != VERSION {
            return Err(format!(
                "unsupported version {} (this build reads {VERSION})",
                list.version
            ));
        }
        list.start_exponents()?;
        Ok(list)
    }

    /// The stages' starts as exponents (0 for the first): powers of two, increasing, the first 0.
    pub fn start_exponents(&self) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(self.stages.len());
        for (k, part) in self.stages.iter().enumerate() {
            let e = match part.from_tile {
                0 => 0,
                t if t.is_power_of_two() && (2..=32768).contains(&t) => t.trailing_zeros() as u8,
                t => return Err(format!("stage {k}: from_tile {t} is not 0 or a tile from 2 to 32768")),
            };
            out.push(e);
        }
        Shape::check_stages(&out).map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// Every file of the list in the network's order (stage by stage, each stage's `file` then its `more_tuples`):
    /// its stage, file name and checksum.
    pub fn files(&self) -> Vec<(usize, &str, &str)> {
        let mut out = Vec::new();
        for (k, part) in self.stages.iter().enumerate() {
            out.push((k, part.file.as_str(), part.checksum.as_str()));
            for more in &part.more_tuples {
                out.push((k, more.file.as_str(), more.checksum.as_str()));
            }
        }
        out
    }

    /// The list as written to a file (pretty JSON and a final newline).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }
}

/// Whether `bytes` look like a stage list (JSON: an object) rather than a weight file (whose problems, a wrong
/// magic among them, [`file::decode`] names).
pub fn is_stage_list(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Loads a network from a weight file or a stage list, whichever `path` is.
pub fn load_any(path: &Path) -> Result<Network, StagedError> {
    Ok(load_with_state(path)?.0)
}

/// A weight file or a stage list, whichever `path` is, with what `train --resume` and the `net` commands need: the
/// network, its file information (a stage list's: its checksum, its parts' sizes and training summaries) and the
/// trainer state (a checkpoint's; empty for a shipped file or a stage list).
pub fn load_with_state(path: &Path) -> Result<(Network, NetInfo, Vec<u8>), StagedError> {
    let bytes = std::fs::read(path).map_err(|source| StagedError::Io {
        path: path.to_owned(),
        source,
    })?;
    if !is_stage_list(&bytes) {
        return Ok(file::decode(&bytes)?);
    }
    let list = StageList::parse(&bytes).map_err(|reason| StagedError::List {
        path: path.to_owned(),
        reason,
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut parts = Vec::with_capacity(list.stages.len());
    for (stage, file, _) in list.files() {
        let part_path = dir.join(file);
        let part_bytes = std::fs::read(&part_path).map_err(|source| StagedError::Part {
            stage,
            path: part_path.clone(),
            source: NetFileError::Io(source),
        })?;
        parts.push((part_path, PartBytes::Read(part_bytes)));
    }
    let net = assemble(&list, &bytes, parts)?;
    let info = net.info.clone().ok_or_else(|| StagedError::List {
        path: path.to_owned(),
        reason: "its network carries no file information".into(),
    })?;
    Ok((net, info, Vec::new()))
}

/// A part's bytes as [`assemble`] takes them. Each is let go as soon as it is decoded, so loading holds the
/// network, one decoded part and the parts' compressed bytes not yet decoded, not every part twice over.
pub enum PartBytes {
    /// Read from a file: freed once decoded.
    Read(Vec<u8>),
    /// Embedded in this binary: its pages handed back to the kernel once decoded ([`release_embedded`]).
    Embedded(&'static [u8]),
}

impl PartBytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            PartBytes::Read(b) => b,
            PartBytes::Embedded(b) => b,
        }
    }

    fn let_go(self) {
        if let PartBytes::Embedded(b) = self {
            release_embedded(b);
        }
    }
}

/// Hands back to the kernel the memory pages wholly inside `bytes`, data embedded in this binary and never written,
/// so that they leave the process's resident memory; their contents are kept (read from the executable again if
/// ever touched). A shipped network's compressed parts are read once at start; without this their 140 MB stayed
/// resident for the process's whole life. Linux only; elsewhere nothing happens.
///
/// Where the pages are a private, read-only mapping of a file (as an executable's data is), `MADV_DONTNEED` drops
/// them from this process: a page of such a mapping that was never written is read from the file again on the next
/// access. `MADV_PAGEOUT`, which reclaims a page wherever it lies, does nothing to a file's pages unless the process
/// may write the file, which is not so for a non-root user running a binary owned by root (the container image):
/// there the parts stayed resident, 144 MB. Any other mapping gets `MADV_PAGEOUT`, which never changes contents.
pub fn release_embedded(bytes: &'static [u8]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = (bytes.as_ptr() as usize).next_multiple_of(PAGE);
        let end = (bytes.as_ptr() as usize + bytes.len()) / PAGE * PAGE;
        if end <= start {
            return;
        }
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        let mut covered = start;
        for m in maps.lines().filter_map(Mapping::parse) {
            let (from, to) = (m.start.max(start), m.end.min(end));
            if from >= to {
                continue;
            }
            let advice = if m.private_read_only_file {
                libc::MADV_DONTNEED
            } else {
                libc::MADV_PAGEOUT
            };
            advise(from, to, advice);
            covered = covered.max(to);
        }
        if covered < end {
            // Not found in the maps (they could not be read): the advice that is safe anywhere.
            advise(covered, end, libc::MADV_PAGEOUT);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
}

/// `madvise(advice)` on the pages from `from` to `to`, which lie inside a `'static` slice no one writes.
#[cfg(target_os = "linux")]
fn advise(from: usize, to: usize, advice: libc::c_int) {
    // SAFETY: the range lies inside a `'static` slice that no one writes (see `release_embedded`), and the call
    // neither reads nor writes it. The advice keeps every page's contents: MADV_PAGEOUT reclaims a page without
    // changing it (a clean file page is read again, an anonymous one swapped out, never cleared); MADV_DONTNEED is
    // given only on a private read-only file mapping, whose pages inside the slice were never written (the slice
    // holds plain bytes: no relocation lands inside it), so each is read from the file again, unchanged.
    unsafe {
        libc::madvise(from as *mut libc::c_void, to - from, advice);
    }
}

/// One line of `/proc/self/maps`: an address range and whether it maps a file privately without write access.
#[cfg(target_os = "linux")]
struct Mapping {
    start: usize,
    end: usize,
    private_read_only_file: bool,
}

#[cfg(target_os = "linux")]
impl Mapping {
    /// Parses `start-end perms offset dev inode [path]`; `None` for a line of another form.
    fn parse(line: &str) -> Option<Mapping> {
        let mut fields = line.split_ascii_whitespace();
        let (start, end) = fields.next()?.split_once('-')?;
        let perms = fields.next()?.as_bytes();
        let inode = fields.nth(2)?;
        Some(Mapping {
            start: usize::from_str_radix(start, 16).ok()?,
            end: usize::from_str_radix(end, 16).ok()?,
            private_read_only_file: perms.len() == 4 && perms[1] == b'-' && perms[3] == b'p' && inode != "0",
        })
    }
}

/// The weights of the stages decoded so far, in the network's one representation.
enum Combined {
    F16 { bits: Vec<u16>, scale: f32 },
    F32(Vec<f32>),
}

/// Builds the network of a stage list from its files (`parts`: each file of [`StageList::files`], in that order, with
/// its path, for errors, and bytes), decoding them one at a time and letting each go as soon as its weights are in
/// the network; `list_bytes` are the list's own bytes (the network's checksum is theirs).
pub fn assemble(list: &StageList, list_bytes: &[u8], parts: Vec<(PathBuf, PartBytes)>) -> Result<Network, StagedError> {
    let starts = list.start_exponents().map_err(|reason| StagedError::List {
        path: PathBuf::from("stage list"),
        reason,
    })?;
    let files = list.files();
    if parts.len() != files.len() {
        return Err(StagedError::List {
            path: PathBuf::from("stage list"),
            reason: format!("{} files named, {} given", files.len(), parts.len()),
        });
    }
    // Planned from the parts' headers before any is decoded: the network is f16 when every part is, at the largest
    // of their scales, and holds all their weights. (A header that cannot be read fails its part's decoding below,
    // which names the problem.)
    let headers: Vec<Option<NetHeader>> = parts.iter().map(|(_, b)| file::peek_header(b.as_slice())).collect();
    let all_f16 = headers.iter().all(|h| h.as_ref().is_some_and(file::keeps_f16));
    let scale = headers.iter().flatten().map(|h| h.scale).fold(0.0f32, f32::max);
    let size: usize = headers
        .iter()
        .flatten()
        .filter_map(|h| Shape::new(h.tuples.clone(), vec![0]).ok())
        .map(|s| s.weight_count())
        .sum();
    let mut combined = if all_f16 {
        Combined::F16 {
            bits: super::huge_page_vec(size),
            scale,
        }
    } else {
        Combined::F32(super::huge_page_vec(size))
    };
    // Each stage's tuples (its files' in order), and the information of every file.
    let mut stage_tuples: Vec<Vec<Vec<u8>>> = vec![Vec::new(); starts.len()];
    let mut decoded: Vec<NetInfo> = Vec::with_capacity(files.len());
    let mut paths: Vec<PathBuf> = Vec::with_capacity(starts.len());
    for ((path, bytes), &(stage, _, checksum)) in parts.into_iter().zip(&files) {
        let part_error = |source| StagedError::Part {
            stage,
            path: path.clone(),
            source,
        };
        // f16 parts are inflated straight into the network's weights (no second copy of a part in memory).
        let result = match &mut combined {
            Combined::F16 { bits, scale } => file::decode_f16_into(bytes.as_slice(), bits, *scale),
            Combined::F32(weights) => file::decode(bytes.as_slice()).map(|(net, info, state)| {
                weights.extend_from_slice(&net.weights());
                (net.shape().clone(), info, state)
            }),
        };
        bytes.let_go();
        let (shape, info, state) = result.map_err(part_error)?;
        if info.checksum() != checksum {
            return Err(StagedError::PartChecksum {
                stage,
                path,
                expected: checksum.to_owned(),
                found: info.checksum().to_owned(),
            });
        }
        let shape_problem = |reason: String| StagedError::PartShape {
            stage,
            path: path.clone(),
            reason,
        };
        if shape.stages.len() != 1 {
            return Err(shape_problem(format!(
                "has {} stages; a part holds one",
                shape.stages.len()
            )));
        }
        if !state.is_empty() {
            return Err(shape_problem(
                "is a checkpoint; a part is a network (net export)".into(),
            ));
        }
        if paths.len() == stage {
            paths.push(path.clone());
        }
        stage_tuples[stage].extend(shape.tuples.iter().cloned());
        decoded.push(info);
    }
    if decoded.is_empty() {
        return Err(StagedError::List {
            path: PathBuf::from("stage list"),
            reason: "names no stage".into(),
        });
    }
    // The widest stage's tuples are the network's; every stage reads the first of them.
    let tuples = stage_tuples.iter().max_by_key(|t| t.len()).cloned().unwrap_or_default();
    for (stage, t) in stage_tuples.iter().enumerate() {
        if tuples[..t.len()] != t[..] {
            return Err(StagedError::PartShape {
                stage,
                path: paths.get(stage).cloned().unwrap_or_default(),
                reason: format!(
                    "has tuples {t:?}, which are not the first tuples of the widest stage's {tuples:?} (each \
                     stage reads the first tuples of one set, e.g. 4x6 and 8x6)"
                ),
            });
        }
    }
    let counts = stage_tuples.iter().map(Vec::len).collect();
    let shape = Shape::with_stage_tuples(tuples.clone(), starts.clone(), counts)?;
    let mut net = match combined {
        Combined::F16 { bits, scale } => Network::from_f16(shape.clone(), bits, scale),
        Combined::F32(weights) => Network::from_weights(shape.clone(), weights),
    }
    .map_err(|e| NetFileError::ShapeMismatch(e.to_string()))?;
    let digest = Sha256::digest(list_bytes);
    let sha256: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    // A stage's counters are its first file's (the files of one stage come from one training run).
    let firsts: Vec<(usize, &NetInfo)> = files
        .iter()
        .zip(&decoded)
        .enumerate()
        .filter(|(i, ((stage, _, _), _))| *i == 0 || files[i - 1].0 != *stage)
        .map(|(_, ((stage, _, _), info))| (*stage, info))
        .collect();
    let last = &firsts[firsts.len() - 1].1.header.training;
    let training = TrainingSummary {
        games: firsts.iter().map(|(_, i)| i.header.training.games).sum(),
        moves: firsts.iter().map(|(_, i)| i.header.training.moves).sum(),
        rolling_mean_score: last.rolling_mean_score,
        seconds: firsts.iter().map(|(_, i)| i.header.training.seconds).sum(),
        command: firsts
            .iter()
            .zip(&list.stages)
            .map(|((k, i), p)| {
                format!(
                    "stage {k} (from tile {}, {}): {}",
                    p.from_tile, p.checksum, i.header.training.command
                )
            })
            .collect::<Vec<_>>()
            .join(" ;; "),
    };
    net.info = Some(NetInfo {
        header: NetHeader {
            tuples,
            stages: starts,
            value_type: if all_f16 { ValueType::F16 } else { ValueType::F32 },
            scale: net.f16_scale().unwrap_or(1.0),
            compression: "deflate".into(),
            payload_bytes: decoded.iter().map(|i| i.header.payload_bytes).sum(),
            trainer_state_bytes: 0,
            training,
        },
        sha256,
        file_bytes: list_bytes.len() as u64 + decoded.iter().map(|i| i.file_bytes).sum::<u64>(),
    });
    Ok(net)
}

/// Writes a stage list naming `parts` (each: the tile its stage starts at, the stage's files: one, or several whose
/// tuples follow one another) at `out`, checking every file (a usable one-stage network) and the network they make
/// (each stage's tuples the first of the widest stage's), and recording each file's checksum; paths are written
/// relative to `out`'s folder (a file must lie in it or below it).
pub fn write_list(out: &Path, parts: &[(u32, Vec<PathBuf>)]) -> Result<(StageList, Network), StagedError> {
    let dir = out.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir_abs = std::fs::canonicalize(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        &dir
    })
    .map_err(|source| StagedError::Io {
        path: dir.clone(),
        source,
    })?;
    let mut stages = Vec::with_capacity(parts.len());
    let mut bytes = Vec::with_capacity(parts.len());
    for (stage, (from_tile, paths)) in parts.iter().enumerate() {
        let mut named = Vec::with_capacity(paths.len());
        for path in paths {
            let abs = std::fs::canonicalize(path).map_err(|source| StagedError::Part {
                stage,
                path: path.clone(),
                source: NetFileError::Io(source),
            })?;
            let rel = abs.strip_prefix(&dir_abs).map_err(|_| StagedError::PartShape {
                stage,
                path: path.clone(),
                reason: format!("is not inside the stage list's folder {}", dir_abs.display()),
            })?;
            let b = std::fs::read(&abs).map_err(|source| StagedError::Part {
                stage,
                path: path.clone(),
                source: NetFileError::Io(source),
            })?;
            let (info, _) = file::inspect(&b).map_err(|source| StagedError::Part {
                stage,
                path: path.clone(),
                source,
            })?;
            named.push(PartFile {
                file: rel.to_string_lossy().replace('\\', "/"),
                checksum: info.checksum().to_owned(),
            });
            bytes.push((path.clone(), PartBytes::Read(b)));
        }
        if named.is_empty() {
            return Err(StagedError::List {
                path: out.to_owned(),
                reason: format!("stage {stage} (from tile {from_tile}) names no file"),
            });
        }
        let first = named.remove(0);
        stages.push(StagePart {
            from_tile: *from_tile,
            file: first.file,
            checksum: first.checksum,
            more_tuples: named,
        });
    }
    let list = StageList {
        format: FORMAT.into(),
        version: VERSION,
        stages,
    };
    list.start_exponents().map_err(|reason| StagedError::List {
        path: out.to_owned(),
        reason,
    })?;
    let list_bytes = list.to_bytes();
    let net = assemble(&list, &list_bytes, bytes)?;
    std::fs::write(out, &list_bytes).map_err(|source| StagedError::Io {
        path: out.to_owned(),
        source,
    })?;
    Ok((list, net))
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = 3 * 4096 + 100;
    /// Embedded data that is not zero anywhere, spanning whole pages.
    static DATA: [u8; N] = {
        let mut a = [0u8; N];
        let mut i = 0;
        while i < N {
            a[i] = (i % 251) as u8 + 1;
            i += 1;
        }
        a
    };

    #[test]
    fn released_embedded_pages_keep_their_contents() {
        let before = DATA.to_vec();
        release_embedded(&DATA);
        assert_eq!(&DATA[..], &before[..]);
        release_embedded(&DATA[5..4000]);
        assert!(DATA.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8 + 1));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn released_embedded_pages_leave_the_resident_memory() {
        // `DATA` lies in the test binary's read-only data, a private mapping of the file: after the release its
        // whole pages are no longer resident here (mincore would see the page cache; the page table is what counts).
        let resident = || {
            let start = (DATA.as_ptr() as usize).next_multiple_of(4096);
            let maps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
            let mut inside = false;
            for line in maps.lines() {
                if let Some(m) = Mapping::parse(line) {
                    inside = m.start <= start && start < m.end;
                    if inside {
                        assert!(
                            m.private_read_only_file,
                            "DATA is not in a private read-only file mapping: {line}"
                        );
                    }
                } else if inside {
                    if let Some(kb) = line.strip_prefix("Rss:") {
                        return kb.trim().trim_end_matches(" kB").parse::<u64>().expect("Rss in kB");
                    }
                }
            }
            panic!("no mapping holds DATA");
        };
        let sum: u64 = DATA.iter().map(|&b| u64::from(b)).sum();
        let before = resident();
        release_embedded(&DATA);
        let after = resident();
        assert!(
            after + 8 <= before,
            "resident kB of DATA's mapping: {before} before the release, {after} after"
        );
        assert_eq!(DATA.iter().map(|&b| u64::from(b)).sum::<u64>(), sum);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_maps_line_says_whether_it_is_a_private_read_only_file() {
        let file = Mapping::parse("5581a000-5581c000 r--p 00002000 fd:01 1234 /usr/bin/x").expect("parses");
        assert_eq!(
            (file.start, file.end, file.private_read_only_file),
            (0x5581a000, 0x5581c000, true)
        );
        for other in [
            "5581a000-5581c000 rw-p 00002000 fd:01 1234 /usr/bin/x",
            "5581a000-5581c000 r--s 00002000 fd:01 1234 /dev/shm/y",
            "7f00a000-7f00c000 r--p 00000000 00:00 0",
        ] {
            assert!(
                !Mapping::parse(other).expect("parses").private_read_only_file,
                "{other}"
            );
        }
        assert!(Mapping::parse("not a maps line").is_none());
    }
}
