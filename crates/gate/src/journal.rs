//! The state journal of `monitor gate --state FILE` and `augur mcp --state FILE`: sessions
//! survive a crash and a restart, so that killing the monitor never hands an agent a fresh
//! session at the safe state.
//!
//! A journal is a JSON Lines file, appended to and written to the operating system (one
//! `write` per decision, before the decision is sent: a decision the client saw is in the
//! journal; a kill of the process loses nothing it answered). The first line is the header,
//! every later line an [`Entry`]:
//!
//! ```text
//! {"format":"augur-session-journal","version":1,"server":"gate","monitor":"<sha256>"}
//! {"op":"filter","bits":8388608,"count":2,"words":[[17,"0000000000100000"],...]}
//! {"op":"session","id":"run-1","t":1764214000,"session":{"category":null,"dtr":{...},"state":3,...}}
//! {"op":"burn","id":"run-0"}
//! ```
//!
//! - `monitor` is [`monitor_hash`]: SHA-256 of the monitor as Augur writes it. A journal
//!   written for another monitor (another file, or the same file recompiled) is refused, as is
//!   another server's journal (`gate` / `mcp`), another format or version: a located error,
//!   never a silent start from the safe state.
//! - `session`: a session's whole state after it opened or moved ([`SessionSnapshot`]), `t` its
//!   last use (seconds since the Unix epoch: the time to live goes on across a restart), and,
//!   for MCP, `pause`: its pending pause. The last `session` line of an id wins.
//! - `burn`: the id was ended, expired or evicted; it is refused forever.
//! - `filter`: the burned-id Bloom filter ([`BurnedIds`]): its size, count and non-zero 64-bit
//!   words (index, 16 hex digits).
//! - `gone` (MCP): the exact list of recently burned ids, oldest first; `next_pause` (MCP):
//!   the number of the next pause id.
//!
//! Compaction: at start, after the journal is read, and whenever it has grown past
//! [`COMPACT_BYTES`] (or twice its last compacted size, if larger), the journal is rewritten as
//! a snapshot (header, filter, the open sessions, for MCP the exact list) into `FILE.tmp`,
//! synced, and renamed over `FILE`: a crash at any point leaves either the old journal or the
//! new one. A last line without its newline (a crash in the middle of a write) is dropped,
//! and the start-up message says so; the client never saw the decision it was written for.
//! Any other line that is not a valid entry, or a session that does not fit the monitor, is a
//! located error (file, line, column).

use crate::burned::BurnedIds;
use crate::error::{GateError, Result};
use crate::monitor::Monitor;
use crate::session::SessionSnapshot;
use augur_source::{Location, Span};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The `format` field of a journal's header.
pub const FORMAT: &str = "augur-session-journal";
/// The version this Augur writes and reads.
pub const VERSION: u32 = 1;
/// A journal that has grown past this many bytes since it was last compacted (64 MiB), and
/// past twice its compacted size, is compacted again.
pub const COMPACT_BYTES: u64 = 64 << 20;

/// The first line of a journal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// Which server wrote it: `gate` or `mcp`.
    pub server: String,
    /// [`monitor_hash`] of the monitor the sessions gate with.
    pub monitor: String,
}

impl Header {
    /// The header of a journal for `server` (`gate`, `mcp`) and `monitor`.
    pub fn new(server: &str, monitor: &Monitor) -> Header {
        Header {
            format: FORMAT.into(),
            version: VERSION,
            server: server.into(),
            monitor: monitor_hash(monitor),
        }
    }
}

/// One journal line after the header.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Entry {
    /// A session opened or moved: its whole state.
    Session {
        /// The session id.
        id: String,
        /// Its last use, in seconds since the Unix epoch.
        t: u64,
        /// Its state.
        session: Box<SessionSnapshot>,
        /// MCP: the pending pause (its id, tool, arguments, state).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pause: Option<Value>,
    },
    /// A session ended, expired or was evicted: the id is burned.
    Burn {
        /// The id.
        id: String,
    },
    /// The burned-id filter.
    Filter {
        /// Its size in bits.
        bits: u64,
        /// Ids burned into it.
        count: u64,
        /// Its non-zero words: (index, 16 hex digits).
        words: Vec<(u64, String)>,
    },
    /// MCP: the exact list of recently burned ids, oldest first.
    Gone {
        /// The ids.
        ids: Vec<String>,
    },
    /// MCP: the number of the next pause id.
    NextPause {
        /// The number.
        n: u64,
    },
}

impl Entry {
    /// The filter entry of `f`.
    pub fn filter(f: &BurnedIds) -> Entry {
        Entry::Filter {
            bits: f.bits(),
            count: f.count(),
            words: f.words().map(|(i, w)| (i, format!("{w:016x}"))).collect(),
        }
    }

