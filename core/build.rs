//! For the doc tests only: the repository's README (`#[cfg(doctest)]` in
//! lib.rs) with hidden lines that give its Rust example a temporary home, so
//! that `cargo test --doc` never writes to the user's `~/.sessionkit`, even
//! when run alone. The README itself shows the example as a user writes it.

use std::path::Path;

/// The line of the README's example after which the hidden lines go.
const MAIN: &str = "fn main() -> sessionkit::Result<()> {\n";
const HOME: &str = "# let doctest_home = tempfile::tempdir().unwrap();\n\
                    # std::env::set_var(\"SESSIONKIT_HOME\", doctest_home.path());\n";

fn main() {
    let readme = Path::new("../README.md");
    // The published crate has no repository README: its doc tests skip it.
    let text = if readme.exists() {
        println!("cargo:rerun-if-changed=../README.md");
        let text = std::fs::read_to_string(readme).expect("read ../README.md");
        let examples = text.matches("```rust").count();
        assert_eq!(
            text.matches(MAIN).count(),
            examples,
            "every Rust example of README.md must start with `{}` to get a temporary home",
            MAIN.trim_end()
        );
        text.replace(MAIN, &format!("{MAIN}{HOME}"))
    } else {
        String::new()
    };
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("README.doctest.md");
    std::fs::write(out, text).expect("write README.doctest.md");
    println!("cargo:rerun-if-changed=build.rs");
}
