//! Resume in proportion to the live context: read the log backwards from its end,
//! follow the active path from the head, and stop at the latest compaction on it,
//! whose record holds the model view up to that point.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use serde_json::Value;

use crate::error::{Error, IoContext, Result};
use crate::format::records::{classify, merge_patch, patch_of, Class, FORMAT_VERSION};
use crate::log::{probe, LineText};
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
    fn line(&mut self, offset: u64, bytes: &[u8]) {
        let nuls = bytes.iter().take_while(|&&b| b == 0).count();
        let bytes = &bytes[nuls..];
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let offset = offset + nuls as u64;
        let Ok((text, p)) = probe(bytes) else { return };
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
                    raw: LineText::from(text),
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
        let start = end.saturating_sub(CHUNK);
        let mut data = vec![0u8; (end - start) as usize];
        crate::platform::read_exact_at(&file, &mut data, start).at(path)?;
        data.extend_from_slice(&pending);
        let mut stop = data.len();
        let mut nls: Vec<usize> = memchr::memchr_iter(b'\n', &data).collect();
        if first {
            // Bytes after the last newline are a torn tail: the forward read skips them.
            if let Some(&last) = nls.last() {
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
        nls.retain(|&n| n < stop);
        // Complete lines end at each newline; the first one's start is only known
        // at the file's start.
        let mut line_end = stop;
        for &nl in nls.iter().rev() {
            let line_start = nl + 1;
            if line_start < line_end {
                t.line(start + line_start as u64, &data[line_start..line_end - 1]);
            }
            line_end = line_start;
        }
        let head_part = &data[..line_end];
        if start == 0 {
            if !head_part.is_empty() {
                let body = head_part.strip_suffix(b"\n").unwrap_or(head_part);
                t.line(0, body);
            }
        } else {
            pending = head_part.to_vec();
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