    /// The filter of a [`Entry::Filter`] (`None` for other entries); errors name the bad
    /// word or size.
    pub fn to_filter(&self) -> Option<std::result::Result<BurnedIds, String>> {
        let Entry::Filter { bits, count, words } = self else {
            return None;
        };
        let mut parsed = Vec::with_capacity(words.len());
        for (i, w) in words {
            match u64::from_str_radix(w, 16) {
                Ok(v) if w.len() == 16 => parsed.push((*i, v)),
                _ => return Some(Err(format!("word {i}: `{w}` is not 16 hex digits"))),
            }
        }
        Some(BurnedIds::from_words(*bits, *count, parsed))
    }

    /// Adds the filter of a [`Entry::Filter`] read at `path:line` to `burned`: the journal's
    /// filter as it was written (its size) when nothing is burned yet, else their union.
    /// Another entry, or a filter that does not read or fit, is a located error.
    pub fn merge_filter(&self, burned: &mut BurnedIds, path: &Path, line: usize) -> Result<()> {
        let f = self
            .to_filter()
            .unwrap_or_else(|| Err("not a filter".into()))
            .map_err(|m| Loaded::error_at(path, line, m))?;
        if burned.count() == 0 {
            *burned = f;
            Ok(())
        } else {
            burned
                .union(&f)
                .map_err(|m| Loaded::error_at(path, line, m))
        }
    }
}

/// SHA-256 of the monitor as Augur writes it (`Monitor::to_json`): the same for a monitor
/// file however it is formatted, different for another monitor.
pub fn monitor_hash(monitor: &Monitor) -> String {
    crate::sha256_hex([monitor.to_json().as_bytes()])
}

/// Seconds since the Unix epoch now.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A journal as read at start.
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    /// Whether the file existed (an empty file counts as new).
    pub existed: bool,
    /// The entries with their line numbers (1-based; the header is line 1).
    pub entries: Vec<(usize, Entry)>,
    /// The line number of a last line dropped because it had no newline (a crash while it
    /// was written).
    pub partial: Option<usize>,
}

impl Loaded {
    /// The restore report of this journal at `path`, before its entries are applied.
    pub fn report(&self, path: &Path) -> Restored {
        Restored {
            path: path.display().to_string(),
            existed: self.existed,
            partial: self.partial,
            ..Default::default()
        }
    }

    /// A located error at line `line` of the journal `path`.
    pub fn error_at(path: &Path, line: usize, message: impl Into<String>) -> GateError {
        GateError::located(Location::line(path.display().to_string(), line), message)
    }
}

/// Read the journal at `path` for `header`'s server and monitor: a missing or empty file is
/// a new journal; a file whose header is not `header` (another format, version, server or
/// monitor) or with a line that is not an entry is a located error.
pub fn load(path: &Path, header: &Header) -> Result<Loaded> {
    let file = path.display().to_string();
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::default()),
        Err(e) => return Err(GateError::Io { file, source: e }),
    };
    let mut loaded = Loaded {
        existed: !bytes.is_empty(),
        ..Loaded::default()
    };
    if bytes.is_empty() {
        return Ok(loaded);
    }
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    // The piece after the last newline: empty for a complete journal, else a cut line.
    if let Some(last) = lines.pop() {
        if !last.is_empty() {
            loaded.partial = Some(lines.len() + 1);
        }
    }
    if lines.is_empty() {
        // One line without a newline: it must still be the header (journals are created
        // whole, by a rename), and the journal holds no entries.
        lines.push(&bytes);
        loaded.partial = None;
    }
    for (i, raw) in lines.iter().enumerate() {
        let lineno = i + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = std::str::from_utf8(raw).map_err(|e| {
            GateError::located(
                Location::in_line(
                    file.clone(),
                    lineno,
                    e.valid_up_to() + 1,
                    1,
                    String::from_utf8_lossy(&raw[..e.valid_up_to()]).into_owned(),
                ),
                "the line is not valid UTF-8",
            )
        })?;
        if lineno == 1 {
            check_header(&file, text, header)?;
            continue;
        }
        if text.trim().is_empty() {
            continue;
        }
        let entry: Entry = serde_json::from_str(text).map_err(|e| {
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or("").to_string();
            GateError::located(
                Location::in_line(file.clone(), lineno, e.column().max(1), 1, text),
                format!("not a journal entry: {msg}"),
            )
        })?;
        loaded.entries.push((lineno, entry));
    }
    Ok(loaded)
}

fn check_header(file: &str, text: &str, want: &Header) -> Result<()> {
    let at = |needle: &str, msg: String| {
        let span = text
            .find(needle)
            .filter(|_| !needle.is_empty())
            .map_or(Span::new(0, text.len().min(1)), |s| {
                Span::new(s, s + needle.len())
            });
        GateError::located(Location::in_line_bytes(file, 1, text, span), msg)
    };
    let foreign = || {
        at(
            "",
            format!("not an Augur session journal (its first line must be the header {{\"format\": \"{FORMAT}\", ...}})"),
        )
    };
    let v: Value = serde_json::from_str(text).map_err(|_| foreign())?;
    if v.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(foreign());
    }
    let h: Header = serde_json::from_value(v).map_err(|_| foreign())?;
    if h.version != want.version {
        return Err(at(
            &format!("\"version\":{}", h.version),
            format!(
                "journal version {} (this Augur reads version {})",
                h.version, want.version
            ),
        ));
    }
    if h.server != want.server {
        return Err(at(
            &h.server,
            format!(
                "this journal was written by `{}`, not by `{}`: each server keeps its own journal",
                server_name(&h.server),
                server_name(&want.server)
            ),
        ));
    }
    if h.monitor != want.monitor {
        return Err(at(
            &h.monitor,
            format!(
                "this journal was written for another monitor (SHA-256 {}; this monitor's is {}): its sessions do not belong to it. Use the monitor it was written for, or another --state file",
                h.monitor, want.monitor
            ),
        ));
    }
    Ok(())
}

