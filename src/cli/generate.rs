//! Shell completions and manual pages, generated from the clap definitions in `cli/args.rs` so they
//! never drift from the flags (`chartseq completions SHELL`, `chartseq man`). The release
//! archives and packagers install their output.

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

use super::Cli;
use crate::commands::{Failure, Outcome};

/// The completion script for `shell` (bash, zsh, fish, powershell, elvish).
pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let mut cmd = Cli::command();
    // NOTE: generated into memory first: clap_complete panics on a failed write, and a closed
    // pipe (`chartseq completions bash | head`) must exit quietly instead.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "chartseq", &mut script);
    out.write_all(&script).map_err(Failure::Io)?;
    Ok(Outcome::Clean)
}

/// `chartseq(1)` on `out`, or with `dir` one page per command there (`chartseq.1`,
/// `chartseq-lint.1`, …), as `man -l` and packagers read them.
pub fn man(dir: Option<&Path>, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let cmd = Cli::command();
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(Failure::Io)?;
            clap_mangen::generate_to(cmd, dir).map_err(Failure::Io)?;
        }
        None => clap_mangen::Man::new(cmd)
            .render(out)
            .map_err(Failure::Io)?,
    }
    Ok(Outcome::Clean)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// What completions and manual pages are generated from is consistent (clap's own checks:
    /// no duplicate flags, valid defaults, …).
    #[test]
    fn clap_definitions_are_consistent() {
        super::Cli::command().debug_assert();
    }
}
