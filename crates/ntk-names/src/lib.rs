//! The names of fixed choices, derived once: from the serde attributes of a unit-variant
//! enum (`#[serde(rename_all = ...)]`, `rename`, `alias`), the names that configs, the
//! command line and every saved file use. An enum's `name`, `parse` and list of all values
//! come from here, so code, configs and files cannot spell a value two ways.
//!
//! ```
//! #[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
//! #[serde(rename_all = "snake_case")]
//! enum Protocol { Whole, Blocks }
//!
//! use ntk_names as names;
//! assert_eq!(names::name(&Protocol::Blocks), "blocks");
//! assert_eq!(names::names::<Protocol>(), ["whole", "blocks"]);
//! assert_eq!(names::all::<Protocol>(), [Protocol::Whole, Protocol::Blocks]);
//! assert_eq!(names::parse::<Protocol>("whole"), Some(Protocol::Whole));
//! assert_eq!(names::parse::<Protocol>("Whole"), None);
//! ```

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde::{Serialize, forward_to_deserialize_any};

/// A unit-variant config value (a convention, a parameterization, a method) spelled as
/// the config file spells it: `unit_variance`, never the Debug form `UnitVariance` or its
/// lowercase `unitvariance`. Outputs use it so that a value can be pasted back into a
/// config, and tables and summaries match the config's words.
pub fn spelled<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        other => panic!("a unit-variant config value serializes to a string, got {other:?}"),
    }
}

/// The serde name of a unit variant (`&'static`: it is the enum's own variant list entry).
///
/// # Panics
/// When `T` is not an enum of unit variants: a programming error, not an input error.
pub fn name<T: Serialize + DeserializeOwned>(value: &T) -> &'static str {
    let spelled = spelled(value);
    // Among the accepted names (aliases too), the one equal to what `value` serializes to.
    accepted::<T>()
        .iter()
        .copied()
        .find(|n| *n == spelled)
        .unwrap_or_else(|| panic!("{spelled:?} is not among its enum's variant names"))
}

/// Every variant's name, in declaration order, aliases left out: of what serde's derived
/// `Deserialize` hands to `deserialize_enum` (names and aliases), the names a variant
/// serializes to.
pub fn names<T: Serialize + DeserializeOwned>() -> Vec<&'static str> {
    accepted::<T>()
        .iter()
        .copied()
        .filter(|n| parse::<T>(n).is_some_and(|v| spelled(&v) == *n))
        .collect()
}

/// Every name `T` accepts: its variants' names and aliases, as serde's derived
/// `Deserialize` hands them to `deserialize_enum`.
fn accepted<T: DeserializeOwned>() -> &'static [&'static str] {
    match T::deserialize(Variants) {
        Err(Found(Some(v))) => v,
        _ => panic!(
            "{} is not an enum with a derived Deserialize",
            std::any::type_name::<T>()
        ),
    }
}

/// Every variant, in declaration order.
pub fn all<T: Serialize + DeserializeOwned>() -> Vec<T> {
    names::<T>()
        .into_iter()
        .map(|n| parse(n).unwrap_or_else(|| panic!("variant {n:?} does not parse back")))
        .collect()
}

/// The variant named `s` (a name or a serde alias), exactly as a config spells it.
pub fn parse<T: DeserializeOwned>(s: &str) -> Option<T> {
    T::deserialize(de::value::StrDeserializer::<de::value::Error>::new(s)).ok()
}

/// A name that is none of an enum's ([`parse_arg`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("\"{}\": expected one of {expected}", controls_escaped(value))]
pub struct UnknownName {
    pub value: String,
    /// The names that are accepted, joined for the message.
    pub expected: String,
}

/// `text` with every character [`hidden`] escaped (a quote or backslash as it is): a control
/// character as Rust escapes it (`\n`, `\t`, `\u{1b}`), any other as its code point
/// (`\u{200b}`), so that a user's newline does not break a message's line and an invisible
/// character shows: clap says a refusal again for the arguments escaped, and Debug's quoting
/// escaped them twice (hundred-and-seventh hostile round, N2). Every crate uses it, through
/// `ntk_files::shown` above this one.
pub fn controls_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if c.is_control() => out.extend(c.escape_debug()),
            c if hidden(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out
}

