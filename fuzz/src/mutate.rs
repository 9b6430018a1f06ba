//! Mutations of text, as a hostile user makes them: tokens deleted,
//! duplicated, swapped, replaced or inserted from a dictionary, numbers
//! and strings swapped for extreme ones, long names, unicode and random
//! bytes, truncation, deep nesting and long chains, and splices from
//! another input.

use crate::rng::Rng;

/// Numbers at the edges: of the integer types, of `f64`, of what a
/// parser accepts.
pub const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "255",
    "256",
    "1024",
    "65536",
    "1048576",
    "1048577",
    "2147483647",
    "2147483648",
    "-2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999",
    "1e308",
    "1e309",
    "-1e308",
    "1.7976931348623157e308",
    "5e-324",
    "1e-400",
    "0.5",
    "-0.0",
    "3.4e38",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "0x10",
    "1_000",
    "1e3",
    "00000000000000000000001",
    "\u{0661}\u{0662}",
];

/// Strings at the edges: empty, quotes, escapes, control characters,
/// unicode, templates, units.
pub const STRINGS: &[&str] = &[
    "",
    "'",
    "''",
    "\"",
    "\\",
    "\\t",
    "\0",
    "\n",
    "\r\n",
    "\u{feff}",
    "é",
    "🙂",
    "\u{202e}",
    "ß",
    "%s%n",
    "${x}",
    "${",
    "}",
    "null",
    "NULL",
    "true",
    "1 s",
    "0 ms",
    "99999999999 d",
    "-1 s",
    "1 us",
    "1h",
    ",",
    ";",
    "\t",
];

/// The largest input a mutation makes, in bytes.
pub const MAX_INPUT: usize = 512 * 1024;

/// Text cut into tokens: words (letters, digits, `_`, `.`), quoted
/// strings, whitespace runs, and single other characters.
pub fn tokens(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let c = b[i];
        if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
        } else if c == b'\'' || c == b'"' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += 1;
            }
            i = (i + 1).min(b.len());
        } else if c.is_ascii_whitespace() {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
        } else {
            i += 1;
        }
        // Never split a UTF-8 character.
        while i < b.len() && !text.is_char_boundary(i) {
            i += 1;
        }
        out.push(&text[start..i]);
    }
    out
}

/// A text mutator with its dictionary (tokens of the input's language)
/// and the chains it may grow (`" + a"`, `" AND x IS NULL"`).
pub struct Mutator<'a> {
    pub dictionary: &'a [&'a str],
    pub chains: &'a [&'a str],
    /// Donors for splices (other inputs of the category).
    pub donors: &'a [&'a str],
}

