//! How a message a host gives is written (FORMAT.md §5.2): its numbers keep
//! their values, strings are escaped exactly as the spec lists, and numbers are
//! laid out in the documented form.

use serde_json::Value;
use sessionkit::{CreateOptions, Durability, StoreOptions};

#[path = "support/env.rs"]
mod support_env;
use support_env::{env_with, Env};

fn env() -> Env {
    env_with(StoreOptions {
        durability: Durability::Never,
        ..StoreOptions::default()
    })
}

/// Append the message given as JSON text, as a runner or the C ABI receives
/// it, and return its line in the log.
fn written_line(e: &Env, text: &str) -> String {
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    let v: Value = serde_json::from_str(text).unwrap();
    s.append(v).unwrap();
    let id = s.id().to_string();
    s.close().unwrap();
    let log = std::fs::read_to_string(e.store.log_path(&id).unwrap()).unwrap();
    log.lines().nth(1).unwrap().to_string()
}

/// Binary64 values spread over the whole range, from a fixed xorshift.
fn floats(n: usize) -> Vec<f64> {
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let f = f64::from_bits(x);
        if f.is_finite() {
            out.push(f);
        }
    }
    out
}

#[test]
fn a_hosts_floats_keep_their_values() {
    let e = env();
    let values = floats(2000);
    // Each in its shortest form, as a host's JSON library writes it.
    let text: Vec<String> = values.iter().map(|f| format!("{f:e}")).collect();
    let line = written_line(
        &e,
        &format!(
            r#"{{"role":"user","content":"x","n":[{}]}}"#,
            text.join(",")
        ),
    );
    let stored = line
        .split(r#""n":["#)
        .nth(1)
        .unwrap()
        .trim_end_matches("]}");
    let back: Vec<f64> = stored.split(',').map(|t| t.parse().unwrap()).collect();
    let changed: Vec<(&String, f64)> = text
        .iter()
        .zip(&values)
        .zip(&back)
        .filter(|((_, a), b)| a.to_bits() != b.to_bits())
        .map(|((t, _), b)| (t, *b))
        .collect();
    assert!(
        changed.is_empty(),
        "{} of {} floats were stored as other values, e.g. {:?}",
        changed.len(),
        values.len(),
        &changed[..changed.len().min(3)]
    );
}

#[test]
fn numbers_and_strings_are_written_in_the_documented_form() {
    let e = env();
    let line = written_line(
        &e,
        r#"{"role":"user","content":"a\u0000\u0008\u0009\u000a\u000b\u000c\u000d\u001f\u007f\u0080\u2028\/\u00e9🚧\"\\",
            "n":[1.0,1E2,100,-0,-0.0,0e5,1e15,1e16,1e-5,1e-6,123e-2,9007199254740993,18446744073709551615,
                 18446744073709551616,-9223372036854775808,-9223372036854775809,1.5e-7,5e-324,1e21]}"#,
    );
    let tail = line.split(r#""content":"#).nth(1).unwrap();
    assert_eq!(
        tail,
        "\"a\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f\u{7f}\u{80}\u{2028}/é🚧\\\"\\\\\",\
         \"n\":[1.0,100.0,100,-0.0,-0.0,0.0,1000000000000000.0,1e+16,0.00001,1e-6,1.23,\
         9007199254740993,18446744073709551615,1.8446744073709552e+19,-9223372036854775808,\
         -9.223372036854776e+18,1.5e-7,5e-324,1e+21]}"
    );
}
