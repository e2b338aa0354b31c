//! The command-line reference (`docs/guide/cli-reference.md`) is clap's own help, generated:
//! this test fails when the checked-in copy is stale. `POSEGPU_BLESS=1 cargo test --release
//! --test reference` rewrites it.

use std::process::Command;

const SUBCOMMANDS: [&str; 7] = [
    "demo", "info", "eval", "retarget", "render", "check", "bench",
];

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .args(args)
        .arg("--help")
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn reference() -> String {
    let mut md = String::from(
        "# Command-line reference\n\nGenerated from the command's own help \
         (`crates/posegpu-cli/tests/reference.rs`; `POSEGPU_BLESS=1 cargo test --release --test \
         reference` rewrites it). What each command is for, with examples: \
         [the command line](command-line.md).\n\n## posegpu\n\n```text\n",
    );
    md.push_str(&help(&[]));
    md.push_str("```\n");
    for sub in SUBCOMMANDS {
        md.push_str(&format!("\n## posegpu {sub}\n\n```text\n"));
        md.push_str(&help(&[sub]));
        md.push_str("```\n");
    }
    md
}

#[test]
fn the_reference_is_the_commands_help() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guide/cli-reference.md");
    let fresh = reference();
    if std::env::var_os("POSEGPU_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == fresh,
        "{} is stale: run POSEGPU_BLESS=1 cargo test --release --test reference",
        path.display()
    );
}
