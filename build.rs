//! Build script: records the commit chartseq is built from (`chartseq --version`), see
//! `build/commit.rs`.

#[path = "build/commit.rs"]
mod commit;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=build/commit.rs");
    println!("cargo::rerun-if-env-changed=CHARTSEQ_COMMIT");
    let manifest_dir = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let from_env = std::env::var("CHARTSEQ_COMMIT").ok();
    let found = commit::find(&manifest_dir, from_env.as_deref());
    for file in &found.watch {
        println!("cargo::rerun-if-changed={}", file.display());
    }
    println!("cargo::rustc-env=CHARTSEQ_COMMIT={}", found.commit);
}
