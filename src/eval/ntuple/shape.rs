//! The shape of a network: its tuples (which cells each reads) and where its stages start; the named tuple sets.

/// Cells per tuple at most (16^8 weights per table would already be 16 GiB of f32).
pub const MAX_TUPLE_CELLS: usize = 8;
/// Tuples per network at most.
pub const MAX_TUPLES: usize = 32;
/// Weight sets per network at most.
pub const MAX_STAGES: usize = 4;

/// The 4x6 tuple set: two straight 6-cell "rectangles" and two 2x3 blocks (16.7 M weights per table set).
pub const TUPLES_4X6: &[&[u8]] = &[
    &[0, 1, 2, 3, 4, 5],
    &[4, 5, 6, 7, 8, 9],
    &[0, 1, 2, 4, 5, 6],
    &[4, 5, 6, 8, 9, 10],
];

/// The 8x6 tuple set of Yeh et al. ("Multistage temporal difference learning for 2048-like games", 2016), as used by
/// later work: the four 4x6 tuples plus four more shapes that follow the corner and the snake.
pub const TUPLES_8X6: &[&[u8]] = &[
    &[0, 1, 2, 3, 4, 5],
    &[4, 5, 6, 7, 8, 9],
    &[0, 1, 2, 4, 5, 6],
    &[4, 5, 6, 8, 9, 10],
    &[0, 1, 2, 3, 5, 6],
    &[0, 1, 4, 5, 8, 9],
    &[0, 1, 5, 9, 10, 11],
    &[0, 1, 5, 8, 9, 13],
];

/// The shape of a network: its tuples and where its stages start.
///
/// Every stage reads the first few of the tuples: all of them unless the stages differ (e.g. a 4x6 stage for the
/// opening beside an 8x6 stage for the late game: 4x6 is the first four tuples of 8x6). Each stage's weights follow
/// the stage before's, tuple by tuple.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The cells of each tuple (row-major, 0 = top-left).
    pub tuples: Vec<Vec<u8>>,
    /// The smallest largest-exponent of each stage, increasing; the first is always 0.
    pub stages: Vec<u8>,
    /// How many of the tuples (the first ones) each stage reads.
    stage_tuples: Vec<usize>,
}

/// A shape that cannot be a network.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("a network needs 1 to {MAX_TUPLES} tuples, found {0}")]
    TupleCount(usize),
    #[error("tuple {tuple} has {cells} cells; a tuple has 1 to {MAX_TUPLE_CELLS}")]
    TupleSize { tuple: usize, cells: usize },
    #[error("tuple {tuple} names cell {cell}; cells are 0 to 15")]
    Cell { tuple: usize, cell: u8 },
    #[error("tuple {tuple} names cell {cell} twice")]
    RepeatedCell { tuple: usize, cell: u8 },
    #[error(
        "stages must start at 0 and increase strictly, with at most {MAX_STAGES} stages and exponents up to 15: {0:?}"
    )]
    Stages(Vec<u8>),
    #[error("unknown network {0:?} (known: 4x6, 8x6)")]
    UnknownName(String),
    #[error("each of the {stages} stages reads 1 to {tuples} of the tuples, found {found:?}")]
    StageTuples {
        stages: usize,
        tuples: usize,
        found: Vec<usize>,
    },
}

impl Shape {
    /// A checked shape.
    pub fn new(tuples: Vec<Vec<u8>>, stages: Vec<u8>) -> Result<Shape, ShapeError> {
        if tuples.is_empty() || tuples.len() > MAX_TUPLES {
            return Err(ShapeError::TupleCount(tuples.len()));
        }
        for (t, cells) in tuples.iter().enumerate() {
            if cells.is_empty() || cells.len() > MAX_TUPLE_CELLS {
                return Err(ShapeError::TupleSize {
                    tuple: t,
                    cells: cells.len(),
                });
            }
            let mut seen = 0u16;
            for &c in cells {
                if c > 15 {
                    return Err(ShapeError::Cell { tuple: t, cell: c });
                }
                if seen & (1 << c) != 0 {
                    return Err(ShapeError::RepeatedCell { tuple: t, cell: c });
                }
                seen |= 1 << c;
            }
        }
        Shape::check_stages(&stages)?;
        let stage_tuples = vec![tuples.len(); stages.len()];
        Ok(Shape {
            tuples,
            stages,
            stage_tuples,
        })
    }

