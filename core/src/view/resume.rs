//! Resume in proportion to the live context: read the log backwards from its end,
//! follow the active path from the head, and stop at the latest compaction on it,
//! whose record holds the model view up to that point.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::error::{Error, IoContext, Result};
use crate::format::records::{classify, merge_patch, patch_of, Class, FORMAT_VERSION};
use crate::log::{probe_text, LineText};
use crate::view::model_item::PlainFacts;
use crate::view::{prefix_with_patches, ModelItem};

const CHUNK: u64 = 1 << 20;

struct TailEntry {
    parent: Option<String>,
    raw: LineText,
    /// Read from the probe the line had anyway.
    plain: Option<PlainFacts>,
}

#[derive(Default)]
struct Tail {
    entries: HashMap<String, TailEntry>,
    /// Patches by message id, newest first (as read).
    patches: HashMap<String, Vec<(u64, Value)>>,
    compactions: HashMap<String, (u64, Value)>,
    /// `Some(None)`: the head is before the first message.
    head: Option<Option<String>>,
    /// Something the backward read cannot decide the way a forward read would.
    give_up: bool,
}

impl Tail {
    /// One line, without its newline (a line that is not UTF-8 is skipped).
    fn line(&mut self, offset: u64, bytes: &[u8]) {
        if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
            self.text_line(offset, text, None);
        }
    }

    /// One line of text, without its newline. `chunk`, when given, is the text
    /// the line lies in, which the kept line shares instead of copying it.
    fn text_line(&mut self, offset: u64, text: &str, chunk: Option<&Arc<String>>) {
        let nuls = text.bytes().take_while(|&b| b == 0).count();
        let text = &text[nuls..];
        if text.bytes().all(|b| b.is_ascii_whitespace()) {
            return;
        }
        let offset = offset + nuls as u64;
        let Ok((text, p)) = probe_text(text) else {
            return;
        };
        let Ok(class) = classify(&p) else { return };
        match class {
            Class::Message { id, parent } => {
                let Some(parent) = parent else {
                    // A seed-style line continues from the head before it, which
                    // only a forward read knows.
                    self.give_up = true;
                    return;
                };
                let id = id.to_owned();
                if self.head.is_none() {
                    self.head = Some(Some(id.clone()));
                }
                let e = TailEntry {
                    parent: parent.map(str::to_owned),
                    raw: LineText::within(chunk, text),
                    plain: PlainFacts::of(&p),
                };
                if self.entries.insert(id, e).is_some() {
                    self.give_up = true; // duplicate ids: the forward rule (first wins) needs the whole log
                }
            }
            Class::Head(m) if self.head.is_none() => {
                self.head = Some(m.map(str::to_owned));
            }
            Class::Patch { message_id } => {
                if let Some(patch) = patch_of(text) {
                    self.patches
                        .entry(message_id.to_owned())
                        .or_default()
                        .push((offset, patch));
                }
            }
            Class::Compaction { summary_id } => {
                if let Ok(v) = serde_json::from_str::<Value>(text) {
                    self.compactions.insert(summary_id.to_owned(), (offset, v));
                }
            }
            Class::Session { version } if version > FORMAT_VERSION => self.give_up = true,
            _ => {}
        }
    }
}

/// Where the walk from the head has got to; resumed after each chunk.
#[derive(Default)]
struct Walker {
    started: bool,
    path: Vec<String>,
    next: Option<String>,
    stopped_at: Option<String>,
    done: bool,
    looped: bool,
}

impl Walker {
    /// Follow parents as far as the entries read so far allow.
    fn advance(&mut self, t: &Tail, at_start: bool) {
        if self.done {
            return;
        }
        if !self.started {
            match &t.head {
                Some(h) => {
                    self.next = h.clone();
                    self.started = true;
                }
                None => {
                    self.done = at_start;
                    return;
                }
            }
        }
        while let Some(id) = self.next.take() {
            let Some(e) = t.entries.get(&id) else {
                self.next = Some(id);
                self.done = at_start; // at the start: a missing parent ends the path
                return;
            };
            if self.path.len() > t.entries.len() {
                self.looped = true; // the full read reports the loop
                self.done = true;
                return;
            }
            self.path.push(id.clone());
            if t.compactions.contains_key(&id) {
                self.stopped_at = Some(id);
                self.done = true;
                return;
            }
            self.next = e.parent.clone();
        }
        self.done = true;
    }
}

/// The model items of a log, read from its end. `None` when the backward read
/// cannot be sure to match the forward fold (the caller then reads it all).
pub(crate) fn model_items(path: &Path) -> Result<Option<Vec<ModelItem>>> {
    model_items_by(path, CHUNK)
}

