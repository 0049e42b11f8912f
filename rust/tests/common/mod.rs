//! Shared by the integration tests: a strict JSON reader (RFC 8259: one
//! value and nothing but white space after it, number and literal grammar,
//! escapes and surrogate pairs, no raw control characters, valid UTF-8,
//! no duplicate keys), trace loading, the project's tools when the build
//! tree is at hand, temporary directories and a seeded generator.
#![allow(dead_code)]

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A parsed JSON value.  Numbers keep their text so that times can be
/// compared exactly; objects keep their keys in file order.
#[derive(Clone, Debug, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

type PResult<T> = Result<T, String>;

impl<'a> Parser<'a> {
    fn err<T>(&self, what: &str) -> PResult<T> {
        Err(format!("{} at byte {}", what, self.i))
    }
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn lit(&mut self, word: &str, v: J) -> PResult<J> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            self.err("bad literal")
        }
    }
    fn value(&mut self) -> PResult<J> {
        self.ws();
        match self.peek() {
            None => self.err("unexpected end"),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(J::Str),
            Some(b't') => self.lit("true", J::Bool(true)),
            Some(b'f') => self.lit("false", J::Bool(false)),
            Some(b'n') => self.lit("null", J::Null),
            Some(b'-') | Some(b'0'..=b'9') => self.number(),
            Some(_) => self.err("unexpected character"),
        }
    }
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > 200 {
            return self.err("nested too deep");
        }
        self.i += 1;
        Ok(())
    }
    fn object(&mut self) -> PResult<J> {
        self.enter()?;
        let mut fields: Vec<(String, J)> = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            self.depth -= 1;
            return Ok(J::Obj(fields));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return self.err("expected a key");
            }
            let k = self.string()?;
            if fields.iter().any(|(f, _)| *f == k) {
                return self.err(&format!("duplicate key {:?}", k));
            }
            self.ws();
            if self.peek() != Some(b':') {
                return self.err("expected ':'");
            }
            self.i += 1;
            let v = self.value()?;
            fields.push((k, v));
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(J::Obj(fields));
                }
                _ => return self.err("expected ',' or '}'"),
            }
        }
    }
    fn array(&mut self) -> PResult<J> {
        self.enter()?;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            self.depth -= 1;
            return Ok(J::Arr(items));
        }
        loop {
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(J::Arr(items));
                }
                _ => return self.err("expected ',' or ']'"),
            }
        }
    }
    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        self.i - start
    }
    fn number(&mut self) -> PResult<J> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.i += 1;
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return self.err("leading zero");
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return self.err("bad number"),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return self.err("no digit after '.'");
            }
        }
        if matches!(self.peek(), Some(b'e') | Some(b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+') | Some(b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return self.err("no digit in exponent");
            }
        }
        Ok(J::Num(
            String::from_utf8(self.s[start..self.i].to_vec()).unwrap(),
        ))
    }
    fn hex4(&mut self) -> PResult<u32> {
        if self.i + 4 > self.s.len() {
            return self.err("short \\u escape");
        }
        let h = std::str::from_utf8(&self.s[self.i..self.i + 4]).map_err(|e| e.to_string())?;
        if !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return self.err("bad \\u escape");
        }
        self.i += 4;
        Ok(u32::from_str_radix(h, 16).unwrap())
    }
    fn string(&mut self) -> PResult<String> {
        self.i += 1; // the quote
        let mut out = String::new();
        loop {
            let start = self.i;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            // The whole input was checked as UTF-8, and these bounds sit
            // on ASCII bytes.
            out.push_str(std::str::from_utf8(&self.s[start..self.i]).unwrap());
            match self.peek() {
                None => return self.err("unterminated string"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let e = match self.peek() {
                        Some(e) => e,
                        None => return self.err("unterminated escape"),
                    };
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xd800..0xdc00).contains(&hi) {
                                if !self.s[self.i..].starts_with(b"\\u") {
                                    return self.err("lone high surrogate");
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return self.err("bad low surrogate");
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else if (0xdc00..0xe000).contains(&hi) {
                                return self.err("lone low surrogate");
                            } else {
                                hi
                            };
                            out.push(char::from_u32(c).unwrap());
                        }
                        _ => return self.err("bad escape"),
                    }
                }
                Some(_) => return self.err("raw control character in string"),
            }
        }
    }
}

