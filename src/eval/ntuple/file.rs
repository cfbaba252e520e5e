//! The weight file of an n-tuple network (`.a2n`): versioned, checksummed, compressed.
//!
//! # Format, version 1 (all integers little-endian)
//! ```text
//! offset 0   8 bytes   magic "A2048NET"
//! offset 8   u32       format version (1)
//! offset 12  u32       header length H
//! offset 16  H bytes   header: UTF-8 JSON (see NetHeader): tuples, stages, value type ("f16" or "f32"),
//!                      scale (a power of two every stored value is multiplied by: f16 stops at 65504),
//!                      compression ("deflate"), payload length before compression, training summary,
//!                      and (checkpoints only) the trainer's state length
//! then       ...       payload, deflate-compressed (RFC 1951): every weight, stage by stage, tuple by tuple,
//!                      index by index (the first cell of a tuple is the most significant digit), as f16 or f32;
//!                      then, in checkpoints, the trainer's state (opaque to this module)
//! last 32 bytes        SHA-256 of everything before it
//! ```
//! A file is checked in this order, and each failure has its own [`NetFileError`]: length, magic, version, checksum,
//! header, shape, payload size. The checksum printed by `advisor2048 net info` (and reported by `/healthz`) is the
//! first 16 hex digits of the trailing SHA-256.
//!
//! Training keeps f32; a shipped network is stored as f16 (IEEE half precision, 11 significant bits): each weight
//! changes by at most 2^-11 of its magnitude (plus 2^-24 near zero), see [`F16_RELATIVE_ERROR`].

use std::io::{Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{f16_to_f32, Network, Shape, ShapeError};

/// The first 8 bytes of every weight file.
pub const MAGIC: &[u8; 8] = b"A2048NET";
/// The format version this build reads and writes.
pub const VERSION: u32 = 1;
/// The largest relative change of a weight stored as f16 (round to nearest: half a unit in the 11th bit).
pub const F16_RELATIVE_ERROR: f64 = 1.0 / 2048.0;
/// Headers longer than this are refused before parsing (a corrupt length must not allocate gigabytes).
const MAX_HEADER: usize = 1 << 20;

/// How weights are stored in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    F16,
    F32,
}

impl ValueType {
    fn bytes(self) -> usize {
        match self {
            ValueType::F16 => 2,
            ValueType::F32 => 4,
        }
    }
}

/// How a network was trained (all optional: a hand-made network has none of it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainingSummary {
    /// Games played from the start (restarted games not counted).
    pub games: u64,
    /// Moves trained on (all games).
    pub moves: u64,
    /// Mean score of the last games from the start (the rolling window of the progress display).
    pub rolling_mean_score: f64,
    /// Wall-clock seconds spent training (all runs of a resumed training).
    pub seconds: f64,
    /// The command line(s) that trained it.
    pub command: String,
}

/// The JSON header of a weight file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetHeader {
    pub tuples: Vec<Vec<u8>>,
    pub stages: Vec<u8>,
    pub value_type: ValueType,
    /// Every stored value is multiplied by this on loading (a power of two, so exact): f16 reaches only 65504, and
    /// a trained network's weights can be larger. 1 when absent.
    #[serde(default = "one")]
    pub scale: f32,
    pub compression: String,
    /// Bytes of the payload before compression (weights, then the trainer state if any).
    pub payload_bytes: u64,
    /// Bytes of trainer state after the weights (0 in a shipped network).
    #[serde(default)]
    pub trainer_state_bytes: u64,
    #[serde(default)]
    pub training: TrainingSummary,
}

/// What a loaded file said about itself.
#[derive(Clone, Debug, PartialEq)]
pub struct NetInfo {
    pub header: NetHeader,
    /// The trailing SHA-256, hex.
    pub sha256: String,
    /// The file's size in bytes.
    pub file_bytes: u64,
}

impl NetInfo {
    /// The short checksum: the first 16 hex digits of the SHA-256.
    pub fn checksum(&self) -> &str {
        &self.sha256[..16]
    }
}