/// [`model_items`], reading `step` bytes at a time.
fn model_items_by(path: &Path, step: u64) -> Result<Option<Vec<ModelItem>>> {
    let file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound(format!("session log {}", path.display())),
        _ => Error::io(path, e),
    })?;
    let len = file.metadata().at(path)?.len();
    let mut t = Tail::default();
    let mut pending: Vec<u8> = Vec::new();
    let mut end = len;
    let mut first = true;
    let mut walker = Walker::default();
    loop {
        let start = end.saturating_sub(step);
        // Room for the carried part too, so that appending it copies nothing else.
        let mut data = Vec::with_capacity((end - start) as usize + pending.len());
        data.resize((end - start) as usize, 0);
        crate::platform::read_exact_at(&file, &mut data, start).at(path)?;
        data.extend_from_slice(&pending);
        let mut stop = data.len();
        if first {
            // Bytes after the last newline are a torn tail: the forward read skips them.
            if let Some(last) = memchr::memrchr(b'\n', &data) {
                stop = last + 1;
            } else if start > 0 {
                pending = data;
                end = start;
                continue;
            } else {
                stop = 0;
            }
            first = false;
        }
        // Complete lines start after the first newline; the first one's start
        // is only known at the file's start. What comes before is carried into
        // the next (earlier) chunk.
        let from = match memchr::memchr(b'\n', &data[..stop]) {
            _ if start == 0 => 0,
            Some(n) => n + 1,
            None => stop,
        };
        data.truncate(stop);
        pending = data.drain(..from).collect();
        // The complete lines, as one text their kept lines share (a chunk
        // with invalid UTF-8 has its lines copied; the bad one is skipped).
        let (chunk, bytes) = match String::from_utf8(data) {
            Ok(text) => (Some(Arc::new(text)), Vec::new()),
            Err(e) => (None, e.into_bytes()),
        };
        let body = chunk.as_ref().map_or(&bytes[..], |c| c.as_bytes());
        let at = start + from as u64;
        let mut line = |a: usize, b: usize| match &chunk {
            Some(c) => t.text_line(at + a as u64, &c[a..b], Some(c)),
            None => t.line(at + a as u64, &body[a..b]),
        };
        let mut line_end = body.len();
        for nl in memchr::memrchr_iter(b'\n', body) {
            if nl + 1 < line_end {
                line(nl + 1, line_end);
            }
            line_end = nl;
        }
        if line_end > 0 {
            line(0, line_end);
        }
        if t.give_up {
            return Ok(None);
        }
        walker.advance(&t, start == 0);
        if walker.done {
            break;
        }
        end = start;
    }
    if walker.looped || (walker.path.is_empty() && walker.next.is_some()) {
        return Ok(None); // the head names a message that is not in the log
    }
    let (mut ids, stop_at) = (walker.path, walker.stopped_at);
    ids.reverse();
    let patches = |id: &str| -> Vec<(u64, Value)> {
        let mut v = t.patches.get(id).cloned().unwrap_or_default();
        v.reverse();
        v
    };
    let mut items = Vec::with_capacity(ids.len());
    let from = match &stop_at {
        Some(sid) => {
            let (offset, rec) = &t.compactions[sid];
            let all: HashMap<String, Vec<(u64, Value)>> =
                t.patches.keys().map(|k| (k.clone(), patches(k))).collect();
            items.extend(
                prefix_with_patches(rec, *offset, |id| {
                    all.get(id).map(Vec::as_slice).unwrap_or(&[])
                })
                .into_iter()
                .map(ModelItem::from),
            );
            1
        }
        None => 0,
    };
    for id in &ids[from..] {
        let Some(e) = t.entries.remove(id) else {
            return Ok(None); // a message twice on the path: the full read reports the loop
        };
        let patches = patches(id);
        items.push(ModelItem::stored(
            (id, e.parent.as_deref()),
            e.raw,
            Some(e.plain),
            patches.is_empty(),
            |mut v| {
                for (_, p) in &patches {
                    merge_patch(&mut v, p);
                }
                v
            },
        )?);
    }
    Ok(Some(items))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use serde_json::{json, Map, Value};

    use super::*;
    use crate::{CreateOptions, Store, StoreOptions};

    fn values(items: Option<Vec<ModelItem>>) -> Option<Vec<Map<String, Value>>> {
        items.map(|items| items.into_iter().map(|m| m.into_map().unwrap()).collect())
    }

    /// Lines cut anywhere between two reads (inside a multi-byte character,
    /// just before or after a newline) are read as when the log is read whole.
    #[test]
    fn any_chunk_size_reads_the_same_items() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        let options = StoreOptions {
            home: Some(dir.path().join("home")),
            ..StoreOptions::default()
        };
        let store = Store::open(&project, options).unwrap();
        let s = store.create_session(CreateOptions::default()).unwrap();
        for (i, text) in ["é", "😀 ok", "", "日本語のテキスト", "a\nb \"q\""]
            .iter()
            .enumerate()
        {
            s.append(json!({"role": "user", "content": format!("{i} {text}")}))
                .unwrap();
        }
        let path = store.log_path(s.id()).unwrap();
        s.close().unwrap();
        // A line that is not UTF-8, then a torn tail: both skipped.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"type\":\"message\",\"x\":\"\xff\xfe\"}\n{\"type\":\"mess")
            .unwrap();
        drop(f);
        let whole = values(model_items_by(&path, 1 << 20).unwrap()).expect("read backwards");
        assert_eq!(whole.len(), 5);
        assert_eq!(whole[3]["content"], "3 日本語のテキスト");
        let len = std::fs::metadata(&path).unwrap().len();
        for chunk in (1..=80).chain([len / 3, len / 2, len - 1]) {
            let got = values(model_items_by(&path, chunk).unwrap());
            assert_eq!(got.as_ref(), Some(&whole), "chunks of {chunk} bytes");
        }
    }
}
