//! Flink's string functions the Nexmark queries use: `LOWER`, `UPPER`,
//! `REGEXP_EXTRACT`, `SPLIT_INDEX` and `DATE_FORMAT`, with Flink's
//! semantics (its `SqlFunctionUtils` and `DateTimeUtils`): a NULL argument
//! gives NULL, and so does a regular expression that does not compile, a
//! group or an index that does not exist.

use crate::value::{civil_from_days, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum StringFn {
    /// `LOWER(s)`.
    Lower,
    /// `UPPER(s)`.
    Upper,
    /// `REGEXP_EXTRACT(s, regex [, group])`: the group (default 0, the whole
    /// match) of the first match.
    RegexpExtract,
    /// `SPLIT_INDEX(s, separator, index)`: the `index`-th (from 0) piece of
    /// `s` split at every `separator`, empty pieces kept.
    SplitIndex,
    /// `DATE_FORMAT(timestamp, format)`: the timestamp (UTC wall clock) in
    /// a Java date-time pattern of `y M d H m s S` and literal text.
    DateFormat,
}

/// What an argument must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    String,
    Integer,
    Timestamp,
}

impl StringFn {
    pub const ALL: [StringFn; 5] = [
        StringFn::Lower,
        StringFn::Upper,
        StringFn::RegexpExtract,
        StringFn::SplitIndex,
        StringFn::DateFormat,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StringFn::Lower => "LOWER",
            StringFn::Upper => "UPPER",
            StringFn::RegexpExtract => "REGEXP_EXTRACT",
            StringFn::SplitIndex => "SPLIT_INDEX",
            StringFn::DateFormat => "DATE_FORMAT",
        }
    }

    pub fn by_name(name: &str) -> Option<StringFn> {
        Self::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }

    /// The arguments, in order; the last `optional()` of them may be left
    /// out.
    pub fn args(self) -> &'static [ArgKind] {
        use ArgKind::*;
        match self {
            StringFn::Lower | StringFn::Upper => &[String],
            StringFn::RegexpExtract => &[String, String, Integer],
            StringFn::SplitIndex => &[String, String, Integer],
            StringFn::DateFormat => &[Timestamp, String],
        }
    }

    pub fn optional(self) -> usize {
        match self {
            StringFn::RegexpExtract => 1,
            _ => 0,
        }
    }

    /// Whether the result may be NULL when no argument is.
    pub fn nullable(self) -> bool {
        matches!(self, StringFn::RegexpExtract | StringFn::SplitIndex)
    }

    /// The function over evaluated arguments (as many as `args()`, less
    /// the optional ones left out).
    pub fn eval(self, args: &[Value]) -> Value {
        if args.iter().any(Value::is_null) {
            return Value::Null;
        }
        let s = |i: usize| match args.get(i) {
            Some(Value::Str(s)) => Some(&**s),
            _ => None,
        };
        let int = |i: usize| args.get(i).and_then(Value::as_int);
        match self {
            StringFn::Lower => s(0).map_or(Value::Null, |x| Value::str(&x.to_lowercase())),
            StringFn::Upper => s(0).map_or(Value::Null, |x| Value::str(&x.to_uppercase())),
            StringFn::RegexpExtract => match (s(0), s(1)) {
                (Some(x), Some(re)) => regexp_extract(x, re, int(2).unwrap_or(0)),
                _ => Value::Null,
            },
            StringFn::SplitIndex => match (s(0), s(1), int(2)) {
                (Some(x), Some(sep), Some(i)) => split_index(x, sep, i),
                _ => Value::Null,
            },
            StringFn::DateFormat => match (args.first().and_then(Value::as_ts), s(1)) {
                (Some(t), Some(f)) => date_format(t, f).map_or(Value::Null, |x| Value::str(&x)),
                _ => Value::Null,
            },
        }
    }
}

thread_local! {
    /// Compiled patterns by their text (`None`: it does not compile), as
    /// Flink keeps a per-thread cache of them.
    static PATTERNS: RefCell<HashMap<String, Option<regex::Regex>>> = RefCell::new(HashMap::new());
}

/// At most this many patterns are kept per thread; a pattern made per row
/// (from a column) must not grow the cache without end.
const PATTERN_CACHE: usize = 64;

