//! Every request field declared once: its JSON name, the flag the command line gives it, its help text, what it
//! accepts (range or names) and what its absence means. The JSON readers take a field's range from here, the
//! command line builds its flags and their help from here (`cli::fields`), names a problem's flag from here, and the
//! spec test checks `openapi.yaml` against these declarations; so a bound or a flag name is written in one place.
//!
//! A field is declared in the home of the request kind that owns it (`best_move.rs`, `simulate.rs`, ...); the
//! search fields that several kinds share are declared in [`super`] ([`super::SEARCH`], [`super::ONE_SEARCH`]).

use serde_json::{Map, Value};

use super::read::{read_bool, read_clamped, read_f64, read_str, read_u64};
use super::Problems;
use crate::names::or_list;

/// A request field, declared once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    /// The JSON name (`time_budget_ms`).
    pub name: &'static str,
    /// The command line's flag, without its dashes (`budget-ms`).
    pub flag: &'static str,
    /// The placeholder of the flag's value in `--help` (`MS`); empty for a switch.
    pub value_name: &'static str,
    /// What the field means, for `--help` (its range and default are added from [`Field::accepts`] and
    /// [`Field::absent`]).
    pub help: &'static str,
    pub accepts: Accepts,
    pub absent: Absent,
    /// What the command line does when the flag is not given.
    pub flag_default: FlagDefault,
}

/// What the command line does when a field's flag is not given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FlagDefault {
    /// What the request does without the field ([`Field::absent`]).
    Absent,
    /// Gives the field this value (`simulate --games` plays 10 games, a request 1).
    Value(&'static str),
    /// Gives the field a value the command works out, said in words (`the number of CPUs`).
    Said(&'static str),
}

/// What a field accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Accepts {
    /// A whole number from `min` to `max`.
    Whole { min: u64, max: u64 },
    /// A whole number of at least `min`; a larger one than the bounds allow is clamped to them (even one beyond 64
    /// bits: "as much as allowed").
    Clamped { min: u64 },
    /// A finite number of at least `min`; a larger one than the bounds allow is clamped to them.
    ClampedNumber { min: f64 },
    /// A finite number from `min` up to, not including, `below`.
    Below { min: f64, below: f64 },
    /// A number whose magnitude is at most `max`.
    Magnitude { max: f64 },
    /// One of these names.
    Name { names: &'static [&'static str] },
    /// A number of plies from 1 to `max`, or `auto`.
    PliesOrAuto { max: u64 },
    /// `true` or `false` (on the command line a switch).
    Bool,
    /// An object of names to numbers of magnitude at most `max` (on the command line a repeatable `NAME=VALUE`).
    NamedNumbers { max: f64 },
}

