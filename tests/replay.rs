//! What the Rust replays of `tests/fixtures/manifest.json` share: installing a
//! `logs[]` entry, the read report as the manifest spells it, the comparison
//! that honours `knownDeviations`, and the rows of FORMAT §6.9. Included by
//! `core/tests/fixtures.rs` and `bindings/cli/tests/fixtures.rs` with `#[path]`;
//! the schema is in `tests/fixtures/README.md`.

#![allow(dead_code)]

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use serde_json::{json, Value};

/// Write a `logs[]` entry into a project directory: its `files` (`{dst: src}`,
/// `src` relative to `fixtures`) and its `lines` (each followed by `\n`) as
/// `<session>.jsonl`.
pub fn install(entry: &Value, fixtures: &Path, project_dir: &Path) {
    let name = entry["name"].as_str().unwrap_or("?");
    for (dst, src) in entry["files"].as_object().into_iter().flatten() {
        let to = project_dir.join(dst);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        let from = fixtures.join(src.as_str().unwrap());
        fs::copy(&from, &to).unwrap_or_else(|e| panic!("{name}: {}: {e}", from.display()));
    }
    if let Some(lines) = entry.get("lines") {
        let mut text = String::new();
        for l in lines.as_array().unwrap_or_else(|| panic!("{name}: lines")) {
            text.push_str(l.as_str().unwrap_or_else(|| panic!("{name}: a line")));
            text.push('\n');
        }
        let sid = entry["session"].as_str().unwrap();
        fs::write(project_dir.join(format!("{sid}.jsonl")), text).unwrap();
    }
}

/// The manifest's kind of a skipped segment: the library's `kind` when it gives
/// one, else its reason text classified by prefix.
pub fn skipped_kind(s: &Value) -> String {
    if let Some(k) = s.get("kind").and_then(Value::as_str) {
        return k.to_string();
    }
    reason_kind(s["reason"].as_str().unwrap_or(""))
}

pub fn reason_kind(reason: &str) -> String {
    let kinds = [
        ("NUL run", "nul"),
        ("invalid UTF-8", "utf8"),
        ("invalid JSON", "json"),
        ("message has no", "noId"),
        ("patch record needs", "badPatch"),
        ("compaction record needs", "badCompaction"),
        ("last line has no newline", "torn"),
    ];
    kinds
        .iter()
        .find(|(prefix, _)| reason.starts_with(prefix))
        .map(|(_, k)| k.to_string())
        .unwrap_or_else(|| format!("other: {reason}"))
}

fn skipped_view(s: &Value) -> Value {
    json!({"line": s["line"], "offset": s["offset"], "length": s["length"],
           "kind": skipped_kind(s)})
}

/// A read report (the library's, serialized) as the manifest spells it. A
/// report without `missingBlobs` (a library that does not check blobs) has none.
pub fn report_view(r: &Value) -> Value {
    let skipped: Vec<Value> = r["skipped"]
        .as_array()
        .into_iter()
        .flatten()
        .map(skipped_view)
        .collect();
    let torn = match &r["tornTail"] {
        Value::Null => Value::Null,
        t => skipped_view(t),
    };
    json!({
        "skipped": skipped,
        "tornTail": torn,
        "brokenChains": r["brokenChains"],
        "duplicateIds": r["duplicateIds"],
        "unknownRecords": r["unknownRecords"],
        "missingBlobs": r.get("missingBlobs").cloned().unwrap_or(json!([])),
        "warnings": r["warnings"].as_array().map(Vec::len),
    })
}

/// Collects mismatches, honouring the entry's known deviations.
pub struct Check {
    name: String,
    deviations: Vec<(String, Value, String)>,
    seen: HashSet<String>,
    failures: Vec<String>,
}

impl Check {
    pub fn new(name: &str, entry: &Value) -> Check {
        let deviations = entry["knownDeviations"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| {
                (
                    d["at"].as_str().unwrap().to_string(),
                    d["current"].clone(),
                    d["issue"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        Check {
            name: name.to_string(),
            deviations,
            seen: HashSet::new(),
            failures: Vec::new(),
        }
    }

    pub fn eq(&mut self, at: &str, actual: &Value, expected: &Value) {
        if let Some((_, current, issue)) = self.deviations.iter().find(|d| d.0 == at) {
            self.seen.insert(at.to_string());
            if actual == current {
                return;
            }
            let what = if actual == expected {
                "is fixed: remove it from knownDeviations".to_string()
            } else {
                format!("changed: got {actual}, expected {expected}, recorded {current}")
            };
            self.failures.push(format!(
                "{}: {at}: known deviation ({issue}) {what}",
                self.name
            ));
        } else if actual != expected {
            self.failures.push(format!(
                "{}: {at}: got {actual}, expected {expected}",
                self.name
            ));
        }
    }

    pub fn fail(&mut self, msg: String) {
        self.failures.push(format!("{}: {msg}", self.name));
    }

    /// Hand the failures over. With `all_deviations`, a deviation no check
    /// looked at is a failure too (a replay that checks only part of an entry
    /// passes `false`).
    pub fn finish(mut self, all: &mut Vec<String>, all_deviations: bool) {
        for (at, _, _) in &self.deviations {
            if all_deviations && !self.seen.contains(at) {
                self.failures.push(format!(
                    "{}: knownDeviation {at} was never checked",
                    self.name
                ));
            }
        }
        all.append(&mut self.failures);
    }
}

/// Compare a serialized read report with a manifest `report`, key by key.
pub fn check_report(c: &mut Check, at: &str, report: &Value, expected: &Value) {
    let actual = report_view(report);
    for (k, want) in expected.as_object().unwrap() {
        c.eq(&format!("{at}.{k}"), &actual[k], want);
    }
}

/// The row ids of the decision table (FORMAT §6.9): lines `| M4 | ...` between
/// its heading and the next section.
pub fn table_rows(format_md: &str) -> Vec<String> {
    let start = format_md
        .find("### 6.9 ")
        .expect("FORMAT.md has a section 6.9");
    let section = &format_md[start..];
    let end = section.find("\n## ").unwrap_or(section.len());
    section[..end]
        .lines()
        .filter_map(|l| {
            let cell = l.strip_prefix("| ")?.split(" |").next()?.trim();
            let ok = cell.len() >= 2
                && cell.as_bytes()[0].is_ascii_uppercase()
                && cell[1..].bytes().all(|b| b.is_ascii_digit());
            ok.then(|| cell.to_string())
        })
        .collect()
}
