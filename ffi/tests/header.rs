//! The checked-in C header is what cbindgen generates from this crate (opened by
//! the crate documentation of src/lib.rs), and its version macros match
//! Cargo.toml.

use std::path::PathBuf;

const REGENERATE: &str = "SK_UPDATE_HEADER=1 cargo test -p sessionkit-ffi --test header";

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn header_path() -> PathBuf {
    crate_dir().join("../include/sessionkit.h")
}

/// The version macros, from this crate's Cargo.toml version.
fn version_macros() -> String {
    format!(
        "/* The version of the library this header belongs to (from Cargo.toml). */\n\
         #define SK_VERSION \"{}\"\n\
         #define SK_VERSION_MAJOR {}\n\
         #define SK_VERSION_MINOR {}\n\
         #define SK_VERSION_PATCH {}",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
    )
}

/// The comment that opens the header: the crate documentation of src/lib.rs,
/// so that the conventions are written once.
fn crate_doc_comment() -> String {
    let lib = std::fs::read_to_string(crate_dir().join("src/lib.rs")).expect("read src/lib.rs");
    let mut out = String::from("/*\n");
    for line in lib.lines().map_while(|l| l.strip_prefix("//!")) {
        assert!(
            !line.contains("*/"),
            "`*/` in the crate doc would end the comment"
        );
        out.push_str(" *");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(" */");
    out
}

fn generate() -> String {
    let dir = crate_dir();
    let mut config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    config.header = Some(crate_doc_comment());
    config.after_includes = Some(version_macros());
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen failed")
        .write(&mut out);
    String::from_utf8(out).expect("header is UTF-8")
}

#[test]
fn header_is_up_to_date() {
    let fresh = generate();
    let path = header_path();
    if std::env::var_os("SK_UPDATE_HEADER").is_some() {
        std::fs::write(&path, &fresh).expect("write header");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    if checked_in != fresh {
        let first = checked_in
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(checked_in.lines().count().min(fresh.lines().count()));
        panic!(
            "include/sessionkit.h is stale (first difference at line {}).\n\
             Regenerate it with:\n    {REGENERATE}\nand commit the result.",
            first + 1
        );
    }
}

fn macro_value<'a>(header: &'a str, name: &str) -> &'a str {
    let prefix = format!("#define {name} ");
    header
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("{name} missing from the header"))
        .trim()
}

#[test]
fn version_macros_match_cargo_toml() {
    let header = std::fs::read_to_string(header_path()).expect("read header");
    // Read Cargo.toml itself rather than trusting the env of this build.
    let manifest = std::fs::read_to_string(crate_dir().join("../Cargo.toml")).unwrap();
    let version = manifest
        .lines()
        .skip_while(|l| l.trim() != "[workspace.package]")
        .find_map(|l| l.trim().strip_prefix("version = "))
        .expect("workspace version")
        .trim_matches('"');
    assert_eq!(macro_value(&header, "SK_VERSION"), format!("\"{version}\""));
    let parts: Vec<&str> = version.split(['.', '-', '+']).collect();
    assert_eq!(macro_value(&header, "SK_VERSION_MAJOR"), parts[0]);
    assert_eq!(macro_value(&header, "SK_VERSION_MINOR"), parts[1]);
    assert_eq!(macro_value(&header, "SK_VERSION_PATCH"), parts[2]);
    // SK_ABI_VERSION comes from the crate's constant; the C tests check that
    // sk_version() and sk_abi_version() agree with these macros at run time.
    let lib = std::fs::read_to_string(crate_dir().join("src/lib.rs")).unwrap();
    let abi = lib
        .lines()
        .find_map(|l| l.strip_prefix("pub const SK_ABI_VERSION: u32 = "))
        .expect("SK_ABI_VERSION in src/lib.rs")
        .trim_end_matches(';');
    assert_eq!(macro_value(&header, "SK_ABI_VERSION"), abi);
}
