//! Snapshot objects built in memory: trees (serialised as git does), the root
//! tree with the manifest, and commits.

use std::collections::{BTreeMap, HashSet};

use git2::{ObjectType, Oid};

use super::{Loaded, Manifest, Rec, FILES, MANIFEST};
use crate::error::{Error, Result};
use crate::history::project_fs::ProjectPath;

// ---------------------------------------------------------------------------
// Objects built in memory.

/// The new objects of one write, in the order they were made.
#[derive(Default)]
pub(super) struct NewObjects {
    pub(super) objs: Vec<(Oid, ObjectType, Vec<u8>)>,
    seen: HashSet<Oid>,
}

impl NewObjects {
    pub(super) fn add(&mut self, kind: ObjectType, bytes: Vec<u8>) -> Result<Oid> {
        let oid =
            Oid::hash_object(kind, &bytes).map_err(|e| Error::Internal(e.message().into()))?;
        if self.seen.insert(oid) {
            self.objs.push((oid, kind, bytes));
        }
        Ok(oid)
    }
}

pub(super) fn empty_tree_oid() -> Result<Oid> {
    Oid::hash_object(ObjectType::Tree, b"").map_err(|e| Error::Internal(e.message().into()))
}

/// A tree object's bytes: entries sorted as git sorts them (a tree's name as if
/// it ended in `/`), each `<octal mode> <name>\0<20-byte id>`.
pub(super) fn tree_bytes(entries: &mut [(String, u32, Oid)]) -> Vec<u8> {
    let key = |e: &(String, u32, Oid)| {
        let mut k = e.0.as_bytes().to_vec();
        if e.1 == 0o040000 {
            k.push(b'/');
        }
        k
    };
    entries.sort_by_key(key);
    let mut out = Vec::with_capacity(entries.len() * 40);
    for (name, mode, oid) in entries.iter() {
        out.extend_from_slice(format!("{mode:o} {name}\0").as_bytes());
        out.extend_from_slice(oid.as_bytes());
    }
    out
}

/// Every tree of the files that exist in `state`, by directory (`""` is the
/// top), with its id and bytes.
pub(super) fn build_trees(
    state: &BTreeMap<ProjectPath, Rec>,
) -> Result<BTreeMap<String, (Oid, Vec<u8>)>> {
    let mut dirs: BTreeMap<String, Vec<(String, u32, Oid)>> = BTreeMap::new();
    dirs.insert(String::new(), Vec::new());
    for (p, r) in state {
        let (Some(oid), Some(mode)) = (r.oid(), r.mode()) else {
            continue;
        };
        let (dir, name) = match p.as_str().rsplit_once('/') {
            Some((d, n)) => (d.to_string(), n.to_string()),
            None => (String::new(), p.as_str().to_string()),
        };
        let mut d = dir.clone();
        dirs.entry(dir)
            .or_default()
            .push((name, u32::from(mode), oid));
        while let Some((parent, _)) = d.rsplit_once('/') {
            let parent = parent.to_string();
            dirs.entry(parent.clone()).or_default();
            d = parent;
        }
    }
    let depth = |d: &str| {
        if d.is_empty() {
            0
        } else {
            d.matches('/').count() + 1
        }
    };
    let mut order: Vec<String> = dirs.keys().cloned().collect();
    // Children before parents.
    order.sort_by_key(|d| std::cmp::Reverse(depth(d)));
    let mut out = BTreeMap::new();
    for d in order {
        let mut entries = dirs.remove(&d).unwrap_or_default();
        let bytes = tree_bytes(&mut entries);
        let oid = Oid::hash_object(ObjectType::Tree, &bytes)
            .map_err(|e| Error::Internal(e.message().into()))?;
        if !d.is_empty() {
            let (parent, name) = match d.rsplit_once('/') {
                Some((p, n)) => (p.to_string(), n.to_string()),
                None => (String::new(), d.clone()),
            };
            dirs.entry(parent).or_default().push((name, 0o040000, oid));
        }
        out.insert(d, (oid, bytes));
    }
    Ok(out)
}

/// The root tree of a snapshot: `files` and `manifest.json`.
pub(super) fn root_tree(objs: &mut NewObjects, files: Oid, manifest: &Manifest) -> Result<Oid> {
    let json = serde_json::to_vec(manifest).map_err(|e| Error::Internal(e.to_string()))?;
    let m = objs.add(ObjectType::Blob, json)?;
    let mut entries = vec![
        (FILES.to_string(), 0o040000, files),
        (MANIFEST.to_string(), 0o100644, m),
    ];
    objs.add(ObjectType::Tree, tree_bytes(&mut entries))
}

/// A snapshot commit: fixed author, the reason and the session in the message.
pub(super) fn commit_object(
    objs: &mut NewObjects,
    tree: Oid,
    parent: Option<Oid>,
    reason: &str,
    l: &Loaded,
) -> Result<Oid> {
    let secs = l.scope.ids.now_ms() / 1000;
    let mut text = format!("tree {tree}\n");
    if let Some(p) = parent {
        text.push_str(&format!("parent {p}\n"));
    }
    let who = format!("sessionkit <sessionkit@localhost> {secs} +0000");
    text.push_str(&format!(
        "author {who}\ncommitter {who}\n\n{reason}\n\nsession {}\n",
        l.session_id
    ));
    objs.add(ObjectType::Commit, text.into_bytes())
}
