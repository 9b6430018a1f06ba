//! The checkpoint file: a header (magic, format version, payload length,
//! checksum) and a payload of little-endian integers, length-prefixed
//! strings and rows in the state codec ([`crate::state::codec`]).

use super::image::{NativeFile, NativeState, OperatorImage, StateImage};
use crate::state::codec::{decode_all, encode_into};
use crate::value::Row;
use std::collections::BTreeMap;

/// The magic is `JLCKPT\0` and a version byte: 3 adds the RocksDB files
/// of incremental checkpoints, 4 whether a state has a TTL (a bit beside
/// the map bit); version 2 and 3 files still read.
const MAGIC: &[u8; 7] = b"JLCKPT\0";
const VERSION: u8 = 4;
/// The bits of a state's kind word.
const MAP: u64 = 1;
const TTL: u64 = 2;
const HEADER: usize = 8 + 8 + 8;

/// What a sink keeps between checkpoints.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SinkImage {
    /// Rows received by kind (`+I`, `-U`, `+U`, `-D`).
    pub counts: [u64; 4],
    /// The materialised result: each row with its multiplicity (retract
    /// sinks) or 1 (upsert sinks), in canonical order.
    pub rows: Vec<(Row, i64)>,
    /// Bytes of each of its output files committed by this checkpoint.
    pub committed: Vec<u64>,
    /// The sink's table and row type: a savepoint restores a sink's result
    /// and files only into a sink of the same schema.
    pub schema: String,
}

/// One completed checkpoint of a job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Checkpoint {
    /// 1 for the first checkpoint of a run, then counting up (a resumed
    /// run goes on from the one it resumed).
    pub id: u64,
    /// Rows read per source, in source order.
    pub sources: Vec<u64>,
    /// Each source's name (its table), in source order: what a savepoint
    /// matches a changed job's sources by.
    pub source_names: Vec<String>,
    /// The executor's clocks and watermarks, as it lays them out.
    pub runtime: Vec<i64>,
    /// Every stateful operator's state, by operator uid.
    pub operators: BTreeMap<String, OperatorImage>,
    /// Every sink's state, in sink order.
    pub sinks: Vec<SinkImage>,
    /// An incremental checkpoint's RocksDB files, holding the states
    /// recorded by reference ([`StateImage::native`]); empty otherwise.
    pub files: Vec<NativeFile>,
}

/// A 64-bit FNV-1a checksum of the payload.
fn checksum(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

struct W(Vec<u8>);

impl W {
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn row(&mut self, r: &[crate::value::Value]) {
        let mut b = Vec::new();
        encode_into(r, &mut b);
        self.bytes(&b);
    }
}

struct R<'a> {
    b: &'a [u8],
    at: usize,
}

impl R<'_> {
    fn u64(&mut self) -> Result<u64, String> {
        let end = self.at + 8;
        let s = self
            .b
            .get(self.at..end)
            .ok_or_else(|| format!("payload ends at byte {} inside a number", self.at))?;
        self.at = end;
        Ok(u64::from_le_bytes(s.try_into().expect("eight bytes")))
    }
    /// A count of items that each take at least one byte: never more than
    /// the bytes left, so a corrupt count cannot make us allocate.
    fn count(&mut self) -> Result<usize, String> {
        let n = self.u64()?;
        let left = (self.b.len() - self.at) as u64;
        if n > left {
            return Err(format!(
                "a count of {n} at byte {} exceeds the payload",
                self.at
            ));
        }
        Ok(n as usize)
    }
    fn bytes(&mut self) -> Result<&[u8], String> {
        let n = self.count()?;
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn string(&mut self) -> Result<String, String> {
        let at = self.at;
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| format!("bad text at byte {at}"))
    }
    fn row(&mut self) -> Result<Row, String> {
        let at = self.at;
        decode_all(self.bytes()?).ok_or_else(|| format!("a row at byte {at} does not decode"))
    }
}