impl Mutator<'_> {
    /// `text` with 1 to a few mutations.
    pub fn mutate(&self, rng: &mut Rng, text: &str) -> String {
        let mut s = text.to_string();
        let n = rng.small_or_large(6);
        for _ in 0..n {
            let next = self.once(rng, &s);
            // Inputs stay under a size a file of a user could have.
            if next.len() <= MAX_INPUT {
                s = next;
            }
        }
        s
    }

    fn once(&self, rng: &mut Rng, text: &str) -> String {
        let toks = tokens(text);
        if toks.is_empty() {
            return self.pick_token(rng);
        }
        let mut t: Vec<String> = toks.iter().map(|s| s.to_string()).collect();
        let i = rng.below(t.len());
        let span = rng.small_or_large(t.len() - i).min(t.len() - i);
        match rng.below(15) {
            0 => {
                t.drain(i..i + span);
            }
            1 => {
                let times = rng.small_or_large(3000);
                let piece: Vec<String> = t[i..i + span].to_vec();
                for _ in 0..times.min(200_000 / (piece.len() + 1)) {
                    t.splice(i..i, piece.iter().cloned());
                }
            }
            2 => {
                let j = rng.below(t.len());
                t.swap(i, j);
            }
            3 | 4 => t[i] = self.pick_token(rng),
            5 => {
                let tok = self.pick_token(rng);
                t.insert(i, format!(" {tok} "));
            }
            6 => {
                // A number swapped for an extreme one.
                match t
                    .iter()
                    .position(|x| x.starts_with(|c: char| c.is_ascii_digit()))
                {
                    Some(_) => {
                        let nums: Vec<usize> = (0..t.len())
                            .filter(|&k| t[k].starts_with(|c: char| c.is_ascii_digit()))
                            .collect();
                        let k = *rng.pick(&nums);
                        t[k] = rng.pick(NUMBERS).to_string();
                    }
                    None => t.insert(i, rng.pick(NUMBERS).to_string()),
                }
            }
            7 => {
                // A quoted string's content swapped.
                let quoted: Vec<usize> = (0..t.len())
                    .filter(|&k| {
                        t[k].len() >= 2 && (t[k].starts_with('\'') || t[k].starts_with('"'))
                    })
                    .collect();
                if let Some(&k) = quoted.get(rng.below(quoted.len().max(1))) {
                    let q = &t[k][..1];
                    t[k] = format!("{q}{}{q}", self.hostile_string(rng));
                }
            }
            8 => {
                // A long name or value.
                let len = *rng.pick(&[300, 5_000, 100_000]);
                let c = *rng.pick(&["a", "x1", "é", "🙂"]);
                t[i] = c.repeat(len / c.len());
            }
            9 => {
                let at = rng.below(text.len() + 1);
                let mut at = at;
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                return text[..at].to_string();
            }
            10 => {
                let junk: String = (0..rng.range(1, 8))
                    .map(|_| match rng.below(4) {
                        0 => char::from(rng.below(32) as u8),
                        1 => char::from_u32(rng.range(0x80, 0x2FFF) as u32).unwrap_or('?'),
                        2 => char::from(rng.range(33, 126) as u8),
                        _ => *rng.pick(&['\u{1F600}', '\u{FFFD}', '\u{0}', '\u{7F}']),
                    })
                    .collect();
                t.insert(i, junk);
            }
            11 => {
                // Nesting: the span wrapped in many parentheses.
                let depth = rng.small_or_large(5000);
                t.insert(i + span, ")".repeat(depth));
                t.insert(i, "(".repeat(depth));
            }
            12 => {
                if !self.donors.is_empty() {
                    let donor = tokens(rng.pick::<&str>(self.donors));
                    if !donor.is_empty() {
                        let d = rng.below(donor.len());
                        let len = rng.small_or_large(donor.len() - d).min(donor.len() - d);
                        let piece: Vec<String> =
                            donor[d..d + len].iter().map(|s| s.to_string()).collect();
                        t.splice(i..i + span.min(1), piece);
                    }
                }
            }
            13 => {
                // A chain: one link repeated after the token.
                if !self.chains.is_empty() {
                    let link = *rng.pick(self.chains);
                    let times = rng.small_or_large(5000);
                    t.insert(i + 1, link.repeat(times));
                }
            }
            _ => t[i] = rng.pick(NUMBERS).to_string(),
        }
        t.concat()
    }

    fn pick_token(&self, rng: &mut Rng) -> String {
        if self.dictionary.is_empty() || rng.chance(0.15) {
            rng.pick(NUMBERS).to_string()
        } else {
            rng.pick(self.dictionary).to_string()
        }
    }

    fn hostile_string(&self, rng: &mut Rng) -> String {
        match rng.below(4) {
            0 => rng.pick(NUMBERS).to_string(),
            1 => rng.pick(STRINGS).repeat(rng.small_or_large(1000)),
            2 => self.pick_token(rng),
            _ => rng.pick(STRINGS).to_string(),
        }
    }
}

/// `bytes` with a few bytes flipped, inserted or removed (input that need
/// not be UTF-8, such as a CSV file).
pub fn mutate_bytes(rng: &mut Rng, bytes: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for _ in 0..rng.small_or_large(8) {
        let i = rng.below(b.len() + 1);
        match rng.below(4) {
            0 if i < b.len() => b[i] ^= 1 << rng.below(8),
            1 => b.insert(i, rng.below(256) as u8),
            2 if i < b.len() => {
                b.remove(i);
            }
            _ => b.insert(i, *rng.pick(&[b'"', b',', b'\n', b'\r', 0xff, 0xc3, b'\\'])),
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_cover_the_text() {
        let text = "SELECT a, 'x y' FROM t WHERE é = \"q\" -- 🙂\n";
        assert_eq!(tokens(text).concat(), text);
        assert!(tokens(text).contains(&"'x y'"));
    }

    #[test]
    fn mutations_are_reproducible_and_utf8() {
        let m = Mutator {
            dictionary: &["SELECT", "+", "("],
            chains: &[" + a"],
            donors: &["INSERT INTO o SELECT 1"],
        };
        for i in 0..200 {
            let a = m.mutate(
                &mut Rng::for_input(1, 0, i),
                "SELECT a + 1 FROM t WHERE b = 'x'",
            );
            let b = m.mutate(
                &mut Rng::for_input(1, 0, i),
                "SELECT a + 1 FROM t WHERE b = 'x'",
            );
            assert_eq!(a, b);
        }
    }
}
