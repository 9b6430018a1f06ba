//! Byte encoding of rows for RocksDB keys and values, and the *logical size*
//! rule both backends report.
//!
//! The encoding is self-delimiting (a tag byte per value, strings with a
//! length prefix), so a state key's encoding is a prefix of the encodings of
//! all its map entries: a key's entries are contiguous and a prefix scan
//! finds them. The logical size of an entry is the encoded length of its
//! key plus its value, computed without encoding on the heap backend so the
//! two backends report identical byte counts.

use crate::value::{Row, Value};

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const INT: u8 = 3;
const DOUBLE: u8 = 4;
const STR: u8 = 5;
const TS: u8 = 6;

/// Encoded length of one value.
#[inline]
pub fn value_len(v: &Value) -> usize {
    match v {
        Value::Null | Value::Bool(_) => 1,
        Value::Int(_) | Value::Double(_) | Value::Ts(_) => 9,
        Value::Str(s) => 1 + varint_len(s.len() as u64) + s.len(),
    }
}

/// Encoded length of a row (the sum over its values).
#[inline]
pub fn row_len(row: &[Value]) -> usize {
    row.iter().map(value_len).sum()
}

fn varint_len(mut n: u64) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Appends the encoding of `row` to `out`.
pub fn encode_into(row: &[Value], out: &mut Vec<u8>) {
    for v in row {
        match v {
            Value::Null => out.push(NULL),
            Value::Bool(false) => out.push(FALSE),
            Value::Bool(true) => out.push(TRUE),
            Value::Int(i) => {
                out.push(INT);
                // Sign bit flipped: big-endian bytes then sort numerically.
                out.extend_from_slice(&((*i as u64) ^ (1 << 63)).to_be_bytes());
            }
            Value::Double(d) => {
                out.push(DOUBLE);
                out.extend_from_slice(&d.to_bits().to_be_bytes());
            }
            Value::Ts(t) => {
                out.push(TS);
                out.extend_from_slice(&((*t as u64) ^ (1 << 63)).to_be_bytes());
            }
            Value::Str(s) => {
                out.push(STR);
                put_varint(out, s.len() as u64);
                out.extend_from_slice(s.as_bytes());
            }
        }
    }
}

/// Decodes exactly `arity` values from the front of `bytes`; returns the row
/// and the number of bytes read, or `None` on corrupt input.
pub fn decode(bytes: &[u8], arity: usize) -> Option<(Row, usize)> {
    let mut row = Vec::with_capacity(arity);
    let pos = decode_into(bytes, arity, &mut row)?;
    Some((row, pos))
}

/// [`decode`] appending to `row` (a buffer reused from call to call);
/// returns the number of bytes read.
pub fn decode_into(bytes: &[u8], arity: usize, row: &mut Row) -> Option<usize> {
    row.reserve(arity);
    let mut pos = 0;
    for _ in 0..arity {
        row.push(decode_value(bytes, &mut pos)?);
    }
    Some(pos)
}

/// The value at `*pos`, moving `*pos` past it.
#[inline]
fn decode_value(bytes: &[u8], pos: &mut usize) -> Option<Value> {
    let tag = *bytes.get(*pos)?;
    *pos += 1;
    Some(match tag {
        NULL => Value::Null,
        FALSE => Value::Bool(false),
        TRUE => Value::Bool(true),
        INT => Value::Int((u64::from_be_bytes(fixed8(bytes, pos)?) ^ (1 << 63)) as i64),
        TS => Value::Ts((u64::from_be_bytes(fixed8(bytes, pos)?) ^ (1 << 63)) as i64),
        DOUBLE => Value::Double(f64::from_bits(u64::from_be_bytes(fixed8(bytes, pos)?))),
        STR => {
            let len = str_len(bytes, pos)?;
            let s = std::str::from_utf8(bytes.get(*pos..*pos + len)?).ok()?;
            *pos += len;
            Value::str(s)
        }
        _ => return None,
    })
}

#[inline]
fn fixed8(bytes: &[u8], pos: &mut usize) -> Option<[u8; 8]> {
    let b: [u8; 8] = bytes.get(*pos..*pos + 8)?.try_into().ok()?;
    *pos += 8;
    Some(b)
}

/// A string's varint length at `*pos`, moving `*pos` past it.
#[inline]
fn str_len(bytes: &[u8], pos: &mut usize) -> Option<usize> {
    let mut len: u64 = 0;
    let mut shift = 0;
    loop {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        len |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    Some(len as usize)
}

/// The number of values a whole buffer holds (`None` on corrupt input),
/// so a row is allocated once at its size.
fn count_values(bytes: &[u8]) -> Option<usize> {
    let mut n = 0;
    let mut pos = 0;
    while pos < bytes.len() {
        let tag = bytes[pos];
        pos += 1;
        match tag {
            NULL | FALSE | TRUE => {}
            INT | TS | DOUBLE => pos += 8,
            STR => {
                let len = str_len(bytes, &mut pos)?;
                pos += len;
            }
            _ => return None,
        }
        n += 1;
    }
    Some(n)
}

/// Decodes a whole buffer as one row of unknown arity.
pub fn decode_all(bytes: &[u8]) -> Option<Row> {
    let mut row = Vec::new();
    decode_all_into(bytes, &mut row)?;
    Some(row)
}

/// [`decode_all`] appending to `row` (a buffer reused from call to call).
pub fn decode_all_into(bytes: &[u8], row: &mut Row) -> Option<()> {
    row.reserve(count_values(bytes)?);
    let mut pos = 0;
    while pos < bytes.len() {
        row.push(decode_value(bytes, &mut pos)?);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_length_rule() {
        let row = vec![
            Value::Null,
            Value::Bool(true),
            Value::Int(-5),
            Value::Double(1.5),
            Value::Ts(-3),
            Value::str("héllo"),
        ];
        let mut buf = Vec::new();
        encode_into(&row, &mut buf);
        assert_eq!(buf.len(), row_len(&row));
        assert_eq!(decode(&buf, 6).unwrap(), (row.clone(), buf.len()));
        assert_eq!(decode_all(&buf).unwrap(), row);
    }

    #[test]
    fn integers_sort_numerically() {
        let enc = |i: i64| {
            let mut b = Vec::new();
            encode_into(&[Value::Int(i)], &mut b);
            b
        };
        assert!(enc(-3) < enc(-1) && enc(-1) < enc(0) && enc(0) < enc(7));
    }
}