    /// A checked shape whose stage `k` reads the first `stage_tuples[k]` tuples.
    pub fn with_stage_tuples(
        tuples: Vec<Vec<u8>>,
        stages: Vec<u8>,
        stage_tuples: Vec<usize>,
    ) -> Result<Shape, ShapeError> {
        let mut shape = Shape::new(tuples, stages)?;
        if stage_tuples.len() != shape.stages.len() || stage_tuples.iter().any(|&n| n == 0 || n > shape.tuples.len()) {
            return Err(ShapeError::StageTuples {
                stages: shape.stages.len(),
                tuples: shape.tuples.len(),
                found: stage_tuples,
            });
        }
        shape.stage_tuples = stage_tuples;
        Ok(shape)
    }

    /// How many of the tuples (the first ones) stage `k` reads.
    #[inline]
    pub fn stage_tuple_count(&self, k: usize) -> usize {
        self.stage_tuples[k]
    }

    /// Whether every stage reads every tuple (so all stages have [`Shape::weights_per_stage`] weights): what the
    /// trainer, `net diff`, `net average` and a single weight file need.
    pub fn is_uniform(&self) -> bool {
        self.stage_tuples.iter().all(|&n| n == self.tuples.len())
    }

    /// The weights of stage `k` (the sum of 16^n over the tuples it reads).
    pub fn stage_weights(&self, k: usize) -> usize {
        self.tuples[..self.stage_tuples[k]]
            .iter()
            .map(|t| 1usize << (4 * t.len()))
            .sum()
    }

    /// Where stage `k`'s weights begin in the network's.
    pub fn stage_start(&self, k: usize) -> usize {
        (0..k).map(|j| self.stage_weights(j)).sum()
    }

    /// Checks a list of stage starts (exponents): from 0, strictly increasing, at most [`MAX_STAGES`], up to 15.
    pub fn check_stages(stages: &[u8]) -> Result<(), ShapeError> {
        let ok = stages.first() == Some(&0)
            && stages.len() <= MAX_STAGES
            && stages.windows(2).all(|w| w[0] < w[1])
            && stages.iter().all(|&s| s <= 15);
        if ok {
            Ok(())
        } else {
            Err(ShapeError::Stages(stages.to_vec()))
        }
    }

    /// A named tuple set (`4x6` or `8x6`) with the given stage starts.
    pub fn named(name: &str, stages: Vec<u8>) -> Result<Shape, ShapeError> {
        let set = match name {
            "4x6" => TUPLES_4X6,
            "8x6" => TUPLES_8X6,
            _ => return Err(ShapeError::UnknownName(name.to_owned())),
        };
        Shape::new(set.iter().map(|t| t.to_vec()).collect(), stages)
    }

    /// Weights of the tables of all the tuples (the sum of 16^n over them): each stage's, when every stage reads
    /// every tuple ([`Shape::is_uniform`]).
    pub fn weights_per_stage(&self) -> usize {
        self.tuples.iter().map(|t| 1usize << (4 * t.len())).sum()
    }

    /// Weights of the whole network.
    pub fn weight_count(&self) -> usize {
        (0..self.stages.len()).map(|k| self.stage_weights(k)).sum()
    }

    /// A short description, e.g. `4 tuples x 6 cells, 1 stage`.
    pub fn describe(&self) -> String {
        let sizes: Vec<usize> = self.tuples.iter().map(Vec::len).collect();
        let cells = if sizes.iter().all(|&s| s == sizes[0]) {
            format!("{}x{}", sizes.len(), sizes[0])
        } else {
            format!("{} tuples of {:?} cells", sizes.len(), sizes)
        };
        let stages = if self.stages.len() == 1 {
            "1 stage".to_owned()
        } else {
            let starts: Vec<String> = self
                .stages
                .iter()
                .map(|&e| if e == 0 { "0".into() } else { (1u32 << e).to_string() })
                .collect();
            let mut text = format!("{} stages (from tiles {})", self.stages.len(), starts.join(", "));
            if !self.is_uniform() {
                let counts: Vec<String> = self.stage_tuples.iter().map(ToString::to_string).collect();
                text.push_str(&format!(", reading the first {} tuples", counts.join(", ")));
            }
            text
        };
        format!("{cells}, {stages}")
    }

    /// The stage of a board whose largest exponent is `max_exponent`.
    #[inline]
    pub fn stage_of(&self, max_exponent: u8) -> usize {
        stage_index(&self.stages, max_exponent)
    }
}

/// The stage of a board whose largest exponent is `max_exponent`, given the stages' starts (increasing, from 0): the
/// one rule behind [`Shape::stage_of`] and the grouped lookups' stages.
#[inline(always)]
pub(crate) fn stage_index(starts: &[u8], max_exponent: u8) -> usize {
    starts.iter().rposition(|&s| s <= max_exponent).unwrap_or(0)
}