/// What an absent field means.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Absent {
    /// This whole number (the spec states it as the field's `default`).
    Whole(u64),
    /// This name.
    Name(&'static str),
    /// This boolean.
    Bool(bool),
    /// What it means in words, for `--help` (`the profile's`): the spec says it in the field's description.
    Said(&'static str),
}

impl Field {
    /// The whole number an absent field means (a declaration without one is a programming error, caught by the
    /// first request that reads it).
    pub const fn absent_whole(&self) -> u64 {
        match self.absent {
            Absent::Whole(n) => n,
            _ => panic!("the field has no whole-number default"),
        }
    }

    /// The boolean an absent field means.
    pub const fn absent_bool(&self) -> bool {
        match self.absent {
            Absent::Bool(b) => b,
            _ => panic!("the field has no boolean default"),
        }
    }

    /// The pointer of the field's problems: `/name`.
    pub fn pointer(&self) -> String {
        format!("/{}", self.name)
    }

    /// The field's value when given: a whole number within [`Accepts::Whole`] (else a problem).
    pub fn read_whole(&self, map: &Map<String, Value>, problems: &mut Problems) -> Option<u64> {
        match self.accepts {
            Accepts::Whole { min, max } => read_u64(map, self.name, min, max, problems),
            other => unreachable!("{} is read as a whole number but accepts {other:?}", self.name),
        }
    }

    /// The field's value when given: a whole number of at least [`Accepts::Clamped`]'s minimum, clamped to `max`.
    pub fn read_clamped(&self, map: &Map<String, Value>, max: u64, problems: &mut Problems) -> Option<u64> {
        match self.accepts {
            Accepts::Clamped { min } => read_clamped(map, self.name, min, max, problems),
            other => unreachable!("{} is read as a clamped number but accepts {other:?}", self.name),
        }
    }

    /// The field's value when given: a finite number of at least [`Accepts::ClampedNumber`]'s minimum, clamped to
    /// `max`.
    pub fn read_clamped_number(&self, map: &Map<String, Value>, max: f64, problems: &mut Problems) -> Option<f64> {
        let Accepts::ClampedNumber { min } = self.accepts else {
            unreachable!(
                "{} is read as a clamped number but accepts {:?}",
                self.name, self.accepts
            );
        };
        let v = map.get(self.name)?;
        match v.as_f64() {
            Some(x) if x >= min => Some(x.min(max)),
            _ => {
                problems.push(
                    self.pointer(),
                    format!("{} must be a number of at least {min}, found {v}", self.name),
                );
                None
            }
        }
    }

    /// The field's value when given: a finite number within [`Accepts::Below`].
    pub fn read_below(&self, map: &Map<String, Value>, problems: &mut Problems) -> Option<f64> {
        let Accepts::Below { min, below } = self.accepts else {
            unreachable!(
                "{} is read as a number below a bound but accepts {:?}",
                self.name, self.accepts
            );
        };
        let x = read_f64(map, self.name, problems)?;
        if (min..below).contains(&x) {
            Some(x)
        } else {
            problems.push(
                self.pointer(),
                format!("{} must be at least {min} and below {below}, found {x}", self.name),
            );
            None
        }
    }

    /// The field's value when given: one of its names, parsed (else the parse error's message).
    pub fn read_name<T: std::str::FromStr>(&self, map: &Map<String, Value>, problems: &mut Problems) -> Option<T>
    where
        T::Err: std::fmt::Display,
    {
        match read_str(map, self.name, problems)?.parse::<T>() {
            Ok(value) => Some(value),
            Err(e) => {
                problems.push(self.pointer(), e.to_string());
                None
            }
        }
    }

    /// The field's value when given: `true` or `false`.
    pub fn read_bool(&self, map: &Map<String, Value>, problems: &mut Problems) -> Option<bool> {
        read_bool(map, self.name, problems)
    }

    /// The help text of the field's flag: its meaning, then what it accepts and its default.
    pub fn flag_help(&self) -> String {
        let accepts = match self.accepts {
            Accepts::Whole { min: 0, max: u64::MAX } => String::new(),
            Accepts::Whole { min, max: u64::MAX } => format!(" (at least {min})"),
            Accepts::Whole { min, max } => format!(" ({min}-{max})"),
            Accepts::Clamped { min } => format!(" (at least {min})"),
            Accepts::ClampedNumber { min } => format!(" (at least {min})"),
            Accepts::Below { min, below } => format!(" (at least {min}, below {below})"),
            Accepts::Magnitude { max } => format!(" (-{max:e} to {max:e})"),
            Accepts::Name { names } => format!(": {}", or_list(names)),
            Accepts::PliesOrAuto { max } => format!(" (1-{max} or auto)"),
            Accepts::Bool => String::new(),
            Accepts::NamedNumbers { max } => format!(" (repeatable; -{max:e} to {max:e})"),
        };
        // clap shows a FlagDefault::Value itself.
        let default = match (self.flag_default, self.absent) {
            (FlagDefault::Value(_), _) | (FlagDefault::Absent, Absent::Bool(false)) => String::new(),
            (FlagDefault::Said(words), _) | (FlagDefault::Absent, Absent::Said(words)) => {
                format!(" [default: {words}]")
            }
            (FlagDefault::Absent, Absent::Whole(n)) => format!(" [default: {n}]"),
            (FlagDefault::Absent, Absent::Name(name)) => format!(" [default: {name}]"),
            (FlagDefault::Absent, Absent::Bool(true)) => " [default: true]".to_owned(),
        };
        format!("{}{accepts}{default}", self.help)
    }
}

/// The JSON names of these fields, in order (a request's known fields).
pub fn names(sets: &[&[&Field]]) -> Vec<&'static str> {
    sets.iter().flat_map(|set| set.iter().map(|f| f.name)).collect()
}

/// The field named `name` among these, if any.
pub fn find(sets: &[&[&'static Field]], name: &str) -> Option<&'static Field> {
    sets.iter().flat_map(|set| set.iter()).find(|f| f.name == name).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const COUNT: Field = Field {
        name: "count",
        flag: "count",
        value_name: "N",
        help: "How many",
        accepts: Accepts::Whole { min: 2, max: 5 },
        absent: Absent::Whole(3),
        flag_default: FlagDefault::Absent,
    };

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_whole_field_reads_its_own_range_and_names_itself_in_the_problem() {
        let mut problems = Problems::default();
        assert_eq!(COUNT.read_whole(&map(json!({"count": 5})), &mut problems), Some(5));
        assert_eq!(COUNT.read_whole(&map(json!({})), &mut problems), None);
        assert!(problems.is_empty());
        assert_eq!(COUNT.read_whole(&map(json!({"count": 6})), &mut problems), None);
        assert_eq!(COUNT.read_whole(&map(json!({"count": 1})), &mut problems), None);
        let found: Vec<_> = problems
            .iter()
            .map(|p| (p.pointer.as_str(), p.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("/count", "count must be a whole number from 2 to 5, found 6"),
                ("/count", "count must be a whole number from 2 to 5, found 1")
            ]
        );
    }

    #[test]
    fn a_number_below_its_bound_is_refused_at_the_bound() {
        let cutoff = Field {
            accepts: Accepts::Below { min: 0.0, below: 1.0 },
            ..COUNT
        };
        let mut problems = Problems::default();
        assert_eq!(cutoff.read_below(&map(json!({"count": 0.0})), &mut problems), Some(0.0));
        assert_eq!(cutoff.read_below(&map(json!({"count": 1.0})), &mut problems), None);
        assert_eq!(problems.len(), 1);
    }

    #[test]
    fn the_flag_help_says_the_range_and_the_default() {
        assert_eq!(COUNT.flag_help(), "How many (2-5) [default: 3]");
        let named = Field {
            accepts: Accepts::Name {
                names: &["a", "b", "c"],
            },
            absent: Absent::Said("the profile's"),
            ..COUNT
        };
        assert_eq!(named.flag_help(), "How many: a, b or c [default: the profile's]");
        let cli_default = Field {
            flag_default: FlagDefault::Value("10"),
            ..COUNT
        };
        assert_eq!(cli_default.flag_help(), "How many (2-5)");
        let worked_out = Field {
            flag_default: FlagDefault::Said("the number of CPUs"),
            ..COUNT
        };
        assert_eq!(worked_out.flag_help(), "How many (2-5) [default: the number of CPUs]");
    }
}