/// Why a weight file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum NetFileError {
    #[error("cannot read the weight file: {0}")]
    Io(#[from] std::io::Error),
    #[error("the file is truncated: {0} bytes is too short for a weight file")]
    Truncated(usize),
    #[error("not a weight file: wrong magic bytes {0:?} (expected \"A2048NET\")")]
    Magic(String),
    #[error("unsupported weight file version {found} (this build reads version {VERSION})")]
    Version { found: u32 },
    #[error("checksum mismatch: the file says {stored}, its contents hash to {computed} (corrupt or truncated)")]
    Checksum { stored: String, computed: String },
    #[error("the header is invalid: {0}")]
    Header(String),
    #[error("the network's shape is invalid: {0}")]
    Shape(#[from] ShapeError),
    #[error("the payload does not match the shape: {0}")]
    ShapeMismatch(String),
    #[error("unsupported compression {0:?} (this build reads deflate)")]
    Compression(String),
    #[error(
        "a network whose stages read different tuples ({0}) is not one weight file: write each stage as its own \
         file (net export --stage K) and name them in a stage list (net stack)"
    )]
    MixedStages(String),
}

fn one() -> f32 {
    1.0
}

/// The power-of-two scale that brings the largest weight within f16's range (with room for rounding up).
fn f16_scale(max: f32) -> f32 {
    let mut scale = 1.0f32;
    while max / scale > 60_000.0 {
        scale *= 2.0;
    }
    scale
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Encodes a network (and optionally trainer state) as a weight file.
pub fn encode(
    net: &Network,
    value_type: ValueType,
    training: &TrainingSummary,
    trainer_state: &[u8],
) -> Result<Vec<u8>, NetFileError> {
    let weights = net.weights();
    let mut out = Vec::new();
    write(
        &mut out,
        Contents {
            shape: net.shape(),
            value_type,
            training,
            weight: &|i| weights[i],
            state_len: trainer_state.len() as u64,
            write_state: &mut |w| w.write_all(trainer_state),
        },
    )?;
    Ok(out)
}

/// Writes a weight file atomically (a temporary file renamed into place, so a crash never leaves half a file).
pub fn save(
    path: &Path,
    net: &Network,
    value_type: ValueType,
    training: &TrainingSummary,
    trainer_state: &[u8],
) -> Result<NetInfo, NetFileError> {
    let bytes = encode(net, value_type, training, trainer_state)?;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, &bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(inspect(&bytes)?.0)
}

/// What a weight file is written from, streamed: the weights one at a time and the trainer state as a stream.
pub struct Contents<'a> {
    pub shape: &'a Shape,
    pub value_type: ValueType,
    pub training: &'a TrainingSummary,
    /// Weight `i` (read twice: once for the f16 scale and the finiteness check, once to write it).
    pub weight: &'a dyn Fn(usize) -> f32,
    /// Bytes of trainer state `write_state` writes (exactly: another count is refused).
    pub state_len: u64,
    pub write_state: &'a mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
}