/// Parse `bytes` as exactly one JSON value.
pub fn parse(bytes: &[u8]) -> Result<J, String> {
    std::str::from_utf8(bytes).map_err(|e| format!("invalid UTF-8: {}", e))?;
    let mut p = Parser {
        s: bytes,
        i: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.ws();
    if p.i != bytes.len() {
        return p.err("data after the value");
    }
    Ok(v)
}

impl J {
    /// The field `key` of an object.
    pub fn get(&self, key: &str) -> Option<&J> {
        match self {
            J::Obj(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    /// The field `key`, which must exist.
    pub fn at(&self, key: &str) -> &J {
        self.get(key)
            .unwrap_or_else(|| panic!("no {:?} in {:?}", key, self))
    }
    pub fn str(&self) -> &str {
        match self {
            J::Str(s) => s,
            _ => panic!("not a string: {:?}", self),
        }
    }
    pub fn num(&self) -> &str {
        match self {
            J::Num(s) => s,
            _ => panic!("not a number: {:?}", self),
        }
    }
    pub fn i64(&self) -> i64 {
        self.num()
            .parse()
            .unwrap_or_else(|_| panic!("not an i64: {:?}", self))
    }
    pub fn u64(&self) -> u64 {
        self.num()
            .parse()
            .unwrap_or_else(|_| panic!("not a u64: {:?}", self))
    }
    pub fn f64(&self) -> f64 {
        self.num().parse().unwrap()
    }
    pub fn keys(&self) -> Vec<&str> {
        match self {
            J::Obj(fields) => fields.iter().map(|(k, _)| k.as_str()).collect(),
            _ => panic!("not an object: {:?}", self),
        }
    }
    /// A time written as microseconds with three decimals, back in ns,
    /// read from the text (no floating point).
    pub fn ns(&self) -> u64 {
        let t = self.num();
        let (us, frac) = t
            .split_once('.')
            .unwrap_or_else(|| panic!("time {:?} has no decimals", t));
        assert_eq!(frac.len(), 3, "time {:?} has not three decimals", t);
        us.parse::<u64>().unwrap() * 1000 + frac.parse::<u64>().unwrap()
    }
    pub fn ph(&self) -> &str {
        self.at("ph").str()
    }
    pub fn name(&self) -> &str {
        self.at("name").str()
    }
}

/// Read a trace file strictly and return its events (of the array or of
/// "traceEvents"), without the clock record that the library writes after
/// the first record of every document (a "c" "clock_sync" event, checked
/// here); also runs the project's checker when it is built.
pub fn load(path: &Path) -> Vec<J> {
    without_clock(load_all(path))
}

/// As [`load`], with every record, the clock record included.
pub fn load_all(path: &Path) -> Vec<J> {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    let doc =
        parse(&bytes).unwrap_or_else(|e| panic!("{}: not strict JSON: {}", path.display(), e));
    jsonlint(path);
    let events = match doc {
        J::Arr(events) => events,
        J::Obj(_) => match doc.get("traceEvents") {
            Some(J::Arr(events)) => events.clone(),
            _ => panic!("{}: object without traceEvents", path.display()),
        },
        _ => panic!("{}: not a trace", path.display()),
    };
    events
}

/// The events without the document's clock record (second, after the
/// process_name record), checked.
pub fn without_clock(mut events: Vec<J>) -> Vec<J> {
    let is_clock = events.len() > 1
        && events[1].get("ph").map(|p| p.str() == "c").unwrap_or(false)
        && events[1].get("name").map(|n| n.str() == "clock_sync").unwrap_or(false);
    if is_clock {
        assert_eq!(events[1].at("args").at("sync_id").str(), "tracewriter.realtime");
        events.remove(1);
    }
    events
}

/// Check that every event is an object with a one-letter ph, and that the
/// first is the process_name record; return the events after it.
pub fn events_after_head(events: &[J]) -> &[J] {
    assert!(!events.is_empty(), "empty trace");
    for e in events {
        assert_eq!(e.ph().len(), 1, "ph of {:?}", e);
    }
    assert_eq!(events[0].ph(), "M");
    assert_eq!(events[0].name(), "process_name");
    &events[1..]
}

/// The build tree, when the tests run from make check ($top_builddir) or
/// from an in-tree build (the crate's parent directory).
pub fn top_builddir() -> Option<PathBuf> {
    if let Ok(d) = env::var("top_builddir") {
        return Some(PathBuf::from(d));
    }
    let parent = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()?
        .to_path_buf();
    if parent.join("tools/tracewriter").exists() {
        Some(parent)
    } else {
        None
    }
}

/// A program of the build tree, if it is built.
pub fn tool(rel: &str) -> Option<PathBuf> {
    let p = top_builddir()?.join(rel);
    if p.exists() {
        Some(p)
    } else {
        None
    }
}

/// Run tests/jsonlint --events on `path` when it is built: the project's
/// strict checker must agree with ours.
pub fn jsonlint(path: &Path) {
    if let Some(lint) = tool("tests/jsonlint") {
        let out = Command::new(&lint)
            .arg("--events")
            .arg(path)
            .output()
            .expect("run jsonlint");
        assert!(
            out.status.success(),
            "jsonlint {}: {}{}",
            path.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A fresh directory for one test, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let d = env::temp_dir().join(format!(
            "tw-rust-{}-{}-{}",
            tag,
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// xorshift64*, seeded from TW_TEST_SEED or the clock; the seed is
/// printed so that a failure can be replayed.
pub struct Rng(u64);

impl Rng {
    pub fn new(test: &str) -> Rng {
        let seed = env::var("TW_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        println!(
            "{}: seed {} (replay with TW_TEST_SEED={})",
            test, seed, seed
        );
        Rng(seed | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform-ish in lo..=hi.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// The name libtest knows a test by, for `--exact`: its module's path
/// without the crate's name (the integration tests are modules of one
/// test program, tests/integration/main.rs), then the function's name.
pub fn test_path(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_, inner)) => format!("{}::{}", inner, test),
        None => test.to_string(),
    }
}
