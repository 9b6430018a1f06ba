//! Reading CSV files for the `filesystem` connector.
//!
//! Semantics (Flink's `csv` format, plus the lab's `changelog-csv`):
//!
//! - Each non-blank line is one row; a blank line (including a trailing
//!   one) is skipped. There is no header unless [`CsvOptions::has_header`]
//!   is set (Flink's `'csv.ignore-first-line' = 'true'`), in which case the
//!   first line is skipped whatever it holds.
//! - Fields are separated by [`CsvOptions::delimiter`] (`,` by default) and
//!   may be double-quoted as in RFC 4180.
//! - With [`CsvOptions::changelog_column`] the first field of every line is
//!   the row kind (`+I`, `-U`, `+U`, `-D`, also `I`, `UB`, `UA`, `D`) and the
//!   columns follow; otherwise every row is an insert (`+I`).
//! - An empty field is NULL, for every type including `STRING`.
//! - `INT`, `BIGINT` and `DOUBLE` fields may be surrounded by whitespace,
//!   which is ignored (a field of only whitespace is NULL). `INT` must fit in
//!   32 bits. `DOUBLE` accepts what Rust's `f64` parser does (`1`, `2.5`,
//!   `-1e3`, `inf`, `NaN`). `BOOLEAN` is `true` or `false` in any case.
//!   `STRING` is taken verbatim (no trimming) and must be UTF-8.
//! - A line with the wrong number of fields or a field that does not parse
//!   is an error naming the file, the 1-based line, the column and the text;
//!   reading never panics on bad input.
//! - A quoted field whose closing quote never comes is an error naming the
//!   line where it opens (as Flink's `csv` format refuses it), not a field
//!   that silently takes the rest of the file.
//!
//! Speed: the file is read in large blocks, and one pass over each line's
//! bytes finds its end, its field ends and any byte that needs RFC 4180
//! handling; a line without a double quote or a stray `\r` (every line of
//! a typical file) has its fields parsed straight from the block, plain
//! integers inline. From the first line that holds a `"` or a `\r` other
//! than that of a CRLF terminator (or a file that starts with a UTF-8 byte
//! order mark), the rest of the file is read by the `csv` crate (quoting,
//! multi-line fields) into one reused `csv::ByteRecord`; both paths give the
//! same rows and the same messages. The only allocations per row are the
//! row `Vec` and the `STRING` values.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use operators::{Change, DataType, RowKind, Value};

use crate::error::DatasetError;

/// How a CSV file is laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvOptions {
    /// Skip the first line (`'csv.ignore-first-line' = 'true'`).
    pub has_header: bool,
    /// The first field of each line is the row kind (`changelog-csv`).
    pub changelog_column: bool,
    /// The field separator (`'csv.field-delimiter'`), one byte.
    pub delimiter: u8,
}

impl Default for CsvOptions {
    fn default() -> CsvOptions {
        CsvOptions {
            has_header: false,
            changelog_column: false,
            delimiter: b',',
        }
    }
}

/// The name used for the row-kind column in messages and written headers.
pub const OP_COLUMN: &str = "op";

/// Longest offending text quoted in full in an error message.
const MAX_QUOTED: usize = 80;

/// Bytes the fast path reads from the file at a time (tiny in unit tests,
/// so that lines straddle blocks).
const BLOCK: usize = if cfg!(test) { 7 } else { 1 << 20 };

const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Byte classes of the fast path's scan.
const PLAIN: u8 = 0;
const DELIMITER: u8 = 1;
const NEWLINE: u8 = 2;
/// `"` and `\r`: the line goes to the `csv` reader (unless the `\r` ends it).
const SPECIAL: u8 = 3;

fn byte_classes(delimiter: u8) -> [u8; 256] {
    let mut class = [PLAIN; 256];
    class[b'"' as usize] = SPECIAL;
    class[b'\r' as usize] = SPECIAL;
    class[b'\n' as usize] = NEWLINE;
    if class[delimiter as usize] == PLAIN {
        class[delimiter as usize] = DELIMITER;
    }
    class
}

/// A CSV file read as a stream of changes, batch by batch.
pub struct CsvSource {
    path: PathBuf,
    file: String,
    types: Vec<DataType>,
    column_names: Vec<String>,
    changelog_column: bool,
    delimiter: u8,
    skip_header: bool,
    done: bool,
    /// The fast path's file; `None` once the `csv` reader took over.
    input: Option<File>,
    /// Bytes read and not yet consumed: `buf[pos..]`.
    buf: Vec<u8>,
    pos: usize,
    /// The file offset of `buf[0]`.
    buf_offset: u64,
    /// The file has no bytes beyond `buf`.
    eof: bool,
    /// The 1-based physical line that starts at `buf[pos]`.
    line: u64,
    /// Where each field of the current line ends (offsets into `buf`).
    ends: Vec<usize>,
    /// What each byte means to the fast path's scan.
    class: [u8; 256],
    /// When every column is an integer (and there is no `op` column): the
    /// most digits each column takes on the fused path ([`CsvSource::int_line`]).
    int_digits: Option<Vec<usize>>,
    /// The `csv` reader of the rest of the file, once the fast path met a
    /// line it does not take.
    reader: Option<csv::Reader<File>>,
    /// The file offset where `reader` starts.
    reader_base: u64,
    /// The file's length when `reader` took over: a record that reaches it
    /// is checked for a quote left open ([`open_quote`]).
    reader_end: u64,
    record: csv::ByteRecord,
}

