//! Command-line arguments (clap) and their translation into settings.
//!
//! Nothing past this module sees a clap type: arguments become [`crate::model::Input`] and
//! per-command settings, which the [`crate::commands`] read. [`args`] declares the command
//! line, [`settings`] validates it into settings, [`dispatch`] runs the command asked for.

mod args;
mod dispatch;
mod generate;
mod settings;

#[cfg(feature = "apply")]
pub use args::{
    ApplyArgs, ConnectionArgs, InfoArgs, ListArgs, OutputArg, ProgressArg, ReleaseArgs,
    RollbackArgs, StorageArg, UninstallArgs, WaitArgs,
};
pub use args::{
    Cli, ColorArg, Command, DialectArg, DiffArgs, DiffFormatArg, DocFormatArg, ExplainArgs,
    FailOnArg, FromArg, HelmArgs, InputArgs, LimitArgs, LintArgs, LintFormatArg, LspArgs,
    MigrateArgs, MigrateFormatArg, OutputFileArgs, PlanArgs, PlanFormatArg, ReadinessArgs,
    ReadinessFormatArg, RulesArgs, RulesFormatArg, TemplateArgs,
};
pub use dispatch::main;