/// Writes a weight file atomically from its [`Contents`], streamed: nothing of the size of the network is held in
/// memory (a trainer saves its tables this way).
pub fn save_with(path: &Path, contents: Contents<'_>) -> Result<NetInfo, NetFileError> {
    let tmp = path.with_extension("tmp");
    let file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
    let written = write(file, contents);
    match written {
        Ok(info) => {
            std::fs::rename(&tmp, path)?;
            Ok(info)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A writer that hashes and counts what passes through it.
struct Hashing<W: Write> {
    inner: W,
    hasher: Sha256,
    bytes: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A writer that counts the bytes written through it.
struct Counting<'a> {
    inner: &'a mut dyn Write,
    bytes: u64,
}

impl Write for Counting<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Writes a whole weight file to `out` (see [`save_with`]) and says what it wrote.
fn write(out: impl Write, contents: Contents<'_>) -> Result<NetInfo, NetFileError> {
    let Contents {
        shape,
        value_type,
        training,
        weight,
        state_len,
        write_state,
    } = contents;
    if !shape.is_uniform() {
        return Err(NetFileError::MixedStages(shape.describe()));
    }
    let n = shape.weight_count();
    let mut max = 0.0f32;
    for i in 0..n {
        let w = weight(i);
        if !w.is_finite() {
            return Err(NetFileError::ShapeMismatch(format!(
                "weight {i} is not a finite number"
            )));
        }
        max = max.max(w.abs());
    }
    let scale = match value_type {
        ValueType::F16 => f16_scale(max),
        ValueType::F32 => 1.0,
    };
    let header = NetHeader {
        tuples: shape.tuples.clone(),
        stages: shape.stages.clone(),
        value_type,
        scale,
        compression: "deflate".into(),
        payload_bytes: (n * value_type.bytes()) as u64 + state_len,
        trainer_state_bytes: state_len,
        training: training.clone(),
    };
    let json = serde_json::to_vec(&header).map_err(|e| NetFileError::Header(e.to_string()))?;
    let mut out = Hashing {
        inner: out,
        hasher: Sha256::new(),
        bytes: 0,
    };
    out.write_all(MAGIC)?;
    out.write_all(&VERSION.to_le_bytes())?;
    out.write_all(&(json.len() as u32).to_le_bytes())?;
    out.write_all(&json)?;
    // A checkpoint (f32, rewritten every few minutes) is compressed fast; a shipped file as small as is quick.
    let level = match value_type {
        ValueType::F16 => 6,
        ValueType::F32 => 1,
    };
    let mut enc = flate2::write::DeflateEncoder::new(&mut out, flate2::Compression::new(level));
    let mut buf = Vec::with_capacity(1 << 18);
    for start in (0..n).step_by(1 << 16) {
        buf.clear();
        for i in start..(start + (1 << 16)).min(n) {
            let w = weight(i);
            match value_type {
                ValueType::F32 => buf.extend_from_slice(&w.to_le_bytes()),
                ValueType::F16 => buf.extend_from_slice(&half::f16::from_f32(w / scale).to_le_bytes()),
            }
        }
        enc.write_all(&buf)?;
    }
    let mut counting = Counting {
        inner: &mut enc,
        bytes: 0,
    };
    write_state(&mut counting)?;
    if counting.bytes != state_len {
        return Err(NetFileError::ShapeMismatch(format!(
            "the trainer state wrote {} bytes, {state_len} were declared",
            counting.bytes
        )));
    }
    enc.finish()?;
    let digest = std::mem::take(&mut out.hasher).finalize();
    let file_bytes = out.bytes + 32;
    out.inner.write_all(&digest)?;
    out.inner.flush()?;
    Ok(NetInfo {
        header,
        sha256: hex(&digest),
        file_bytes,
    })
}

/// Reads the header of a weight file and checks it (length, magic, version, checksum), without the weights.
pub fn inspect(bytes: &[u8]) -> Result<(NetInfo, usize), NetFileError> {
    if bytes.len() < 16 + 32 {
        return Err(NetFileError::Truncated(bytes.len()));
    }
    if &bytes[..8] != MAGIC {
        return Err(NetFileError::Magic(String::from_utf8_lossy(&bytes[..8]).into_owned()));
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != VERSION {
        return Err(NetFileError::Version { found: version });
    }
    let (body, stored) = bytes.split_at(bytes.len() - 32);
    let computed = Sha256::digest(body);
    if computed.as_slice() != stored {
        return Err(NetFileError::Checksum {
            stored: hex(stored)[..16].to_owned(),
            computed: hex(&computed)[..16].to_owned(),
        });
    }
    let header_len = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
    if header_len > MAX_HEADER || 16 + header_len > body.len() {
        return Err(NetFileError::Header(format!(
            "header length {header_len} does not fit in a {}-byte file",
            bytes.len()
        )));
    }
    let header: NetHeader =
        serde_json::from_slice(&body[16..16 + header_len]).map_err(|e| NetFileError::Header(e.to_string()))?;
    let info = NetInfo {
        header,
        sha256: hex(stored),
        file_bytes: bytes.len() as u64,
    };
    Ok((info, 16 + header_len))
}

/// The header of a weight file, read without checking the file (no checksum, no weights): `None` when it cannot
/// be read. For planning before [`decode`], which checks everything and names what is wrong.
pub fn peek_header(bytes: &[u8]) -> Option<NetHeader> {
    if bytes.len() < 16 + 32 || &bytes[..8] != MAGIC {
        return None;
    }
    let header_len = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
    if header_len > MAX_HEADER || 16 + header_len > bytes.len() - 32 {
        return None;
    }
    serde_json::from_slice(&bytes[16..16 + header_len]).ok()
}

/// Whether [`decode`] keeps a file's weights as f16 in memory: f16 weights with a power-of-two scale (as `encode`
/// writes them); other weights are widened to f32 with the scale applied to each.
pub fn keeps_f16(header: &NetHeader) -> bool {
    header.value_type == ValueType::F16 && header.scale.to_bits() & 0x007f_ffff == 0
}

/// A weight file whose header has been checked, its payload open for reading.
struct Payload<'a> {
    info: NetInfo,
    shape: Shape,
    reader: flate2::read::DeflateDecoder<&'a [u8]>,
    /// Payload bytes the shape and the trainer state need.
    expected: u64,
}

/// The payload's chunk size in weights: inflated a chunk at a time straight into the weights (no second copy of the
/// payload in memory).
const CHUNK: usize = 1 << 20;

impl<'a> Payload<'a> {
    /// Checks a weight file's header against its shape and opens its payload.
    fn open(bytes: &'a [u8]) -> Result<Payload<'a>, NetFileError> {
        let (info, start) = inspect(bytes)?;
        let h = &info.header;
        if h.compression != "deflate" {
            return Err(NetFileError::Compression(h.compression.clone()));
        }
        let shape = Shape::new(h.tuples.clone(), h.stages.clone())?;
        let expected = (shape.weight_count() * h.value_type.bytes()) as u64 + h.trainer_state_bytes;
        if h.payload_bytes != expected {
            return Err(NetFileError::ShapeMismatch(format!(
                "the header declares {} payload bytes, the shape ({}) needs {expected}",
                h.payload_bytes,
                shape.describe()
            )));
        }
        let scale = h.scale;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(NetFileError::Header(format!("scale {scale} is not a positive number")));
        }
        let reader = flate2::read::DeflateDecoder::new(&bytes[start..bytes.len() - 32]);
        Ok(Payload {
            info,
            shape,
            reader,
            expected,
        })
    }

    /// Reads the next chunk of the weights into `chunk`, `done` weights already read.
    fn read_chunk(&mut self, chunk: &mut Vec<u8>, done: usize) -> Result<(), NetFileError> {
        let width = self.info.header.value_type.bytes();
        chunk.resize((self.shape.weight_count() - done).min(CHUNK) * width, 0);
        let (expected, shape) = (self.expected, self.shape.describe());
        self.reader.read_exact(chunk).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => NetFileError::ShapeMismatch(format!(
                "the payload holds {} bytes, the shape ({shape}) needs {expected}",
                done * width
            )),
            _ => damaged(e),
        })
    }

    /// Appends the f16 weights' bits to `bits` (the file keeps f16: [`keeps_f16`]), each checked finite.
    fn read_f16(&mut self, bits: &mut Vec<u16>) -> Result<(), NetFileError> {
        let (start, count) = (bits.len(), self.shape.weight_count());
        let mut chunk = Vec::with_capacity(CHUNK * 2);
        while bits.len() - start < count {
            self.read_chunk(&mut chunk, bits.len() - start)?;
            bits.extend(chunk.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])));
        }
        // Exponent bits all set: an infinity or a NaN.
        match bits[start..].iter().position(|&b| b & 0x7c00 == 0x7c00) {
            Some(bad) => Err(not_finite(bad)),
            None => Ok(()),
        }
    }

    /// The weights as f32, the scale applied to each, each checked finite.
    fn read_f32(&mut self) -> Result<Vec<f32>, NetFileError> {
        let count = self.shape.weight_count();
        let (value_type, scale) = (self.info.header.value_type, self.info.header.scale);
        let mut weights: Vec<f32> = super::huge_page_vec(count);
        let mut chunk = Vec::with_capacity(CHUNK * 4);
        while weights.len() < count {
            self.read_chunk(&mut chunk, weights.len())?;
            match value_type {
                ValueType::F32 => weights.extend(
                    chunk
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) * scale),
                ),
                ValueType::F16 => weights.extend(
                    chunk
                        .chunks_exact(2)
                        .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])) * scale),
                ),
            }
        }
        match weights.iter().position(|w| !w.is_finite()) {
            Some(bad) => Err(not_finite(bad)),
            None => Ok(weights),
        }
    }

    /// The trainer state after the weights (checked to be exactly as long as the header says).
    fn read_state(mut self) -> Result<(NetInfo, Vec<u8>), NetFileError> {
        let h = &self.info.header;
        let mut state = Vec::with_capacity(h.trainer_state_bytes as usize);
        // Read one byte more than expected, so a longer payload is caught without inflating it all.
        (&mut self.reader)
            .take(h.trainer_state_bytes + 1)
            .read_to_end(&mut state)
            .map_err(damaged)?;
        if state.len() as u64 != h.trainer_state_bytes {
            return Err(NetFileError::ShapeMismatch(format!(
                "the payload holds {}{} bytes, the shape ({}) needs {}",
                if state.len() as u64 > h.trainer_state_bytes {
                    "more than "
                } else {
                    ""
                },
                self.expected - h.trainer_state_bytes + (state.len() as u64).min(h.trainer_state_bytes),
                self.shape.describe(),
                self.expected
            )));
        }
        Ok((self.info, state))
    }
}