fn regexp_extract(s: &str, re: &str, group: i64) -> Value {
    PATTERNS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(re) {
            if cache.len() >= PATTERN_CACHE {
                cache.clear();
            }
            cache.insert(re.to_string(), regex::Regex::new(re).ok());
        }
        let Some(Some(compiled)) = cache.get(re) else {
            return Value::Null;
        };
        let Ok(group) = usize::try_from(group) else {
            return Value::Null;
        };
        match compiled.captures(s) {
            Some(c) => c.get(group).map_or(Value::Null, |m| Value::str(m.as_str())),
            None => Value::Null,
        }
    })
}

/// Flink splits with commons-lang's `splitByWholeSeparatorPreserveAllTokens`:
/// an empty string has no pieces, an empty separator splits at whitespace.
fn split_index(s: &str, sep: &str, index: i64) -> Value {
    let Ok(index) = usize::try_from(index) else {
        return Value::Null;
    };
    if s.is_empty() {
        return Value::Null;
    }
    let piece = if sep.is_empty() {
        s.split(char::is_whitespace).nth(index)
    } else {
        s.split(sep).nth(index)
    };
    piece.map_or(Value::Null, Value::str)
}

/// One element of a date-time pattern.
#[derive(Clone, Debug, PartialEq)]
enum Piece {
    /// A field letter repeated `count` times.
    Field(char, usize),
    Text(String),
}

/// The pattern letters `DATE_FORMAT` supports.
pub const DATE_FORMAT_LETTERS: &str = "y M d H m s S";

/// Parses a Java date-time pattern; an error names what is not supported.
pub fn parse_date_format(format: &str) -> Result<(), String> {
    pieces(format).map(|_| ())
}

fn pieces(format: &str) -> Result<Vec<Piece>, String> {
    let chars: Vec<char> = format.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            // 'text', with '' for a quote.
            let mut text = String::new();
            i += 1;
            if chars.get(i) == Some(&'\'') {
                out.push(Piece::Text("'".into()));
                i += 1;
                continue;
            }
            loop {
                match chars.get(i) {
                    None => return Err(format!("unterminated quote in '{format}'")),
                    Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                        text.push('\'');
                        i += 2;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(&x) => {
                        text.push(x);
                        i += 1;
                    }
                }
            }
            out.push(Piece::Text(text));
        } else if c.is_ascii_alphabetic() {
            let mut n = 1;
            while chars.get(i + n) == Some(&c) {
                n += 1;
            }
            let ok = match c {
                'y' => true,
                'M' | 'd' | 'H' | 'm' | 's' => n <= 2,
                'S' => n <= 9,
                _ => false,
            };
            if !ok {
                return Err(format!(
                    "pattern '{}' in '{format}' is not supported (DATE_FORMAT supports the letters {DATE_FORMAT_LETTERS}, M d H m s at most twice, and quoted text)",
                    c.to_string().repeat(n)
                ));
            }
            out.push(Piece::Field(c, n));
            i += n;
        } else {
            out.push(Piece::Text(c.to_string()));
            i += 1;
        }
    }
    Ok(out)
}

thread_local! {
    /// Parsed `DATE_FORMAT` patterns by their text (`None`: not supported),
    /// so a pattern is parsed once, not per row; bounded as [`PATTERNS`].
    static DATE_PATTERNS: RefCell<HashMap<String, Option<std::rc::Rc<[Piece]>>>> =
        RefCell::new(HashMap::new());
}