impl Checkpoint {
    /// The file's bytes: header and payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = W(Vec::new());
        w.u64(self.id);
        w.u64(self.sources.len() as u64);
        for &s in &self.sources {
            w.u64(s);
        }
        w.u64(self.source_names.len() as u64);
        for n in &self.source_names {
            w.bytes(n.as_bytes());
        }
        w.u64(self.runtime.len() as u64);
        for &r in &self.runtime {
            w.u64(r as u64);
        }
        w.u64(self.operators.len() as u64);
        for (uid, op) in &self.operators {
            w.bytes(uid.as_bytes());
            w.bytes(op.schema.as_bytes());
            w.u64(op.states.len() as u64);
            for (name, s) in &op.states {
                w.bytes(name.as_bytes());
                w.u64(if s.map { MAP } else { 0 } | if s.ttl { TTL } else { 0 });
                match &s.native {
                    Some(n) => {
                        w.u64(1);
                        w.bytes(n.column_family.as_bytes());
                        w.u64(n.ukey_arity as u64);
                    }
                    None => w.u64(0),
                }
                w.u64(s.entries.len() as u64);
                for (k, u, v) in s.entries.values() {
                    w.row(k);
                    w.row(u);
                    w.row(v);
                }
            }
        }
        w.u64(self.sinks.len() as u64);
        for s in &self.sinks {
            for c in s.counts {
                w.u64(c);
            }
            w.u64(s.rows.len() as u64);
            for (r, n) in &s.rows {
                w.row(r);
                w.u64(*n as u64);
            }
            w.u64(s.committed.len() as u64);
            for &c in &s.committed {
                w.u64(c);
            }
            w.bytes(s.schema.as_bytes());
        }
        w.u64(self.files.len() as u64);
        for f in &self.files {
            w.bytes(f.name.as_bytes());
            w.bytes(f.stored.as_bytes());
            w.u64(f.size);
        }
        let payload = w.0;
        let mut out = Vec::with_capacity(HEADER + payload.len());
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&checksum(&payload).to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    /// Reads a file's bytes back; the error says what is wrong (not a
    /// checkpoint, truncated, checksum mismatch, a field that does not read).
    pub fn decode(bytes: &[u8]) -> Result<Checkpoint, String> {
        if bytes.len() < HEADER || &bytes[..7] != MAGIC || !matches!(bytes[7], 2..=VERSION) {
            return Err("not a checkpoint file of this version (bad header)".into());
        }
        let version = bytes[7];
        let len = u64::from_le_bytes(bytes[8..16].try_into().expect("eight bytes"));
        let sum = u64::from_le_bytes(bytes[16..24].try_into().expect("eight bytes"));
        let payload = &bytes[HEADER..];
        if payload.len() as u64 != len {
            return Err(format!(
                "truncated or extended: the header says {len} payload bytes, the file has {}",
                payload.len()
            ));
        }
        if checksum(payload) != sum {
            return Err("corrupt: the checksum does not match the contents".into());
        }
        let mut r = R { b: payload, at: 0 };
        let mut c = Checkpoint {
            id: r.u64()?,
            ..Checkpoint::default()
        };
        for _ in 0..r.count()? {
            c.sources.push(r.u64()?);
        }
        for _ in 0..r.count()? {
            c.source_names.push(r.string()?);
        }
        for _ in 0..r.count()? {
            c.runtime.push(r.u64()? as i64);
        }
        for _ in 0..r.count()? {
            let uid = r.string()?;
            let mut op = OperatorImage {
                schema: r.string()?,
                ..OperatorImage::default()
            };
            for _ in 0..r.count()? {
                let name = r.string()?;
                let kind = r.u64()?;
                let mut s = StateImage {
                    map: kind & MAP != 0,
                    ttl: kind & TTL != 0,
                    ..StateImage::default()
                };
                if version >= 3 && r.u64()? != 0 {
                    s.native = Some(NativeState {
                        column_family: r.string()?,
                        ukey_arity: r.u64()? as usize,
                    });
                }
                for _ in 0..r.count()? {
                    let (k, u, v) = (r.row()?, r.row()?, r.row()?);
                    let mut key = Vec::new();
                    encode_into(&k, &mut key);
                    encode_into(&u, &mut key);
                    s.entries.insert(key, (k, u, v));
                }
                op.states.insert(name, s);
            }
            c.operators.insert(uid, op);
        }
        for _ in 0..r.count()? {
            let mut s = SinkImage::default();
            for c in &mut s.counts {
                *c = r.u64()?;
            }
            for _ in 0..r.count()? {
                s.rows.push((r.row()?, r.u64()? as i64));
            }
            for _ in 0..r.count()? {
                s.committed.push(r.u64()?);
            }
            s.schema = r.string()?;
            c.sinks.push(s);
        }
        if version >= 3 {
            for _ in 0..r.count()? {
                c.files.push(NativeFile {
                    name: r.string()?,
                    stored: r.string()?,
                    size: r.u64()?,
                });
            }
        }
        if r.at != payload.len() {
            return Err(format!(
                "{} bytes after the last field",
                payload.len() - r.at
            ));
        }
        Ok(c)
    }
}