/// What the fast path found next.
enum Line {
    /// A non-blank line; its fields end at `ends`.
    Fields {
        start: usize,
        line: u64,
    },
    Blank,
    /// A line for the `csv` reader, starting at this file offset.
    Handover(u64),
    End,
}

impl std::fmt::Debug for CsvSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CsvSource")
            .field("file", &self.file)
            .field("types", &self.types)
            .field("column_names", &self.column_names)
            .field("changelog_column", &self.changelog_column)
            .field("done", &self.done)
            .finish()
    }
}

impl CsvSource {
    /// Opens `path` for reading rows of the given column types and names
    /// (names are used in error messages).
    pub fn open(
        path: &Path,
        types: Vec<DataType>,
        column_names: Vec<String>,
        options: CsvOptions,
    ) -> Result<CsvSource, DatasetError> {
        if types.len() != column_names.len() {
            return Err(DatasetError::SchemaMismatch {
                names: column_names.len(),
                types: types.len(),
            });
        }
        let file = File::open(path).map_err(|error| DatasetError::Io {
            action: "open",
            path: path.to_path_buf(),
            error,
        })?;
        let mut source = CsvSource {
            path: path.to_path_buf(),
            file: path.display().to_string(),
            types,
            column_names,
            changelog_column: options.changelog_column,
            delimiter: options.delimiter,
            skip_header: options.has_header,
            done: false,
            input: Some(file),
            buf: Vec::new(),
            pos: 0,
            buf_offset: 0,
            eof: false,
            line: 1,
            ends: Vec::new(),
            class: byte_classes(options.delimiter),
            int_digits: None,
            reader: None,
            reader_base: 0,
            reader_end: 0,
            record: csv::ByteRecord::new(),
        };
        if matches!(options.delimiter, b'"' | b'\r' | b'\n') {
            source.hand_over(0)?;
        }
        let plain_delimiter = !options.delimiter.is_ascii_digit() && options.delimiter != b'-';
        if plain_delimiter && !source.changelog_column {
            source.int_digits = source.types.iter().map(|&t| plain_int_digits(t)).collect();
        }
        Ok(source)
    }

    /// Appends up to `max` changes to `out` and returns how many; 0 means the
    /// file is exhausted (and stays 0 on later calls).
    pub fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> Result<usize, DatasetError> {
        let mut n = 0;
        while n < max && !self.done {
            if self.reader.is_some() {
                if self.read_csv_record()? {
                    out.push(self.parse_record()?);
                    n += 1;
                }
                continue;
            }
            if !self.skip_header && self.int_line(out) {
                n += 1;
                continue;
            }
            match self.next_line()? {
                Line::Fields { start, line } => {
                    if self.skip_header {
                        self.skip_header = false;
                        continue;
                    }
                    self.push_line(start, line, out)?;
                    n += 1;
                }
                Line::Blank => {}
                Line::Handover(offset) => self.hand_over(offset)?,
                Line::End => {
                    self.done = true;
                    self.input = None;
                }
            }
        }
        Ok(n)
    }

    /// The file name used in messages.
    pub fn file(&self) -> &str {
        &self.file
    }

    fn read_error(&self, error: std::io::Error) -> DatasetError {
        DatasetError::Io {
            action: "read",
            path: self.file.clone().into(),
            error,
        }
    }

