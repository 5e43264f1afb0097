//! Instruction files: the order from the user level and the repository root down
//! to the working directory, the names recognised (from the call, the settings,
//! or the defaults), `@path` includes with their depth limit, cycles, and files
//! that resolve outside the allowed roots (symlinks, `../`, absolute paths),
//! and FIFOs where files are expected.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::json;
use sessionkit::{
    ErrorKind, InstructionLevel, InstructionOptions, Instructions, ProblemKind, SettingSource,
    StoreOptions,
};

#[path = "support/env.rs"]
mod support_env;
use support_env::{env_with, mkfifo, within_seconds, Env};

fn env() -> Env {
    env_with(StoreOptions::default())
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn canon(p: &Path) -> PathBuf {
    fs::canonicalize(p).unwrap()
}

fn listed(i: &Instructions) -> Vec<(PathBuf, InstructionLevel, usize)> {
    i.files
        .iter()
        .map(|f| (f.path.clone(), f.level, f.depth))
        .collect()
}

fn problems(i: &Instructions) -> Vec<(ProblemKind, PathBuf)> {
    i.problems
        .iter()
        .map(|p| (p.kind, p.path.clone()))
        .collect()
}

#[test]
fn files_apply_from_the_user_and_the_repository_root_down_to_the_directory() {
    let e = env();
    let home = canon(e.home.path());
    let repo = canon(e.project.path()).join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    write(&home.join("AGENTS.md"), "user");
    // Above the repository root: not applied.
    write(&repo.parent().unwrap().join("AGENTS.md"), "above");
    write(&repo.join("CLAUDE.md"), "root claude");
    write(&repo.join("AGENTS.md"), "root agents");
    write(&repo.join("sub/deep/AGENTS.md"), "deep");
    write(&repo.join("sub/other/AGENTS.md"), "sibling");
    let i = e
        .store
        .instructions(&repo.join("sub/deep"), &InstructionOptions::default())
        .unwrap();
    assert_eq!(i.root, repo);
    assert_eq!(i.names, ["AGENTS.md", "CLAUDE.md"]);
    use InstructionLevel::*;
    assert_eq!(
        listed(&i),
        [
            (home.join("AGENTS.md"), User, 0),
            (repo.join("AGENTS.md"), Project, 0),
            (repo.join("CLAUDE.md"), Project, 0),
            (repo.join("sub/deep/AGENTS.md"), Project, 0),
        ]
    );
    assert_eq!(i.files[3].content, "deep");
    assert!(i.problems.is_empty());
}

#[test]
fn without_a_repository_the_walk_starts_at_the_project_root() {
    let e = env();
    let root = canon(e.project.path());
    write(&root.join("AGENTS.md"), "root");
    write(&root.join("a/AGENTS.md"), "a");
    let i = e
        .store
        .instructions(&root.join("a"), &InstructionOptions::default())
        .unwrap();
    assert_eq!(i.root, root);
    assert_eq!(i.files.len(), 2);
}

#[test]
fn names_come_from_the_call_then_the_settings() {
    let e = env();
    let root = canon(e.project.path());
    write(&root.join("AGENTS.md"), "agents");
    write(&root.join("TEAM.md"), "team");
    e.store
        .set_setting(
            SettingSource::Project,
            "instructions.names",
            json!(["TEAM.md"]),
        )
        .unwrap();
    let i = e
        .store
        .instructions(&root, &InstructionOptions::default())
        .unwrap();
    assert_eq!(
        i.files
            .iter()
            .map(|f| f.content.as_str())
            .collect::<Vec<_>>(),
        ["team"]
    );
    let call = InstructionOptions {
        names: Some(vec!["AGENTS.md".into()]),
        ..InstructionOptions::default()
    };
    let i = e.store.instructions(&root, &call).unwrap();
    assert_eq!(
        i.files
            .iter()
            .map(|f| f.content.as_str())
            .collect::<Vec<_>>(),
        ["agents"]
    );
    for bad in ["../AGENTS.md", "a/AGENTS.md", "..", ""] {
        let call = InstructionOptions {
            names: Some(vec![bad.into()]),
            ..InstructionOptions::default()
        };
        let err = e.store.instructions(&root, &call).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad:?}");
    }
}