fn server_name(s: &str) -> String {
    match s {
        "gate" => "augur monitor gate".into(),
        "mcp" => "augur mcp".into(),
        s => s.into(),
    }
}

/// An open journal, appended to.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    header: Header,
    file: std::fs::File,
    bytes: u64,
    compact_at: u64,
}

fn io(path: &Path, e: std::io::Error) -> GateError {
    GateError::Io {
        file: path.display().to_string(),
        source: e,
    }
}

fn line_of<T: Serialize>(v: &T, out: &mut String) {
    // Entries are plain data with finite numbers: serialising cannot fail.
    if let Ok(s) = serde_json::to_string(v) {
        out.push_str(&s);
        out.push('\n');
    }
}

impl Journal {
    /// Write a journal at `path` holding `header` and `entries` (atomically: a temporary file
    /// beside it, synced, renamed over it) and open it for appending.
    pub fn create(path: &Path, header: Header, entries: &[Entry]) -> Result<Journal> {
        let bytes = write_snapshot(path, &header, entries)?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| io(path, e))?;
        Ok(Journal {
            path: path.to_path_buf(),
            header,
            file,
            bytes,
            compact_at: COMPACT_BYTES.max(2 * bytes),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append `entries` (one `write` to the operating system; nothing is buffered).
    pub fn append(&mut self, entries: &[Entry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut out = String::new();
        for e in entries {
            line_of(e, &mut out);
        }
        self.file
            .write_all(out.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| io(&self.path, e))?;
        self.bytes += out.len() as u64;
        Ok(())
    }

    /// Whether the journal has grown enough to be compacted ([`COMPACT_BYTES`]).
    pub fn wants_compaction(&self) -> bool {
        self.bytes > self.compact_at
    }

    /// Rewrite the journal as `entries` (the current snapshot), atomically.
    pub fn compact(&mut self, entries: &[Entry]) -> Result<()> {
        *self = Journal::create(&self.path, self.header.clone(), entries)?;
        Ok(())
    }
}

/// Write `header` and `entries` to `path.tmp`, sync it, rename it over `path`; the bytes
/// written.
fn write_snapshot(path: &Path, header: &Header, entries: &[Entry]) -> Result<u64> {
    let mut out = String::new();
    line_of(header, &mut out);
    for e in entries {
        line_of(e, &mut out);
    }
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(out.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        // Make the rename itself durable (best effort: not every platform syncs folders).
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    };
    write().map_err(|e| io(path, e))?;
    Ok(out.len() as u64)
}

/// What a restore found, for the start-up message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// The journal file.
    pub path: String,
    /// Whether it existed.
    pub existed: bool,
    /// Sessions restored open.
    pub open: usize,
    /// Ids burned so far (the filter's count).
    pub burned: u64,
    /// Sessions that expired while the server was down (burned at restore).
    pub expired: usize,
    /// A last line dropped because it was cut.
    pub partial: Option<usize>,
    /// The journal's filter size when it differs from the one asked for (it is kept: a
    /// filter cannot be resized without forgetting burned ids).
    pub kept_bits: Option<(u64, u64)>,
}

impl Restored {
    /// The start-up message (`what`: `augur monitor gate` or `augur mcp`).
    pub fn message(&self, what: &str) -> String {
        let mut s = if self.existed {
            format!(
                "{what}: restored the state journal {}: {} open session{}, {} burned id{}",
                self.path,
                self.open,
                if self.open == 1 { "" } else { "s" },
                self.burned,
                if self.burned == 1 { "" } else { "s" },
            )
        } else {
            format!("{what}: started a new state journal {}", self.path)
        };
        if self.expired > 0 {
            s.push_str(&format!(
                " ({} expired while the server was down)",
                self.expired
            ));
        }
        s.push_str("; sessions survive a restart with the same --state");
        if let Some(line) = self.partial {
            s.push_str(&format!(
                "\n{what}: line {line} of {} was cut by a crash while it was written and is dropped; every complete line was restored",
                self.path
            ));
        }
        if let Some((asked, kept)) = self.kept_bits {
            s.push_str(&format!(
                "\n{what}: --burned-bits {asked} is ignored: the journal's burned-id filter has {kept} bits (a filter cannot be resized without forgetting burned ids)"
            ));
        }
        s
    }
}