fn date_format(millis: i64, format: &str) -> Option<String> {
    let pieces = DATE_PATTERNS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(format) {
            if cache.len() >= PATTERN_CACHE {
                cache.clear();
            }
            cache.insert(format.to_string(), pieces(format).ok().map(Into::into));
        }
        cache.get(format).cloned().flatten()
    })?;
    let days = millis.div_euclid(86_400_000);
    let ms_of_day = millis.rem_euclid(86_400_000);
    let (y, mo, d) = civil_from_days(days);
    let h = ms_of_day / 3_600_000;
    let mi = ms_of_day / 60_000 % 60;
    let s = ms_of_day / 1000 % 60;
    let ms = ms_of_day % 1000;
    let mut out = String::new();
    for p in pieces.iter() {
        match *p {
            Piece::Text(ref t) => out.push_str(t),
            // Year of era; `yy` is the last two digits.
            Piece::Field('y', 2) => {
                let _ = write!(out, "{:02}", y.rem_euclid(100));
            }
            Piece::Field('y', n) => {
                let _ = write!(out, "{:0n$}", if y <= 0 { 1 - y } else { y });
            }
            Piece::Field('S', n) => {
                // Fraction of the second, to n digits.
                let digits = format!("{ms:03}000000");
                out.push_str(&digits[..n]);
            }
            Piece::Field(c, n) => {
                let v = match c {
                    'M' => mo,
                    'd' => d,
                    'H' => h,
                    'm' => mi,
                    _ => s,
                };
                let _ = write!(out, "{v:0n$}");
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(f: StringFn, args: &[Value]) -> Value {
        f.eval(args)
    }

    fn s(x: &str) -> Value {
        Value::str(x)
    }

    #[test]
    fn lower_and_upper() {
        assert_eq!(call(StringFn::Lower, &[s("Apple")]), s("apple"));
        assert_eq!(call(StringFn::Upper, &[s("Apple")]), s("APPLE"));
        assert_eq!(call(StringFn::Lower, &[Value::Null]), Value::Null);
    }

    #[test]
    fn regexp_extract_as_flink() {
        let re = s("(&|^)channel_id=([^&]*)");
        let url = s("https://www.nexmark.com/a/b/c/item.htm?query=1&channel_id=1234");
        assert_eq!(
            call(
                StringFn::RegexpExtract,
                &[url.clone(), re.clone(), Value::Int(2)]
            ),
            s("1234")
        );
        assert_eq!(
            call(StringFn::RegexpExtract, &[url.clone(), re.clone()]),
            s("&channel_id=1234")
        );
        // No match, a group that does not exist, a bad pattern: NULL.
        assert_eq!(
            call(
                StringFn::RegexpExtract,
                &[s("x?query=1"), re.clone(), Value::Int(2)]
            ),
            Value::Null
        );
        assert_eq!(
            call(StringFn::RegexpExtract, &[url.clone(), re, Value::Int(3)]),
            Value::Null
        );
        assert_eq!(
            call(StringFn::RegexpExtract, &[url, s("("), Value::Int(0)]),
            Value::Null
        );
        // A group that did not take part in the match.
        assert_eq!(
            call(
                StringFn::RegexpExtract,
                &[s("b"), s("(a)?b"), Value::Int(1)]
            ),
            Value::Null
        );
    }

    #[test]
    fn split_index_keeps_empty_pieces() {
        let url = s("https://www.nexmark.com/xx/yy/zz/item.htm?query=1");
        let at = |i| call(StringFn::SplitIndex, &[url.clone(), s("/"), Value::Int(i)]);
        assert_eq!(at(0), s("https:"));
        assert_eq!(at(1), s(""));
        assert_eq!(at(3), s("xx"));
        assert_eq!(at(5), s("zz"));
        assert_eq!(at(7), Value::Null);
        assert_eq!(at(-1), Value::Null);
        let of = |x: &str, sep: &str, i| call(StringFn::SplitIndex, &[s(x), s(sep), Value::Int(i)]);
        assert_eq!(of("a//b/", "/", 1), s(""));
        assert_eq!(of("a//b/", "/", 3), s(""));
        assert_eq!(of("a::b", "::", 1), s("b"));
        assert_eq!(of("", "/", 0), Value::Null);
        assert_eq!(of("a b", "", 1), s("b"));
    }

    #[test]
    fn date_format_in_utc() {
        // 2015-07-15 00:00:00.000 UTC plus 13 h 4 min 5.678 s.
        let t = Value::Ts(1_436_918_400_000 + ((13 * 60 + 4) * 60 + 5) * 1000 + 678);
        let f = |p: &str| call(StringFn::DateFormat, &[t.clone(), s(p)]);
        assert_eq!(f("yyyy-MM-dd"), s("2015-07-15"));
        assert_eq!(f("HH:mm"), s("13:04"));
        assert_eq!(f("yy/M/d H:m:s.SSS"), s("15/7/15 13:4:5.678"));
        assert_eq!(f("yyyyMMdd'T'HH''"), s("20150715T13'"));
        assert_eq!(f("S"), s("6"));
        assert!(parse_date_format("EEE").is_err());
        assert!(parse_date_format("MMM").is_err());
        assert!(parse_date_format("'open").is_err());
        assert_eq!(
            call(StringFn::DateFormat, &[Value::Ts(-1), s("yyyy-MM-dd HH")]),
            s("1969-12-31 23")
        );
    }
}