fn damaged(e: std::io::Error) -> NetFileError {
    NetFileError::ShapeMismatch(format!("the compressed payload is damaged: {e}"))
}

fn not_finite(bad: usize) -> NetFileError {
    NetFileError::ShapeMismatch(format!("weight {bad} is not a finite number"))
}

/// Decodes a weight file: the network, what the file says about itself, and the trainer state (empty unless a
/// checkpoint).
pub fn decode(bytes: &[u8]) -> Result<(Network, NetInfo, Vec<u8>), NetFileError> {
    let mut payload = Payload::open(bytes)?;
    let shape = payload.shape.clone();
    let (keep_f16, scale) = (keeps_f16(&payload.info.header), payload.info.header.scale);
    // f16 weights stay f16 in memory (half the memory, the same values) when the scale is a power of two, as
    // `encode` writes it; else they are widened to f32 with the scale applied to each.
    let net = if keep_f16 {
        let mut bits: Vec<u16> = super::huge_page_vec(shape.weight_count());
        payload.read_f16(&mut bits)?;
        Network::from_f16(shape, bits, scale)
    } else {
        Network::from_weights(shape, payload.read_f32()?)
    };
    let mut net = net.map_err(|e| NetFileError::ShapeMismatch(e.to_string()))?;
    let (info, state) = payload.read_state()?;
    net.info = Some(info.clone());
    Ok((net, info, state))
}