    /// Reads up to [`BLOCK`] more bytes, first dropping the consumed ones.
    fn refill(&mut self) -> Result<(), DatasetError> {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.buf_offset += self.pos as u64;
            self.pos = 0;
        }
        let file = self.input.as_mut().expect("fast path has its file");
        match file.take(BLOCK as u64).read_to_end(&mut self.buf) {
            Ok(got) => {
                self.eof = got < BLOCK;
                Ok(())
            }
            Err(e) => Err(self.read_error(e)),
        }
    }

    /// The fused path for files of integers: parses the next line in one
    /// pass (digits with an optional leading `-`, as [`plain_int`] takes
    /// them, then the delimiter, or `\n` after the last field) and appends
    /// its change. Anything else (a blank line, `\r`, a sign or a byte it
    /// does not take, too many digits, a line not yet wholly in the
    /// buffer) consumes nothing and returns `false`, and the line goes the
    /// general way, errors and all.
    #[inline]
    fn int_line(&mut self, out: &mut Vec<Change>) -> bool {
        let Some(digits) = &self.int_digits else {
            return false;
        };
        let bytes = &self.buf[self.pos..];
        let last = digits.len() - 1;
        let mut row = Vec::with_capacity(digits.len());
        let mut i = 0;
        for (f, &max) in digits.iter().enumerate() {
            let negative = bytes.get(i) == Some(&b'-');
            i += usize::from(negative);
            let start = i;
            let mut acc: i64 = 0;
            while let Some(d) = bytes
                .get(i)
                .map(|b| b.wrapping_sub(b'0'))
                .filter(|&d| d <= 9)
            {
                // Wraps only past `max` digits, where the line is refused.
                acc = acc.wrapping_mul(10).wrapping_add(i64::from(d));
                i += 1;
            }
            let end = if f == last { b'\n' } else { self.delimiter };
            if i == start || i - start > max || bytes.get(i) != Some(&end) {
                return false;
            }
            i += 1;
            row.push(Value::Int(if negative { -acc } else { acc }));
        }
        self.pos += i;
        self.line += 1;
        out.push(Change {
            kind: RowKind::Insert,
            row,
        });
        true
    }

    /// Finds the next line; for a non-blank line the fast path takes,
    /// consumes it and fills `ends`. One pass over the bytes finds the line
    /// end, the field ends and any byte that needs the `csv` reader.
    fn next_line(&mut self) -> Result<Line, DatasetError> {
        self.ends.clear();
        // Bytes of the line scanned so far, and the `\r`s and `"`s among them.
        let mut len = 0;
        let mut specials = 0usize;
        let found_newline = loop {
            let rest = &self.buf[self.pos..];
            let mut newline = false;
            while let Some(&b) = rest.get(len) {
                match self.class[b as usize] {
                    PLAIN => {}
                    DELIMITER => self.ends.push(len),
                    NEWLINE => {
                        newline = true;
                        break;
                    }
                    _ => specials += 1,
                }
                len += 1;
            }
            if newline {
                break true;
            }
            if self.eof {
                if len == 0 {
                    return Ok(Line::End);
                }
                break false;
            }
            // `ends` and `len` count from `pos`, which a refill moves to 0.
            self.refill()?;
        };
        let start = self.pos;
        let mut end = start + len;
        if len > 0 && self.buf[end - 1] == b'\r' {
            end -= 1;
            specials -= 1;
        }
        let offset = self.buf_offset + start as u64;
        if specials > 0 || (offset == 0 && self.buf[start..end].starts_with(UTF8_BOM)) {
            return Ok(Line::Handover(offset));
        }
        for e in &mut self.ends {
            *e += start;
        }
        self.ends.push(end);
        let line = self.line;
        self.pos = start + len + usize::from(found_newline);
        self.line += 1;
        Ok(if start == end {
            Line::Blank
        } else {
            Line::Fields { start, line }
        })
    }

    /// Hands the file from `offset` on to the `csv` reader.
    fn hand_over(&mut self, offset: u64) -> Result<(), DatasetError> {
        let Some(mut file) = self.input.take() else {
            return Ok(());
        };
        // Start at the `\n` before the line: `csv` skips that blank line,
        // and it strips a byte order mark only at the start of the file.
        let base = offset.saturating_sub(1);
        file.seek(SeekFrom::Start(base))
            .map_err(|e| self.read_error(e))?;
        self.reader_end = file.metadata().map_err(|e| self.read_error(e))?.len();
        self.reader = Some(
            csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .delimiter(self.delimiter)
                .buffer_capacity(1 << 16)
                .from_reader(file),
        );
        self.reader_base = base;
        self.buf = Vec::new();
        self.pos = 0;
        Ok(())
    }

    /// Reads the next record with the `csv` reader; `false` when there is
    /// none to parse (the header, or the end of the file).
    fn read_csv_record(&mut self) -> Result<bool, DatasetError> {
        let reader = self.reader.as_mut().expect("csv reader is open");
        match reader.read_byte_record(&mut self.record) {
            Ok(true) => {}
            Ok(false) => {
                self.done = true;
                return Ok(false);
            }
            Err(e) => return Err(self.csv_error(e)),
        }
        // Only a quote left open makes a record run to the end of the file
        // (the `csv` crate ends it there without a word): check the last.
        let at = self.reader_base + reader.position().byte();
        if at >= self.reader_end {
            let start = self.reader_base + self.record.position().map_or(0, |p| p.byte());
            match open_quote(&self.path, start, self.delimiter) {
                Ok(Some(quote)) => {
                    return Err(DatasetError::MalformedCsv {
                        file: self.file.clone(),
                        line: physical_line(&self.path, quote).unwrap_or(0),
                        message: "unterminated quoted field: the '\"' that opens it is never \
                                  closed, so the rest of the file would be one field"
                            .to_string(),
                    })
                }
                Ok(None) => {}
                Err(e) => return Err(self.read_error(e)),
            }
        }
        if self.skip_header {
            self.skip_header = false;
            return Ok(false);
        }
        Ok(true)
    }

    /// The 1-based line where the current `csv` record starts.
    fn line(&self) -> u64 {
        self.record.position().map_or(0, |p| self.line_at(p))
    }

    /// The `csv` crate's own line counter skips blank lines and CRLF
    /// terminators, but its byte offset is exact up to the blank lines
    /// before a record; so on error the file is rescanned to count physical
    /// lines. Nothing of this runs on the happy path.
    fn line_at(&self, position: &csv::Position) -> u64 {
        physical_line(&self.path, self.reader_base + position.byte())
            .unwrap_or_else(|| position.line())
    }

    /// Appends the change of the line the fast path just consumed. Plain
    /// integers (digits and an optional `-`, few enough that they cannot
    /// overflow) are parsed inline; anything else, and every error, goes
    /// through [`CsvSource::parse_line`].
    #[inline]
    fn push_line(
        &self,
        start: usize,
        line: u64,
        out: &mut Vec<Change>,
    ) -> Result<(), DatasetError> {
        let n = self.types.len();
        if !self.changelog_column && self.ends.len() == n {
            let mut row = Vec::with_capacity(n);
            let mut from = start;
            for (ty, &to) in self.types.iter().zip(&self.ends) {
                let text = &self.buf[from..to];
                if let Some(max_digits) = plain_int_digits(*ty) {
                    match plain_int(text, max_digits) {
                        Some(i) => row.push(Value::Int(i)),
                        None => break,
                    }
                } else {
                    match parse_field(text, *ty) {
                        Ok(v) => row.push(v),
                        Err(_) => break,
                    }
                }
                from = to + 1;
            }
            if row.len() == n {
                out.push(Change {
                    kind: RowKind::Insert,
                    row,
                });
                return Ok(());
            }
        }
        out.push(self.parse_line(start, line)?);
        Ok(())
    }

    /// The change of the line the fast path just consumed, or its error.
    #[cold]
    #[inline(never)]
    fn parse_line(&self, start: usize, line: u64) -> Result<Change, DatasetError> {
        let ends = &self.ends;
        let buf = &self.buf;
        let field = |i: usize| {
            let from = if i == 0 { start } else { ends[i - 1] + 1 };
            &buf[from..ends[i]]
        };
        self.change_from(ends.len(), field, || line)
    }

    /// The change of the current `csv` record.
    fn parse_record(&self) -> Result<Change, DatasetError> {
        let record = &self.record;
        self.change_from(record.len(), |i| &record[i], || self.line())
    }

    /// Builds a change from a record's `count` fields; `line` is called
    /// only for an error message.
    #[inline]
    fn change_from<'t>(
        &self,
        count: usize,
        field: impl Fn(usize) -> &'t [u8],
        line: impl Fn() -> u64,
    ) -> Result<Change, DatasetError> {
        let offset = self.changelog_column as usize;
        let expected = self.types.len() + offset;
        if count != expected {
            return Err(DatasetError::FieldCount {
                file: self.file.clone(),
                line: line(),
                expected,
                found: count,
            });
        }
        let kind = if self.changelog_column {
            let text = field(0);
            std::str::from_utf8(text)
                .ok()
                .and_then(RowKind::parse)
                .ok_or_else(|| {
                    self.bad_value(OP_COLUMN, "a row kind (+I, -U, +U or -D)", text, line())
                })?
        } else {
            RowKind::Insert
        };
        let mut row = Vec::with_capacity(self.types.len());
        for (i, ty) in self.types.iter().enumerate() {
            let text = field(i + offset);
            match parse_field(text, *ty) {
                Ok(v) => row.push(v),
                Err(expected) => {
                    return Err(self.bad_value(&self.column_names[i], expected, text, line()))
                }
            }
        }
        Ok(Change { kind, row })
    }

    fn bad_value(&self, column: &str, expected: &str, text: &[u8], line: u64) -> DatasetError {
        DatasetError::BadValue {
            file: self.file.clone(),
            line,
            column: column.to_string(),
            expected: expected.to_string(),
            found: quote_text(text),
        }
    }

    fn csv_error(&self, e: csv::Error) -> DatasetError {
        let line = e
            .position()
            .map_or_else(|| self.line(), |p| self.line_at(p));
        let message = e.to_string();
        match e.into_kind() {
            csv::ErrorKind::Io(error) => self.read_error(error),
            _ => DatasetError::MalformedCsv {
                file: self.file.clone(),
                line,
                message,
            },
        }
    }
}

