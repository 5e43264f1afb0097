//! The core's modules depend one way: each layer imports only layers below it.
//! This test reads `core/src` and fails when a module names one above it (or a
//! sibling of its own layer), so an upward import cannot creep back in.
//! docs/ARCHITECTURE.md explains the layers.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, bottom first. A module may use its own submodules and any module
/// of a lower layer, nothing else.
const LAYERS: &[&[&str]] = &[
    &["platform"],
    &["error"],
    &["fsutil"],
    &["format"],
    &["settings", "instructions", "memory"],
    &["options"],
    &["blobs"],
    &["log"],
    &["index", "view", "history"],
    &["store"],
    &["ops", "remote"],
    &["api", "defaults"],
    &["testing"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("read core/src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file belongs to: `log/cache.rs` → `log`, `blobs.rs` → `blobs`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a component");
    let name = first.as_os_str().to_str().expect("UTF-8 path");
    name.trim_end_matches(".rs").to_string()
}

/// The code of a file without comments and without its unit-test module, which
/// may build on anything.
fn code_of(text: &str) -> String {
    let body = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    body.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every top-level name used after `crate::`, including inside `crate::{a, b::c}`.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group: split at commas outside nested braces.
            let mut depth = 0;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        out.push(ident(&group[i..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident(rest));
        }
    }
    out
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut wrong: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        if module == "lib" {
            continue; // the facade re-exports from everywhere
        }
        let Some(own) = layer_of(&module) else {
            panic!(
                "{}: module `{module}` has no layer in core/tests/layers.rs; add it to LAYERS \
                 (and to docs/ARCHITECTURE.md)",
                file.display()
            );
        };
        let text = fs::read_to_string(file).expect("read source");
        for used in crate_paths(&code_of(&text)) {
            if used == module {
                continue;
            }
            // A capitalised name is a re-export of the facade (`crate::Store`).
            let target = if used.starts_with(char::is_uppercase) {
                Some(LAYERS.len() - 1)
            } else {
                layer_of(&used)
            };
            let ok = matches!(target, Some(t) if t < own);
            if !ok {
                let rel = file.strip_prefix(&src).expect("under src").display();
                wrong
                    .entry(rel.to_string())
                    .or_default()
                    .push(format!("crate::{used}"));
            }
        }
    }
    for v in wrong.values_mut() {
        v.sort();
        v.dedup();
    }
    assert!(
        wrong.is_empty(),
        "imports of a layer above or beside their own (layers, bottom first: {LAYERS:?}):\n{}",
        wrong
            .iter()
            .map(|(f, v)| format!("  {f}: {}", v.join(", ")))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_scanner_sees_grouped_and_plain_paths() {
    let code = "use crate::{log::{self, Entry}, view::Message};\nlet x = crate::store::Store::open();\n// crate::ops in a comment\n";
    assert_eq!(crate_paths(&code_of(code)), ["log", "view", "store"]);
}
