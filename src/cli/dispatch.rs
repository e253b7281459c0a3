//! Runs the one command the command line asks for: standard output and error set up, the
//! command's settings handed to [`crate::commands`], the outcome turned into the exit status.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use super::args::{
    Cli, Command, DiffFormatArg, DocFormatArg, LintFormatArg, MigrateFormatArg, PlanFormatArg,
    RulesFormatArg,
};
use super::generate;
#[cfg(feature = "apply")]
use super::settings::history_max;
use crate::commands::{self, Outcome};
use crate::model::InputTarget;
use crate::plan::Dialect;
use crate::plan::detect::Choice;
use crate::plan::output::PlanFormat;

impl Command {
    /// Whether this run's output is read by GitHub's runner: a `github` format, or any command
    /// run inside GitHub Actions (`GITHUB_ACTIONS=true`).
    fn github_run(&self) -> bool {
        let format = match self {
            Command::Lint(args) => matches!(args.format, LintFormatArg::Github),
            Command::Diff(args) => matches!(args.format, DiffFormatArg::Github),
            _ => false,
        };
        format || std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")
    }
}

/// Runs the command line and returns the process exit code.
#[must_use]
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // The language server owns standard output (its protocol stream): it runs before this
    // thread locks it for the other commands.
    #[cfg(feature = "lsp")]
    if let Command::Lsp(args) = &cli.command {
        let options = crate::lsp::LspOptions {
            helm: args.helm.clone(),
            ..crate::lsp::LspOptions::default()
        };
        return match crate::lsp::run(&options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                let _ = commands::write_failure(&mut std::io::stderr(), &e.into());
                ExitCode::from(2)
            }
        };
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    // NOTE: standard error is not locked for the whole run: the progress display draws on it
    // from its own thread, which would wait for that lock while this thread waits for the
    // display's state (a lock-order deadlock). Each write takes the lock for itself.
    // In a GitHub run the runner reads every line of the log: standard error (chartseq's own
    // messages and helm's) goes through the one escaping writer there, so that no text from a
    // chart becomes a workflow command.
    let mut err: Box<dyn Write> = if cli.command.github_run() {
        Box::new(crate::report::github::Log::new(std::io::stderr()))
    } else {
        Box::new(std::io::stderr())
    };
    let outcome = run(cli.command, &mut out, &mut *err);
    let flushed = out.flush();
    let outcome = match (outcome, flushed) {
        (Ok(o), Ok(())) => Ok(o),
        (Err(e), _) => Err(e),
        (Ok(_), Err(e)) => Err(commands::Failure::Io(e)),
    };
    match outcome {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Findings) => ExitCode::from(1),
        Err(commands::Failure::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(commands::Failure::Reported) => ExitCode::from(2),
        Err(failure) => {
            let _ = commands::write_failure(&mut *err, &failure);
            ExitCode::from(2)
        }
    }
}

fn run(
    command: Command,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, commands::Failure> {
    match command {
        Command::Plan(args) => {
            let format = match args.format {
                PlanFormatArg::Text => PlanFormat::Text,
                PlanFormatArg::Dag => PlanFormat::Dag,
                PlanFormatArg::Json => PlanFormat::Json,
                PlanFormatArg::Dot => PlanFormat::Dot,
                PlanFormatArg::Mermaid => PlanFormat::Mermaid,
            };
            if matches!(args.format, PlanFormatArg::Dag)
                && (args.uninstall || args.dialect.0 != Choice::Dialect(Dialect::Hip))
            {
                return Err(commands::Failure::Tool(crate::error::Error::usage(
                    "--format dag prints what `helm dag` prints, the HIP-0025 install order only: it takes neither --uninstall nor another --dialect than hip",
                )));
            }
            commands::plan(
                &args.input.to_input(),
                args.dialect.choice(),
                format,
                args.uninstall,
                args.verbose,
                out,
                err,
            )
        }
        Command::Template(args) => {
            let input = args.input_of_helm_form()?;
            let options = crate::plan::output::TemplateOptions {
                include_crds: args.include_crds || matches!(input.target, InputTarget::Stream(_)),
                keep_sequencing_annotations: !args.strip_sequencing_annotations
                    && (!args.markers || args.keep_sequencing_annotations),
                markers: args.markers,
            };
            commands::template(&input, args.dialect.choice(), options, out, err)
        }
        Command::Lint(args) => commands::lint::lint(&args.to_options()?, out, err),
        Command::Explain(args) => {
            commands::lint::explain(&args.rule, matches!(args.format, DocFormatArg::Json), out)
        }
        Command::Rules(args) => {
            commands::lint::rules(matches!(args.format, RulesFormatArg::Json), out)
        }
        #[cfg(feature = "apply")]
        Command::Apply(args) => commands::apply::apply(&args.settings()?, out, err),
        #[cfg(feature = "apply")]
        Command::Uninstall(a) => commands::apply::uninstall(
            &a.release.settings(Some(&a.wait), None, a.dry_run, 0)?,
            out,
            err,
        ),
        #[cfg(feature = "apply")]
        Command::Rollback(a) => commands::apply::rollback(
            &commands::apply::ReleaseSettings {
                take_ownership: a.take_ownership,
                argo_health: a.argo_health.clone(),
                ..a.release
                    .settings(Some(&a.wait), None, a.dry_run, history_max(a.history_max))?
            },
            a.revision.unwrap_or(0),
            out,
            err,
        ),
        #[cfg(feature = "apply")]
        Command::History(a) => commands::apply::history(
            &a.release.settings(None, Some(a.output.output), false, 0)?,
            out,
            err,
        ),
        #[cfg(feature = "apply")]
        Command::Status(a) => commands::apply::status(
            &a.release.settings(None, Some(a.output.output), false, 0)?,
            out,
            err,
        ),
        #[cfg(feature = "apply")]
        Command::List(a) => commands::apply::list(
            &commands::apply::ListSettings {
                cluster: a.connection.settings(
                    a.namespace.as_deref(),
                    None,
                    Some(a.output.output),
                )?,
                all_namespaces: a.all_namespaces,
            },
            out,
            err,
        ),
        Command::Readiness(args) => commands::readiness::readiness(&args.to_settings(), out, err),
        Command::Diff(args) => commands::diff::diff(&args.to_options()?, out, err),
        #[cfg(feature = "lsp")]
        Command::Lsp(_) => Err(crate::error::Error::new(
            "the language server runs before standard output is taken (cli::main)",
        )
        .into()),
        Command::Completions { shell } => generate::completions(shell, out),
        Command::Man { dir } => generate::man(dir.as_deref(), out),
        Command::Migrate(args) => commands::migrate::migrate(
            &args.settings(),
            match args.format {
                MigrateFormatArg::Text => commands::migrate::MigrateFormat::Text,
                MigrateFormatArg::Json => commands::migrate::MigrateFormat::Json,
            },
            out,
            err,
        ),
    }
}