/// The 1-based line of the first byte at or after `byte` that is not a line
/// terminator, counting `\n`, `\r\n` and a lone `\r` as one terminator
/// each; `None` if the file cannot be read.
fn physical_line(path: &Path, byte: u64) -> Option<u64> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path).ok()?);
    let mut line = 1u64;
    let mut offset = 0u64;
    let mut after_cr = false;
    loop {
        let buf = reader.fill_buf().ok()?;
        if buf.is_empty() {
            return Some(line);
        }
        let len = buf.len();
        for &b in buf {
            match b {
                b'\n' => {
                    if !after_cr {
                        line += 1;
                    }
                    after_cr = false;
                }
                b'\r' => {
                    line += 1;
                    after_cr = true;
                }
                _ if offset >= byte => return Some(line),
                _ => after_cr = false,
            }
            offset += 1;
        }
        reader.consume(len);
    }
}

/// Where the quote that opens a field is, if the text from `start` (the
/// start of a record) to the end of the file ends inside that quoted
/// field. The states are those of the `csv` reader (RFC 4180 with `""`
/// inside quotes, a quote within an unquoted field taken as text, `\r`
/// and `\n` ending records).
fn open_quote(path: &Path, start: u64, delimiter: u8) -> std::io::Result<Option<u64>> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        FieldStart,
        Unquoted,
        Quoted,
        /// A `"` inside quotes: closes the field or, doubled, is text.
        QuoteInQuoted,
    }
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(start))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut state = State::FieldStart;
    let mut opened = 0;
    let mut offset = start;
    // The `csv` reader drops a byte order mark at the start of the file.
    if start == 0 && reader.fill_buf()?.starts_with(UTF8_BOM) {
        reader.consume(UTF8_BOM.len());
        offset = UTF8_BOM.len() as u64;
    }
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((state == State::Quoted).then_some(opened));
        }
        let len = buf.len();
        for (i, &b) in buf.iter().enumerate() {
            let ends_record = b == b'\n' || b == b'\r';
            state = match state {
                State::FieldStart | State::Unquoted | State::QuoteInQuoted
                    if ends_record || b == delimiter =>
                {
                    State::FieldStart
                }
                State::FieldStart if b == b'"' => {
                    opened = offset + i as u64;
                    State::Quoted
                }
                State::FieldStart | State::Unquoted => State::Unquoted,
                State::Quoted if b == b'"' => State::QuoteInQuoted,
                State::Quoted => State::Quoted,
                State::QuoteInQuoted if b == b'"' => State::Quoted,
                State::QuoteInQuoted => State::Unquoted,
            };
        }
        offset += len as u64;
        reader.consume(len);
    }
}

