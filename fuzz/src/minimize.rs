//! Minimising a failing input: parts of its files (lines, then tokens,
//! then characters) are removed while the input still fails the same way
//! (the same kind, and a panic at the same place), each try in a child
//! process. Bounded in tries and time: a case that is smaller is better,
//! not required.

use crate::case::Input;
use crate::mutate::tokens;
use crate::parent::{replay, Options};
use std::time::{Duration, Instant};

const MAX_TRIES: usize = 400;
const MAX_TIME: Duration = Duration::from_secs(120);

struct Trials<'a> {
    opts: Options,
    signature: &'a str,
    tries: usize,
    end: Instant,
}

impl Trials<'_> {
    fn exhausted(&self) -> bool {
        self.tries >= MAX_TRIES || Instant::now() >= self.end
    }

    fn fails(&mut self, candidate: &Input) -> bool {
        self.tries += 1;
        let dir = self
            .opts
            .work
            .join("minimize")
            .join(candidate.category.name())
            .join("case");
        let _ = std::fs::remove_dir_all(&dir);
        if candidate.write_to(&dir).is_err() {
            return false;
        }
        let r = replay(&self.opts, vec![dir]);
        r.failures.iter().any(|f| f.signature() == self.signature)
    }
}

fn split(bytes: &[u8], level: usize) -> Vec<Vec<u8>> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return bytes.chunks(1).map(|c| c.to_vec()).collect();
    };
    match level {
        0 => text
            .split_inclusive('\n')
            .map(|l| l.as_bytes().to_vec())
            .collect(),
        1 => tokens(text).iter().map(|t| t.as_bytes().to_vec()).collect(),
        _ => text.chars().map(|c| c.to_string().into_bytes()).collect(),
    }
}

/// The smallest variant of `input` found that still fails with
/// `signature`.
pub fn minimize(opts: &Options, input: &Input, signature: &str) -> Input {
    let mut o = opts.clone();
    o.jobs = 1;
    o.progress = false;
    o.minimize = false;
    let mut t = Trials {
        opts: o,
        signature,
        tries: 0,
        end: Instant::now() + MAX_TIME,
    };
    // A hang costs its whole budget per try: only a few.
    if signature == "hang" {
        t.tries = MAX_TRIES - 8;
    }
    let mut best = input.clone();
    for f in 0..best.files.len() {
        for level in 0..3 {
            let mut units = split(&best.files[f].1, level);
            if level == 2 && units.len() > 4000 {
                continue;
            }
            let mut chunk = (units.len() / 2).max(1);
            loop {
                let mut i = 0;
                while i < units.len() && !t.exhausted() {
                    let mut candidate = best.clone();
                    let kept: Vec<u8> = units[..i]
                        .iter()
                        .chain(&units[(i + chunk).min(units.len())..])
                        .flatten()
                        .copied()
                        .collect();
                    candidate.files[f].1 = kept;
                    if t.fails(&candidate) {
                        best = candidate;
                        units.drain(i..(i + chunk).min(units.len()));
                    } else {
                        i += chunk;
                    }
                }
                if chunk == 1 || t.exhausted() {
                    break;
                }
                chunk /= 2;
            }
        }
    }
    best
}