#[test]
fn includes_follow_their_file_up_to_the_depth_limit() {
    let e = env();
    let root = canon(e.project.path());
    write(
        &root.join("AGENTS.md"),
        "Read @docs/one.md first.\n```\n@docs/not-this.md\n```\n",
    );
    write(&root.join("docs/one.md"), "one, then @two.md");
    write(&root.join("docs/two.md"), "two, then @three.md");
    write(&root.join("docs/three.md"), "three");
    write(&root.join("CLAUDE.md"), "@missing.md");
    let i = e
        .store
        .instructions(&root, &InstructionOptions::default())
        .unwrap();
    use InstructionLevel::*;
    assert_eq!(
        listed(&i),
        [
            (root.join("AGENTS.md"), Project, 0),
            (root.join("docs/one.md"), Include, 1),
            (root.join("docs/two.md"), Include, 2),
            (root.join("docs/three.md"), Include, 3),
            (root.join("CLAUDE.md"), Project, 0),
        ]
    );
    assert_eq!(
        i.files[1].included_from.as_deref(),
        Some(root.join("AGENTS.md").as_path())
    );
    assert_eq!(
        problems(&i),
        [(ProblemKind::NotFound, root.join("missing.md"))]
    );

    let shallow = InstructionOptions {
        max_include_depth: Some(2),
        ..InstructionOptions::default()
    };
    let i = e.store.instructions(&root, &shallow).unwrap();
    assert_eq!(i.files.len(), 4);
    assert_eq!(
        problems(&i)[0],
        (ProblemKind::DepthLimit, root.join("docs/three.md"))
    );
    assert!(
        i.problems[0].message.contains("limit of 2"),
        "{}",
        i.problems[0].message
    );

    // A depth past the cap is refused, from the call or from the settings.
    let deep = InstructionOptions {
        max_include_depth: Some(1 << 40),
        ..InstructionOptions::default()
    };
    let err = e.store.instructions(&root, &deep).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("option maxIncludeDepth"), "{err}");
    e.store
        .set_setting(
            SettingSource::Local,
            "instructions.maxIncludeDepth",
            json!(100_000),
        )
        .unwrap();
    let err = e
        .store
        .instructions(&root, &InstructionOptions::default())
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("setting instructions.maxIncludeDepth must be at most 64, not 100000"),
        "{err}"
    );
}

#[test]
fn an_include_cycle_is_reported_and_each_file_read_once() {
    let e = env();
    let root = canon(e.project.path());
    write(&root.join("AGENTS.md"), "@a.md");
    write(&root.join("a.md"), "@b.md");
    write(&root.join("b.md"), "@a.md and @AGENTS.md");
    let i = e
        .store
        .instructions(&root, &InstructionOptions::default())
        .unwrap();
    assert_eq!(i.files.len(), 3);
    assert_eq!(
        problems(&i),
        [
            (ProblemKind::Cycle, root.join("a.md")),
            (ProblemKind::Cycle, root.join("AGENTS.md"))
        ]
    );
    assert!(
        i.problems[0].message.contains("include cycle"),
        "{}",
        i.problems[0].message
    );
}

#[test]
fn nothing_outside_the_allowed_roots_is_read() {
    let e = env();
    let root = canon(e.project.path()).join("repo");
    fs::create_dir_all(root.join(".git")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = canon(outside.path()).join("secret.md");
    write(&secret, "SECRET");
    // A symlinked instruction file, a `../` include and an absolute include.
    symlink(&secret, root.join("CLAUDE.md")).unwrap();
    write(
        &root.join("AGENTS.md"),
        &format!(
            "@../../../{} @{} @../../../nowhere/x.md",
            secret.strip_prefix("/").unwrap().display(),
            secret.display()
        ),
    );
    write(
        &root.parent().unwrap().join("sibling.md"),
        "beside the repo",
    );
    write(&root.join("docs/x.md"), "@../../sibling.md");
    fs::create_dir_all(root.join("docs/linked")).unwrap();
    symlink(outside.path(), root.join("docs/linked/out")).unwrap();
    write(&root.join("docs/AGENTS.md"), "@x.md @linked/out/secret.md");
    let i = e
        .store
        .instructions(&root.join("docs"), &InstructionOptions::default())
        .unwrap();
    assert!(
        i.files.iter().all(|f| !f.content.contains("SECRET")),
        "{:?}",
        i.files
    );
    assert!(
        i.files.iter().all(|f| !f.content.contains("beside")),
        "{:?}",
        i.files
    );
    let outside_kinds = i
        .problems
        .iter()
        .filter(|p| p.kind == ProblemKind::OutsideRoots)
        .count();
    assert_eq!(outside_kinds, 6, "{:?}", i.problems);
    assert!(i.problems[0].message.contains("outside the allowed roots"));
}

#[test]
fn a_huge_file_is_reported_not_read() {
    let e = env();
    let root = canon(e.project.path());
    write(&root.join("AGENTS.md"), &"x".repeat(256 * 1024 + 1));
    let i = e
        .store
        .instructions(&root, &InstructionOptions::default())
        .unwrap();
    assert!(i.files.is_empty());
    assert_eq!(
        problems(&i),
        [(ProblemKind::TooLarge, root.join("AGENTS.md"))]
    );
}

#[test]
fn a_missing_directory_is_not_found() {
    let e = env();
    let err = e
        .store
        .instructions(
            &e.project.path().join("nope"),
            &InstructionOptions::default(),
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("nope"), "{err}");
}

#[test]
fn a_fifo_is_reported_without_blocking() {
    let e = env();
    let root = canon(e.project.path());
    mkfifo(&root.join("AGENTS.md"));
    write(&root.join("CLAUDE.md"), "@pipe.md");
    mkfifo(&root.join("pipe.md"));
    let dir = root.clone();
    let i = within_seconds(&e, move |store| {
        store.instructions(&dir, &InstructionOptions::default())
    })
    .unwrap();
    assert_eq!(
        listed(&i),
        [(root.join("CLAUDE.md"), InstructionLevel::Project, 0)]
    );
    assert_eq!(
        problems(&i),
        [
            (ProblemKind::Unreadable, root.join("AGENTS.md")),
            (ProblemKind::Unreadable, root.join("pipe.md"))
        ]
    );
}