/// The offending text for a message: lossy UTF-8, cut after
/// [`MAX_QUOTED`] characters.
fn quote_text(text: &[u8]) -> String {
    let s = String::from_utf8_lossy(text);
    if s.chars().count() > MAX_QUOTED {
        let cut: String = s.chars().take(MAX_QUOTED).collect();
        format!("{cut}...")
    } else {
        s.into_owned()
    }
}

/// Parses one field; on failure returns what was expected.
pub(crate) fn parse_field(text: &[u8], ty: DataType) -> Result<Value, &'static str> {
    if text.is_empty() {
        return Ok(Value::Null);
    }
    if ty == DataType::String {
        return std::str::from_utf8(text)
            .map(Value::str)
            .map_err(|_| "STRING (UTF-8 text)");
    }
    let trimmed = text.trim_ascii();
    if trimmed.is_empty() {
        return Ok(Value::Null);
    }
    match ty {
        DataType::Int => match parse_i64(trimmed) {
            Some(i) if i32::try_from(i).is_ok() => Ok(Value::Int(i)),
            Some(_) => Err("INT (from -2147483648 to 2147483647)"),
            None => Err("INT"),
        },
        DataType::BigInt => parse_i64(trimmed).map(Value::Int).ok_or("BIGINT"),
        DataType::Double => std::str::from_utf8(trimmed)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .map(Value::Double)
            .ok_or("DOUBLE"),
        DataType::Boolean => {
            if trimmed.eq_ignore_ascii_case(b"true") {
                Ok(Value::Bool(true))
            } else if trimmed.eq_ignore_ascii_case(b"false") {
                Ok(Value::Bool(false))
            } else {
                Err("BOOLEAN (true or false)")
            }
        }
        DataType::Timestamp | DataType::TimestampLtz => std::str::from_utf8(trimmed)
            .ok()
            .and_then(operators::value::parse_timestamp)
            .map(Value::Ts)
            .ok_or("a timestamp (yyyy-MM-dd HH:mm:ss[.SSS])"),
        DataType::Interval => parse_i64(trimmed)
            .map(Value::Int)
            .ok_or("an interval in milliseconds"),
        DataType::String => unreachable!("handled above"),
    }
}

/// The most digits [`plain_int`] reads for a column of type `ty`: as many
/// as always fit it (`None`: not an integer column).
fn plain_int_digits(ty: DataType) -> Option<usize> {
    match ty {
        DataType::Int => Some(9),
        DataType::BigInt => Some(18),
        _ => None,
    }
}

/// An integer of 1 to `max_digits` ASCII digits with an optional leading
/// `-`, or `None` for anything else (which [`parse_field`] then handles).
/// With `max_digits` at most 18 the value cannot overflow.
#[inline(always)]
fn plain_int(text: &[u8], max_digits: usize) -> Option<i64> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > max_digits {
        return None;
    }
    let mut acc: i64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        acc = acc * 10 + d as i64;
    }
    Some(if negative { -acc } else { acc })
}

/// Parses an optionally signed decimal integer from ASCII digits; `None` on
/// any other byte or on overflow.
pub(crate) fn parse_i64(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    // Accumulate negatively so that i64::MIN parses without overflow.
    let mut acc: i64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        acc = acc.checked_mul(10)?.checked_sub(d as i64)?;
    }
    if negative {
        Some(acc)
    } else {
        acc.checked_neg()
    }
}

