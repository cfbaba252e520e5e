//! Each named enum written once: its variants with their wire names, from which `named_enum!` derives `ALL`,
//! `NAMES`, `as_str`, `Display`, `FromStr` and the parse error, whose message lists every name
//! (`"sideways" is not a direction (up, down, left or right)`). The HTTP API, the command line and the docs all read
//! the names from here.

use std::fmt;

/// The error of parsing a named enum: the text found and the names it could have been.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseNameError {
    /// The text that matched no name.
    pub found: String,
    /// What was expected, with its article: `a direction`, `an evaluator`.
    pub what: &'static str,
    /// Every valid name, in the enum's order.
    pub names: &'static [&'static str],
}

impl fmt::Display for ParseNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not {} ({})", self.found, self.what, or_list(self.names))
    }
}

impl std::error::Error for ParseNameError {}

/// `a`, `a or b`, `a, b or c`.
pub fn or_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`: the names as JSON strings, for messages about a JSON value.
pub fn quoted_or_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    or_list(&quoted.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Defines an enum whose variants have wire names:
/// `named_enum! { #[derive(..)] pub enum Terminal: "a terminal value" { Zero = "zero", Heuristic = "heuristic" } }`.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident: $what:literal {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every variant, in the order of the definition.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];
            /// The wire names, in the order of [`Self::ALL`].
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::names::ParseNameError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err($crate::names::ParseNameError {
                        found: s.to_owned(),
                        what: $what,
                        names: Self::NAMES,
                    }),
                }
            }
        }
    };
}
pub(crate) use named_enum;

#[cfg(test)]
mod tests {
    use super::*;

    named_enum! {
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        enum Colour: "a colour" { Red = "red", Green = "green", Blue = "blue" }
    }

    #[test]
    fn names_parse_both_ways_and_the_error_lists_them() {
        assert_eq!(Colour::ALL, [Colour::Red, Colour::Green, Colour::Blue]);
        for c in Colour::ALL {
            assert_eq!(c.as_str().parse::<Colour>(), Ok(c));
            assert_eq!(c.to_string(), c.as_str());
        }
        let e = "teal".parse::<Colour>().unwrap_err();
        assert_eq!(e.to_string(), r#""teal" is not a colour (red, green or blue)"#);
        assert_eq!(or_list(&["a"]), "a");
        assert_eq!(or_list(&["a", "b"]), "a or b");
        assert_eq!(quoted_or_list(Colour::NAMES), r#""red", "green" or "blue""#);
    }
}
