//! Child processes of a test: this test binary run again for one entry point.

use std::process::Command;

/// This test binary, to run only `test`: an `#[ignore]`d test, so that a plain
/// run never counts a child's entry point as a passing test. The caller adds
/// the environment that tells the child its role.
#[allow(dead_code)] // not every test file that includes this spawns children
pub fn test_child(test: &str) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--ignored",
        "--exact",
        test,
        "--nocapture",
        "--test-threads=1",
    ]);
    c
}
