//! Records the commit and target for `frun --version` (falls back to "unknown" where git is
//! absent: source tarballs, the Nix sandbox), and with the `bash` feature compiles the bash front
//! end's small C part: a catch for bash's jumps to its top level, which Rust cannot express.
use std::process::Command;

fn main() {
    let commit = std::env::var("FRUN_GIT_COMMIT")
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| {
            Command::new("git")
                .args(["rev-parse", "--short=12", "HEAD"])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .map(|s| s.trim().to_string())
        });
    println!(
        "cargo:rustc-env=FRUN_GIT_COMMIT={}",
        commit.unwrap_or_else(|| "unknown".into())
    );
    println!(
        "cargo:rustc-env=FRUN_TARGET={}",
        std::env::var("TARGET").unwrap_or_default()
    );
    println!("cargo:rerun-if-env-changed=FRUN_GIT_COMMIT");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
    println!("cargo:rerun-if-changed=src/bash/shim.c");
    #[cfg(feature = "bash")]
    cc::Build::new()
        .file("src/bash/shim.c")
        .warnings(true)
        .compile("frun_bash_shim");
}