/// Decodes a weight file that keeps f16 weights ([`keeps_f16`]) by appending its weights' bits to `bits`, stored at
/// `scale` (a power of two at least the file's: weights of a file with a smaller scale are divided by the ratio,
/// exactly above f16's normal range): a network of several files built without a second copy of each file's
/// weights. Gives the file's shape, what it says about itself and its trainer state.
pub fn decode_f16_into(
    bytes: &[u8],
    bits: &mut Vec<u16>,
    scale: f32,
) -> Result<(Shape, NetInfo, Vec<u8>), NetFileError> {
    let mut payload = Payload::open(bytes)?;
    if !keeps_f16(&payload.info.header) {
        return Err(NetFileError::Header(
            "its weights are not f16 at a power-of-two scale".into(),
        ));
    }
    let own = payload.info.header.scale;
    let start = bits.len();
    payload.read_f16(bits)?;
    if own != scale {
        let ratio = own / scale;
        for h in &mut bits[start..] {
            *h = half::f16::from_f32(f16_to_f32(*h) * ratio).to_bits();
        }
    }
    let shape = payload.shape.clone();
    let (info, state) = payload.read_state()?;
    Ok((shape, info, state))
}

/// Loads a weight file from disk.
pub fn load(path: &Path) -> Result<(Network, NetInfo, Vec<u8>), NetFileError> {
    let bytes = std::fs::read(path)?;
    decode(&bytes)
}