/// Whether `c` is escaped when shown, and refused in a name an output is written under: a
/// control character (general category Cc), or a character that does not show itself where
/// it stands. Those are Unicode's default-ignorable code points (DerivedCoreProperties: the
/// zero-width space and joiners U+200B-U+200D, the bidirectional marks, embeddings,
/// overrides and isolates U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069, the byte order
/// mark U+FEFF, the soft hyphen, the Hangul fillers, variation selectors, tags, ...), the other
/// format characters (category Cf: U+0600-U+0605, U+FFF9-U+FFFB, ...) and the line and
/// paragraph separators U+2028-U+2029, which break a line as a newline does, and the blanks
/// that read as an ASCII space or as nothing (the other space separators, U+00A0, U+2000-U+200A,
/// U+202F, U+3000, ..., and the braille blank U+2800: hundred-and-thirteenth, N2), and the
/// code points no font draws as themselves: private use (U+E000-U+F8FF and planes 15-16) and
/// the noncharacters (U+FDD0-U+FDEF and the last two of every plane; hundred-and-fourteenth,
/// D5: a U+E000 in a key read "bad key `model.depth`" beside the key it was). A bidirectional
/// control reorders the rest of a line (hundred-and-seventh hostile round, N3); the others
/// made `e/p\u{200b}p.toml: No such file` read as a file that exists
/// (hundred-and-twelfth, D1).
pub fn hidden(c: char) -> bool {
    let u = c as u32;
    c.is_control()
        || (0xE000..=0xF8FF).contains(&u)
        || u >= 0xF0000
        || (0xFDD0..=0xFDEF).contains(&u)
        || u & 0xFFFE == 0xFFFE
        || matches!(
            c as u32,
            0x00A0
                | 0x00AD
                | 0x034F
                | 0x0600..=0x0605
                | 0x061C
                | 0x06DD
                | 0x070F
                | 0x0890..=0x0891
                | 0x08E2
                | 0x115F..=0x1160
                | 0x1680
                | 0x17B4..=0x17B5
                | 0x180B..=0x180F
                | 0x2000..=0x200F
                | 0x2028..=0x202F
                | 0x205F
                | 0x2060..=0x206F
                | 0x2800
                | 0x3000
                | 0x3164
                | 0xFE00..=0xFE0F
                | 0xFEFF
                | 0xFFA0
                | 0xFFF0..=0xFFFB
                | 0x110BD
                | 0x110CD
                | 0x13430..=0x1343F
                | 0x1BCA0..=0x1BCA3
                | 0x1D173..=0x1D17A
                | 0xE0000..=0xE0FFF
        )
}

/// [`parse`] for a command-line value (clap's `value_parser`): the error lists the names.
pub fn parse_arg<T: Serialize + DeserializeOwned>(s: &str) -> Result<T, UnknownName> {
    parse(s).ok_or_else(|| UnknownName {
        value: s.to_string(),
        expected: list::<T>(),
    })
}

/// The names joined for a message: `whole, blocks`.
pub fn list<T: Serialize + DeserializeOwned>() -> String {
    names::<T>().join(", ")
}

/// A deserializer that only learns an enum's variant names.
struct Variants;

/// Its "error", carrying the names it learned.
#[derive(Debug)]
struct Found(Option<&'static [&'static str]>);

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("variant names")
    }
}

impl std::error::Error for Found {}

impl de::Error for Found {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Found(None)
    }
}

impl<'de> Deserializer<'de> for Variants {
    type Error = Found;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Found> {
        Err(Found(None))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Found> {
        Err(Found(Some(variants)))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    enum Source {
        Mnist,
        FashionMnist,
        #[serde(rename = "cifar-10", alias = "cifar10")]
        Cifar10,
    }

    /// Control characters, the bidirectional controls (hundred-and-seventh hostile round,
    /// N3) and the other invisible characters (hundred-and-twelfth, D1: a zero-width space,
    /// a byte order mark, a line separator, a Hangul filler, a tag) escaped; other text,
    /// quotes, accents and a combining accent included, kept.
    #[test]
    fn controls_and_invisible_characters_are_escaped() {
        let text = "a\u{1b}[1m\tb\u{202E}c\u{2066}d\u{200F}e \"é\" ü\n";
        let want = "a\\u{1b}[1m\\tb\\u{202e}c\\u{2066}d\\u{200f}e \"é\" ü\\n";
        assert_eq!(controls_escaped(text), want);
        let text =
            "p\u{200B}p\u{FEFF}\u{2028}\u{2029}\u{AD}\u{3164}\u{E0001}\u{FFF9}\u{180E}e\u{301}";
        let want = "p\\u{200b}p\\u{feff}\\u{2028}\\u{2029}\\u{ad}\\u{3164}\\u{e0001}\\u{fff9}\\u{180e}e\u{301}";
        assert_eq!(controls_escaped(text), want);
        for c in ['a', ' ', 'é', '\u{301}', '中', '😀', '\u{2010}', '_'] {
            assert!(!hidden(c), "{c:?}");
        }
        for c in [
            '\u{A0}', '\u{2002}', '\u{202F}', '\u{3000}', '\u{2800}', '\u{205F}',
        ] {
            assert!(hidden(c), "{c:?}");
        }
    }

    #[test]
    fn names_follow_the_serde_attributes() {
        assert_eq!(names::<Source>(), ["mnist", "fashion-mnist", "cifar-10"]);
        assert_eq!(name(&Source::FashionMnist), "fashion-mnist");
        assert_eq!(name(&Source::Cifar10), "cifar-10");
        assert_eq!(
            parse::<Source>("cifar10"),
            Some(Source::Cifar10),
            "an alias parses"
        );
        assert_eq!(parse::<Source>("fashion_mnist"), None);
        assert_eq!(all::<Source>().len(), 3);
        assert_eq!(list::<Source>(), "mnist, fashion-mnist, cifar-10");
        let e = parse_arg::<Source>("svhn").unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"svhn\": expected one of mnist, fashion-mnist, cifar-10"
        );
    }
}
