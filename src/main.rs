//! The `chartseq` binary: parse arguments, run, map the outcome to an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    chartseq::cli::main()
}