/// Reads a whole CSV file into memory.
pub fn read_all(
    path: &Path,
    types: Vec<DataType>,
    column_names: Vec<String>,
    options: CsvOptions,
) -> Result<Vec<Change>, DatasetError> {
    let mut source = CsvSource::open(path, types, column_names, options)?;
    let mut out = Vec::new();
    while source.next_batch(8192, &mut out)? > 0 {}
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_with(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        (dir, path)
    }

    fn names(ns: &[&str]) -> Vec<String> {
        ns.iter().map(|s| s.to_string()).collect()
    }

    fn read(
        text: &str,
        types: &[DataType],
        cols: &[&str],
        options: CsvOptions,
    ) -> Result<Vec<Change>, DatasetError> {
        let (_dir, path) = file_with("clicks.csv", text);
        read_all(&path, types.to_vec(), names(cols), options)
    }

    const TYPES: [DataType; 3] = [DataType::Int, DataType::String, DataType::Double];
    const COLS: [&str; 3] = ["user_id", "url", "score"];

    #[test]
    fn reads_typed_rows_as_inserts() {
        let rows = read(
            "1,a,2.5\n2,,\n 3 ,b c, -1e3 \n\n",
            &TYPES,
            &COLS,
            CsvOptions::default(),
        )
        .unwrap();
        assert_eq!(
            rows,
            vec![
                Change::insert(vec![Value::Int(1), Value::str("a"), Value::Double(2.5)]),
                Change::insert(vec![Value::Int(2), Value::Null, Value::Null]),
                Change::insert(vec![
                    Value::Int(3),
                    Value::str("b c"),
                    Value::Double(-1000.0)
                ]),
            ]
        );
    }

    #[test]
    fn header_is_skipped_when_asked() {
        let options = CsvOptions {
            has_header: true,
            ..CsvOptions::default()
        };
        let rows = read("user_id,url,score\n1,a,2\n", &TYPES, &COLS, options).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].row[0], Value::Int(1));
    }

    #[test]
    fn without_header_option_a_header_is_a_bad_value() {
        let err = read(
            "user_id,url,score\n1,a,2\n",
            &TYPES,
            &COLS,
            CsvOptions::default(),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.ends_with("clicks.csv line 1, column 'user_id': expected INT, found \"user_id\""),
            "{msg}"
        );
    }

    #[test]
    fn changelog_column_gives_row_kinds() {
        let options = CsvOptions {
            changelog_column: true,
            ..CsvOptions::default()
        };
        let rows = read(
            "+I,1,a,1.0\n-U,1,a,1.0\n+U,1,b,2.0\n-D,1,b,2.0\n",
            &TYPES,
            &COLS,
            options,
        )
        .unwrap();
        let kinds: Vec<RowKind> = rows.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, RowKind::ALL.to_vec());
    }

    #[test]
    fn bad_row_kind_names_line_and_op_column() {
        let options = CsvOptions {
            changelog_column: true,
            ..CsvOptions::default()
        };
        let err = read("+I,1,a,1.0\n*X,1,a,1.0\n", &TYPES, &COLS, options).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.ends_with("clicks.csv line 2, column 'op': expected a row kind (+I, -U, +U or -D), found \"*X\""),
            "{msg}"
        );
    }

    #[test]
    fn bad_int_names_file_line_and_column() {
        let text = "1,a,1\n2,b,2\n3,c,3\n4,d,4\n5,e,5\n6,f,6\nabc,g,7\n";
        let msg = read(text, &TYPES, &COLS, CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            msg.ends_with("clicks.csv line 7, column 'user_id': expected INT, found \"abc\""),
            "{msg}"
        );
    }

    #[test]
    fn int_out_of_range_is_named() {
        let msg = read("3000000000,a,1\n", &TYPES, &COLS, CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("line 1, column 'user_id': expected INT (from -2147483648 to 2147483647), found \"3000000000\""),
            "{msg}"
        );
    }

    #[test]
    fn bad_double_and_bigint_and_boolean() {
        let types = [DataType::BigInt, DataType::Double, DataType::Boolean];
        let cols = ["id", "amount", "flag"];
        let msg = |text: &str| {
            read(text, &types, &cols, CsvOptions::default())
                .unwrap_err()
                .to_string()
        };
        assert!(msg("1x,1,true\n").contains("line 1, column 'id': expected BIGINT, found \"1x\""));
        assert!(msg("1,2,true\n1,one,true\n")
            .contains("line 2, column 'amount': expected DOUBLE, found \"one\""));
        assert!(msg("1,2,yes\n")
            .contains("line 1, column 'flag': expected BOOLEAN (true or false), found \"yes\""));
        let ok = read(
            "9223372036854775807,1,TRUE\n-9223372036854775808,2,False\n",
            &types,
            &cols,
            CsvOptions::default(),
        )
        .unwrap();
        assert_eq!(
            ok[0].row,
            vec![Value::Int(i64::MAX), Value::Double(1.0), Value::Bool(true)]
        );
        assert_eq!(
            ok[1].row,
            vec![Value::Int(i64::MIN), Value::Double(2.0), Value::Bool(false)]
        );
        assert!(msg("9223372036854775808,1,true\n").contains("expected BIGINT"));
    }

    #[test]
    fn wrong_field_count_names_line() {
        let msg = read("1,a,1\n2,b,2\n3,c\n", &TYPES, &COLS, CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            msg.ends_with("clicks.csv line 3: expected 3 fields, found 2"),
            "{msg}"
        );
        let options = CsvOptions {
            changelog_column: true,
            ..CsvOptions::default()
        };
        let msg = read("1,a,1\n", &TYPES, &COLS, options)
            .unwrap_err()
            .to_string();
        assert!(
            msg.ends_with("clicks.csv line 1: expected 4 fields, found 3"),
            "{msg}"
        );
    }

    #[test]
    fn line_numbers_count_quoted_newlines_and_blank_lines() {
        let text = "1,\"multi\nline\",1\n\n2,b,x\n";
        let msg = read(text, &TYPES, &COLS, CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("line 4, column 'score'"), "{msg}");
    }

    #[test]
    fn line_numbers_count_crlf_and_lone_cr() {
        let msg = read(
            "1,a,1\r\n\r\n2,b,2\r\n3,c,x\r\n",
            &TYPES,
            &COLS,
            CsvOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(msg.contains("line 4, column 'score'"), "{msg}");
        let msg = read("1,a,1\r2,b,x\r", &TYPES, &COLS, CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("line 2, column 'score'"), "{msg}");
        let msg = read("\n\n1,a\n", &TYPES, &COLS, CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(msg.ends_with("line 3: expected 3 fields, found 2"), "{msg}");
        let msg = read(
            "\u{feff}1,a,1\nx,b,2\n",
            &TYPES,
            &COLS,
            CsvOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(msg.contains("line 2, column 'user_id'"), "{msg}");
    }

    #[test]
    fn invalid_utf8_string_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.csv");
        std::fs::write(&path, b"1,\xff\xfe,1\n").unwrap();
        let msg = read_all(&path, TYPES.to_vec(), names(&COLS), CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("line 1, column 'url': expected STRING (UTF-8 text)"),
            "{msg}"
        );
    }

    #[test]
    fn missing_file_names_path() {
        let msg = read_all(
            Path::new("/nonexistent/x.csv"),
            vec![],
            vec![],
            CsvOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(msg.starts_with("cannot open '/nonexistent/x.csv'"), "{msg}");
    }

    #[test]
    fn delimiter_and_crlf() {
        let options = CsvOptions {
            delimiter: b'\t',
            ..CsvOptions::default()
        };
        let rows = read("1\ta,b\t2\r\n", &TYPES, &COLS, options).unwrap();
        assert_eq!(
            rows[0].row,
            vec![Value::Int(1), Value::str("a,b"), Value::Double(2.0)]
        );
    }

    #[test]
    fn batches_respect_max() {
        let (_dir, path) = file_with("n.csv", "1\n2\n3\n4\n5\n");
        let mut src = CsvSource::open(
            &path,
            vec![DataType::Int],
            names(&["x"]),
            CsvOptions::default(),
        )
        .unwrap();
        let mut out = Vec::new();
        assert_eq!(src.next_batch(2, &mut out).unwrap(), 2);
        assert_eq!(src.next_batch(2, &mut out).unwrap(), 2);
        assert_eq!(src.next_batch(2, &mut out).unwrap(), 1);
        assert_eq!(src.next_batch(2, &mut out).unwrap(), 0);
        assert_eq!(src.next_batch(2, &mut out).unwrap(), 0);
        assert_eq!(out.len(), 5);
    }

    #[test]
    fn long_offending_text_is_cut() {
        let long = "x".repeat(200);
        let msg = read(
            &format!("{long},a,1\n"),
            &TYPES,
            &COLS,
            CsvOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            msg.contains(&format!("found \"{}...\"", "x".repeat(80))),
            "{msg}"
        );
    }

    /// Reads `text` with the fast path and with the `csv` reader alone:
    /// the rows, or the first error's message.
    fn both_paths(
        text: &[u8],
        types: &[DataType],
        cols: &[&str],
        options: &CsvOptions,
    ) -> [Result<Vec<Change>, String>; 2] {
        let dir = tempfile::tempdir().unwrap();
        both_paths_at(&dir.path().join("t.csv"), text, types, cols, options)
    }

    fn both_paths_at(
        path: &Path,
        text: &[u8],
        types: &[DataType],
        cols: &[&str],
        options: &CsvOptions,
    ) -> [Result<Vec<Change>, String>; 2] {
        std::fs::write(path, text).unwrap();
        let run = |csv_only: bool| {
            let mut src = CsvSource::open(path, types.to_vec(), names(cols), options.clone())
                .map_err(|e| e.to_string())?;
            if csv_only {
                src.hand_over(0).unwrap();
            }
            let mut out = Vec::new();
            loop {
                match src.next_batch(3, &mut out) {
                    Ok(0) => return Ok(out),
                    Ok(_) => {}
                    Err(e) => return Err(e.to_string()),
                }
            }
        };
        [run(false), run(true)]
    }

    /// Seeded indices below `n` (xorshift), for random test text.
    fn indices(mut seed: u64) -> impl FnMut(usize) -> usize {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        }
    }

    #[test]
    fn fast_path_agrees_with_csv_on_random_text() {
        const PIECES: [&str; 19] = [
            "1", "-7", "x", " ", ",", ",", "\n", "\n", "\r", "\r\n", "\"", "2.5", "\t", "\u{feff}",
            "99999", "+", "-", "true", "é",
        ];
        let mut next = indices(0x2545_f491_4f6c_dd1d);
        let schemas: [(&[DataType], &[&str]); 4] = [
            (
                &[DataType::BigInt, DataType::String, DataType::Double],
                &["a", "b", "c"],
            ),
            (&[DataType::Int], &["a"]),
            (&[DataType::String, DataType::Boolean], &["a", "b"]),
            // Integers only: the fused path.
            (&[DataType::BigInt, DataType::Int], &["a", "b"]),
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let mut agreed_ok = 0;
        for case in 0..2500 {
            let len = next(24);
            let text: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
            let (types, cols) = schemas[case % 4];
            let options = CsvOptions {
                has_header: case % 5 == 0,
                changelog_column: false,
                delimiter: if case % 7 == 0 { b'\t' } else { b',' },
            };
            let [fast, slow] = both_paths_at(&path, text.as_bytes(), types, cols, &options);
            assert_eq!(fast, slow, "{text:?} {options:?}");
            agreed_ok += fast.is_ok() as usize;
        }
        assert!(agreed_ok > 200, "{agreed_ok}");
    }

    /// Files of integer lines, most of them plain, some with what the fused
    /// path leaves to the general one (signs, too many digits, `\r\n`,
    /// blank lines, wrong field counts, a delimiter that is not a comma).
    #[test]
    fn fused_integer_path_agrees_with_csv() {
        const FIELDS: [&str; 12] = [
            "0",
            "7",
            "-3",
            "42",
            "123456789",
            "1234567890",
            "999999999999999999",
            "9999999999999999999",
            "-",
            "+1",
            " 5",
            "x",
        ];
        const ENDS: [&str; 4] = ["\n", "\n", "\r\n", "\n\n"];
        let mut next = indices(0x9e37_79b9_7f4a_7c15);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let types = [DataType::BigInt, DataType::Int];
        let mut agreed_ok = 0;
        for case in 0..600 {
            let delimiter = if case % 3 == 0 { b';' } else { b',' };
            let mut text = String::new();
            for _ in 0..next(12) {
                // Mostly plain fields (the first four), two per line.
                let field = |r: usize| FIELDS[if r < 8 { r % 4 } else { r % FIELDS.len() }];
                let fields = if next(10) == 0 { 1 + next(3) } else { 2 };
                for f in 0..fields {
                    if f > 0 {
                        text.push(delimiter as char);
                    }
                    text.push_str(field(next(12)));
                }
                text.push_str(ENDS[if next(4) == 0 { next(4) } else { 0 }]);
            }
            let options = CsvOptions {
                has_header: false,
                changelog_column: false,
                delimiter,
            };
            let [fast, slow] = both_paths_at(&path, text.as_bytes(), &types, &["a", "b"], &options);
            assert_eq!(fast, slow, "{text:?} {options:?}");
            agreed_ok += fast.is_ok() as usize;
        }
        assert!(agreed_ok > 100, "{agreed_ok}");
    }

    #[test]
    fn quoted_line_mid_file_hands_over_with_exact_lines() {
        let mut text = String::new();
        for i in 0..50 {
            text.push_str(&format!("{i},u{i},1.5\r\n"));
        }
        text.push_str("\n51,\"a,\nb\",2\n52,c,3\n\n54,d,oops\n");
        let [fast, slow] = both_paths(text.as_bytes(), &TYPES, &COLS, &CsvOptions::default());
        assert_eq!(fast, slow);
        let msg = fast.unwrap_err();
        assert!(
            msg.ends_with("t.csv line 56, column 'score': expected DOUBLE, found \"oops\""),
            "{msg}"
        );
        let text = text.replace("oops", "4");
        let [fast, slow] = both_paths(text.as_bytes(), &TYPES, &COLS, &CsvOptions::default());
        let rows = fast.unwrap();
        assert_eq!(Ok(rows.clone()), slow);
        assert_eq!(rows.len(), 53);
        assert_eq!(rows[50].row[1], Value::str("a,\nb"));
        // A byte order mark only counts at the start of the file.
        let text = "1,a,1\n\u{feff}2,\"b\",2\n";
        let [fast, slow] = both_paths(text.as_bytes(), &TYPES, &COLS, &CsvOptions::default());
        assert_eq!(fast, slow);
        assert!(fast.unwrap_err().contains("line 2, column 'user_id'"));
    }

    #[test]
    fn long_lines_span_blocks() {
        let long = "y".repeat(5000);
        let text = format!("1,{long},2\n2,b,3\n3,{long},4");
        let [fast, slow] = both_paths(text.as_bytes(), &TYPES, &COLS, &CsvOptions::default());
        let rows = fast.unwrap();
        assert_eq!(Ok(rows.clone()), slow);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].row[1], Value::str(&long));
        assert_eq!(rows[2].row[2], Value::Double(4.0));
    }

    #[test]
    fn an_unterminated_quote_is_an_error_with_its_line() {
        let cases: [(&str, &[DataType], u64); 6] = [
            // The general path: a STRING column.
            (
                "1,a\n2,\"b\n3,c\n4,d\n",
                &[DataType::Int, DataType::String],
                2,
            ),
            // The fused path of integer files hands the line over too.
            (
                "1,2\n3,\"4\n5,6\n",
                &[DataType::BigInt, DataType::BigInt],
                2,
            ),
            // At the very end, without a newline.
            ("1,a\n2,\"abc", &[DataType::Int, DataType::String], 2),
            // A doubled quote inside quotes is text: still open.
            ("1,\"a\"\"\n", &[DataType::Int, DataType::String], 1),
            // After a quoted field that spans lines and is closed.
            ("1,\"x\ny\"\n2,\"z\n", &[DataType::Int, DataType::String], 3),
            // A header line with the quote (skipped or not, it is read).
            ("\"k,v\n1,2\n", &[DataType::BigInt, DataType::BigInt], 1),
        ];
        for (text, types, line) in cases {
            for header in [false, true] {
                let options = CsvOptions {
                    has_header: header,
                    ..CsvOptions::default()
                };
                let [fast, slow] = both_paths(text.as_bytes(), types, &["a", "b"], &options);
                assert_eq!(fast, slow, "{text:?}");
                let e = fast.expect_err(text);
                assert!(
                    e.ends_with(&format!(
                        "t.csv line {line}: malformed CSV: unterminated quoted field: the '\"' \
                         that opens it is never closed, so the rest of the file would be one field"
                    )),
                    "{text:?}: {e}"
                );
            }
        }
        // Closed quotes, doubled quotes and quotes inside unquoted fields
        // read as before.
        let ok = "\u{feff}1,\"a\nb\"\n2,\"c\"\"d\"\n3,e\"f\n4,\"g\"h\n5,\"\"";
        let [fast, slow] = both_paths(
            ok.as_bytes(),
            &[DataType::Int, DataType::String],
            &["a", "b"],
            &CsvOptions::default(),
        );
        assert_eq!(fast, slow);
        let rows = fast.unwrap();
        assert_eq!(rows.len(), 5, "{rows:?}");
        assert_eq!(rows[0].row[1], Value::str("a\nb"));
        assert_eq!(rows[1].row[1], Value::str("c\"d"));
        assert_eq!(rows[3].row[1], Value::str("gh"));
    }

    #[test]
    fn parse_i64_edges() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"+7"), Some(7));
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(parse_i64(b""), None);
        assert_eq!(parse_i64(b"1 2"), None);
    }
}
