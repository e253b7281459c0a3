//! The command line as clap declares it: every command's arguments, their help and their value
//! parsers. What they mean is decided in [`super::settings`].

use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::Duration;

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::commands;
use crate::parse::Limits;
use crate::plan::Dialect;
use crate::plan::detect::Choice;
use crate::source::chart::ChartLimits;

#[derive(Debug, Parser)]
#[command(
    name = "chartseq",
    // The commit comes from build.rs (build/commit.rs says where it looks).
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("CHARTSEQ_COMMIT"), ")"),
    about = "Make Helm resource sequencing (HIP-0025) safe: lint, plan, template, judge readiness and apply sequenced charts"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the install order: CRDs, pre-install hooks, subchart and resource-group batches,
    /// unsequenced resources, post-install hooks.
    Plan(PlanArgs),
    /// Print the documents as the reference's `helm template` does, or (`--markers`) in install order with `## START/END resource-group` markers.
    Template(TemplateArgs),
    /// Find sequencing mistakes (rules CS000-CS901), each pointing at the template line.
    #[command(after_long_help = LINT_HELP)]
    Lint(LintArgs),
    /// Show the documentation of one rule.
    Explain(ExplainArgs),
    /// List every rule.
    Rules(RulesArgs),
    /// Judge recorded objects' readiness offline (custom expressions or kstatus), e.g. the
    /// output of `kubectl get -o yaml`. Helm with HIP-0025 judges the same way on a plain
    /// `--wait` too, not only with `--wait=ordered`.
    Readiness(ReadinessArgs),
    /// Install or upgrade a release, sequenced: CRDs, pre hooks, the plan as a DAG, post hooks.
    #[cfg(feature = "apply")]
    Apply(ApplyArgs),
    /// Delete a release in the exact reverse of its recorded plan, waiting for each step.
    #[cfg(feature = "apply")]
    Uninstall(UninstallArgs),
    /// Roll a release back to a recorded revision (default: the previous one).
    #[cfg(feature = "apply")]
    Rollback(RollbackArgs),
    /// List a release's revisions.
    #[cfg(feature = "apply")]
    History(InfoArgs),
    /// Show a release's latest revision, its recorded plan and how its last run went.
    #[cfg(feature = "apply")]
    Status(InfoArgs),
    /// List releases (Helm's and chartseq's), as `helm list` does.
    #[cfg(feature = "apply")]
    List(ListArgs),
    /// Compare two plans of a chart: resources added, removed and moved, orders gained and
    /// lost, waits and lint findings (exit 0 same, 1 different, 2 could not run).
    #[command(after_long_help = DIFF_HELP)]
    Diff(DiffArgs),
    /// Move a chart's ordering from werf, Argo CD, kapp, KOTS or draft-HIP annotations to HIP-0025:
    /// a patch of its templates and a proof of which constraints the new order keeps.
    Migrate(MigrateArgs),
    /// Run the language server on standard input and output: lint findings, the plan on
    /// hover, navigation, completion and quick fixes in any editor that speaks LSP.
    #[cfg(feature = "lsp")]
    Lsp(LspArgs),
    /// Print the shell completion script (bash, zsh, fish, powershell, elvish), e.g.
    /// `chartseq completions bash > /etc/bash_completion.d/chartseq`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page chartseq(1) (roff); with --dir write one page per command there.
    Man {
        /// Write chartseq.1, chartseq-lint.1, … into this directory instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

const LINT_HELP: &str = "\
Configuration: .chartseq.toml in the target's directory or above (or --config FILE):
  select = [\"CS\"]                codes, prefixes (CS3), rule names, or ALL
  extend-select = []
  ignore = [\"CS503\"]
  [severity]                     per-rule overrides: error, warning, info
  CS305 = \"error\"
  [per-file-ignores]             globs on template paths
  \"templates/jobs/*.yaml\" = [\"CS305\"]

Inline suppressions: the annotation `chartseq.io/ignore: \"CS305,CS501\"` on a resource, or the
comment `# chartseq: ignore[CS305]` on the line right above (comments survive helm template).

Targets: charts, directories of charts (every chart below but vendored subcharts; default: .),
archives or rendered streams, linted into one report. A chart helm cannot render is finding
CS900 of that chart, one whose own files cannot be loaded CS902; the others are still linted.
`chartseq rules` lists the rules; `chartseq explain CS101` documents one.

Exit status: 0 when no finding is at or above --fail-on, 1 otherwise, 2 when chartseq failed.";

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LintFormatArg {
    Human,
    Concise,
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// GitHub Actions annotations; appends a summary to `$GITHUB_STEP_SUMMARY` when set.
    Github,
    /// `JUnit` XML, for CI test reports.
    Junit,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FailOnArg {
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Args)]
#[command(mut_arg("target", |a| a
    .default_value(".")
    .index(1)
    .required(false)
    .help("A chart directory, a directory of charts (every chart under it but vendored subcharts), a packaged chart (.tgz), a rendered stream file, or `-` for stdin [default: .]")
    .hide_default_value(true)))]
pub struct LintArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: LintFormatArg,
    #[command(flatten)]
    pub output: OutputFileArgs,
    /// Exit 1 when a finding is at or above this severity.
    #[arg(long = "fail-on", value_enum, default_value = "error")]
    pub fail_on: FailOnArg,
    /// Rules to run (codes, prefixes like CS3, names, or ALL); replaces the configuration's.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub select: Option<Vec<String>>,
    /// Rules to run in addition to the selected ones.
    #[arg(long = "extend-select", value_delimiter = ',', value_name = "RULES")]
    pub extend_select: Vec<String>,
    /// Rules not to run.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub ignore: Vec<String>,
    /// Configuration file (default: .chartseq.toml in the target's directory or above).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The release timeout the plan must fit in (CS503), as for helm.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::duration::parse_duration)]
    pub timeout: Duration,
    /// The bound on each readiness wait (CS503); must not exceed --timeout.
    #[arg(long = "readiness-timeout", value_name = "DURATION", default_value = "1m", value_parser = crate::duration::parse_duration)]
    pub readiness_timeout: Duration,
    /// Colour the human output.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorArg,
    /// More charts or streams, linted into the same report.
    #[arg(value_name = "MORE", index = 2)]
    pub more_targets: Vec<PathBuf>,
    /// Lint only the charts under the targets with files changed since this git ref (the
    /// merge base with it, plus uncommitted changes), e.g. `--changed-since origin/main .`
    #[arg(long = "changed-since", value_name = "REF")]
    pub changed_since: Option<String>,
    /// The targets are files (as a pre-commit hook passes them): lint the chart roots they
    /// belong to, once each; files outside any chart are ignored.
    #[arg(long = "owning-charts", conflicts_with = "changed_since")]
    pub owning_charts: bool,
    /// Also write the report in another format to FILE, from the same run (repeatable), e.g.
    /// `--format github --also-report sarif=chartseq.sarif`: each chart is rendered once.
    #[arg(long = "also-report", value_name = "FORMAT=FILE", value_parser = parse_also_report)]
    pub also_report: Vec<(LintFormatArg, PathBuf)>,
    /// Lint each chart once per `ci/*-values.yaml` file it has (chart-testing's convention),
    /// after the `-f` files, naming the values file in each finding; a chart without one is
    /// linted once.
    #[arg(long = "ci-values")]
    pub ci_values: bool,
    /// Lint each chart under its default values, each `ci/*-values.yaml` file, and each
    /// subchart condition or tag flipped from its default one at a time; each finding is
    /// reported once, saying which value sets it appears under.
    #[arg(long = "values-matrix")]
    pub values_matrix: bool,
    /// The most renderings one chart's values matrix may run.
    #[arg(long = "values-matrix-max", value_name = "N", default_value_t = commands::lint::VALUES_MATRIX_MAX, requires = "values_matrix")]
    pub values_matrix_max: usize,
}

/// Where `lint` and `diff` write their report. `-o/--output` is the output format in helm's
/// commands (`list`, `status`, `history`); here it once named the file, and still does for
/// scripts written then, hidden, except for a format's name, which is refused: `lint -o json`
/// meant the format, not a file called `json`.
#[derive(Debug, Args)]
pub struct OutputFileArgs {
    /// Write the report to FILE instead of standard output.
    #[arg(long = "output-file", value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// The old spelling of --output-file.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        hide = true,
        conflicts_with = "output_file"
    )]
    pub output_old: Option<PathBuf>,
}

/// `FORMAT=FILE` of `--also-report`.
fn parse_also_report(text: &str) -> Result<(LintFormatArg, PathBuf), String> {
    let (format, file) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not FORMAT=FILE (e.g. sarif=chartseq.sarif)"))?;
    let format = LintFormatArg::from_str(format, false)?;
    if file.is_empty() {
        return Err(format!("`{text}` names no file"));
    }
    Ok((format, PathBuf::from(file)))
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DocFormatArg {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A rule code (CS101) or name (missing-resource-group).
    #[arg(value_name = "RULE")]
    pub rule: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: DocFormatArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RulesFormatArg {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct RulesArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: RulesFormatArg,
}

#[cfg(feature = "apply")]
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ProgressArg {
    Human,
    Json,
}

#[cfg(feature = "apply")]
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum StorageArg {
    Secret,
    Configmap,
}

#[cfg(feature = "apply")]
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OutputArg {
    Table,
    Json,
}

/// How to reach the cluster and where releases are stored, as helm's flags say it.
#[cfg(feature = "apply")]
#[derive(Debug, Args)]
pub struct ConnectionArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long = "kube-context", alias = "context", value_name = "NAME")]
    pub context: Option<String>,
    /// The address of the Kubernetes API server, instead of the context's.
    #[arg(long = "kube-apiserver", value_name = "URL")]
    pub api_server: Option<String>,
    /// A bearer token for the API server, instead of the context's credentials.
    #[arg(long = "kube-token", value_name = "TOKEN")]
    pub token: Option<String>,
    /// Do not verify the API server's certificate.
    #[arg(long = "kube-insecure-skip-tls-verify")]
    pub insecure: bool,
    /// Where releases are stored, as helm stores them (default: `$HELM_DRIVER`, else secret).
    #[arg(long, value_enum, value_name = "DRIVER")]
    pub storage: Option<StorageArg>,
}

/// How long to wait.
#[cfg(feature = "apply")]
#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Time the whole operation may take (Go duration: 5m, 90s).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::duration::parse_duration)]
    pub timeout: Duration,
    /// Time each readiness wait may take, at most --timeout (default: 1m, or --timeout when
    /// shorter).
    #[arg(long = "readiness-timeout", value_name = "DURATION", value_parser = crate::duration::parse_duration)]
    pub readiness_timeout: Option<Duration>,
    /// Wait for Jobs to complete (otherwise a started Job counts as ready).
    #[arg(long = "wait-for-jobs")]
    pub wait_for_jobs: bool,
    /// Progress output: live lines and a table, or JSON-lines events for CI.
    #[arg(long, value_enum, default_value = "human")]
    pub progress: ProgressArg,
}

#[cfg(feature = "apply")]
#[derive(Debug, Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches"
)]
#[command(
    allow_missing_positional = true,
    mut_arg("release_name", |a| a
        .alias("release")
        .hide_default_value(true)
        .conflicts_with("name")
        .help("The release name, instead of NAME (the same flag as in lint, plan and template)"))
)]
pub struct ApplyArgs {
    /// The release name, as in `helm upgrade --install NAME CHART` (or --release-name).
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// On failure, roll back (upgrade) or uninstall (install).
    #[arg(long)]
    pub atomic: bool,
    /// Server-side dry run of every apply; prints the plan, changes nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// With --dry-run: what the run would do to each object, in plan order (create, update
    /// with the changed fields, unchanged, prune), from server-side dry runs.
    #[arg(long, requires = "dry_run")]
    pub diff: bool,
    /// Take over fields other field managers own.
    #[arg(long = "force-conflicts")]
    pub force_conflicts: bool,
    /// Adopt existing objects that are not managed by Helm or belong to another release
    /// (otherwise the release is refused before anything is applied).
    #[arg(long = "take-ownership")]
    pub take_ownership: bool,
    /// Create the release namespace if it does not exist.
    #[arg(long = "create-namespace")]
    pub create_namespace: bool,
    /// Deploy even when checks find errors in the chart.
    #[arg(long = "no-lint")]
    pub no_lint: bool,
    /// Revisions kept per release (default: `$HELM_MAX_HISTORY`, else 10; 0: no limit).
    #[arg(long = "history-max", value_name = "N")]
    pub history_max: Option<usize>,
    /// Whose order and waits to deploy in: HIP-0025 (default) or another tool's, read from
    /// its own annotations.
    #[arg(long, value_enum, default_value = "hip")]
    pub dialect: DialectArg,
    /// Argo CD Lua health scripts to judge objects by with --dialect argo (repeatable): a
    /// directory laid out like argo-cd's `resource_customizations` (`<group>/<kind>/health.lua`,
    /// `_` a wildcard) or a YAML file holding an `argocd-cm` `ConfigMap`
    /// (`resource.customizations.health.<group>_<kind>`). `argocd-cm` scripts win over
    /// directories, later paths over earlier ones. A kind argo-cd checks with a built-in Lua
    /// script and given none here is waited by kstatus.
    #[arg(long = "argo-health", value_name = "PATH")]
    pub argo_health: Vec<PathBuf>,
    /// On upgrade, reuse the previous revision's values and chart defaults, with the given
    /// values over them (as `helm upgrade --reuse-values`).
    #[arg(long = "reuse-values", conflicts_with_all = ["reset_values", "reset_then_reuse_values"])]
    pub reuse_values: bool,
    /// On upgrade, use only the chart's defaults and the given values (as `helm upgrade
    /// --reset-values`). Without any of these flags, an upgrade given no values reuses the
    /// previous revision's, as helm does.
    #[arg(long = "reset-values", conflicts_with = "reset_then_reuse_values")]
    pub reset_values: bool,
    /// On upgrade, the chart's defaults, then the previous revision's values, then the given
    /// ones (as `helm upgrade --reset-then-reuse-values`).
    #[arg(long = "reset-then-reuse-values")]
    pub reset_then_reuse_values: bool,
}

#[cfg(feature = "apply")]
#[derive(Debug, Args)]
pub struct ReleaseArgs {
    /// The release name.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The release namespace.
    #[arg(short = 'n', long, value_name = "NS")]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

#[cfg(feature = "apply")]
#[derive(Debug, Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub release: ReleaseArgs,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Show what would be deleted, kept and left in place; change nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
}

#[cfg(feature = "apply")]
#[derive(Debug, Args)]
pub struct RollbackArgs {
    #[command(flatten)]
    pub release: ReleaseArgs,
    /// The revision to roll back to (default: the one before the newest, whatever its status,
    /// as `helm rollback`).
    #[arg(value_name = "REVISION")]
    pub revision: Option<u32>,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Server-side dry run of every apply; prune decisions shown, nothing changed.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// Revisions kept per release (default: `$HELM_MAX_HISTORY`, else 10; 0: no limit).
    #[arg(long = "history-max", value_name = "N")]
    pub history_max: Option<usize>,
    /// Adopt existing objects that are not managed by Helm or belong to another release
    /// (otherwise the rollback is refused before anything is applied).
    #[arg(long = "take-ownership")]
    pub take_ownership: bool,
    /// Argo CD Lua health scripts to judge objects by when the revision was deployed with --dialect argo (repeatable): a
    /// directory laid out like argo-cd's `resource_customizations` (`<group>/<kind>/health.lua`,
    /// `_` a wildcard) or a YAML file holding an `argocd-cm` `ConfigMap`
    /// (`resource.customizations.health.<group>_<kind>`). `argocd-cm` scripts win over
    /// directories, later paths over earlier ones. A kind argo-cd checks with a built-in Lua
    /// script and given none here is waited by kstatus.
    #[arg(long = "argo-health", value_name = "PATH")]
    pub argo_health: Vec<PathBuf>,
}

#[cfg(feature = "apply")]
#[derive(Debug, Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub release: ReleaseArgs,
    #[command(flatten)]
    pub output: OutputFormatArgs,
}

#[cfg(feature = "apply")]
#[derive(Debug, Args)]
pub struct ListArgs {
    /// The namespace to list.
    #[arg(short = 'n', long, value_name = "NS")]
    pub namespace: Option<String>,
    /// List releases in every namespace.
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub output: OutputFormatArgs,
}

/// How `history`, `status` and `list` print.
#[cfg(feature = "apply")]
#[derive(Debug, Args)]
pub struct OutputFormatArgs {
    /// Output format (as helm's `-o/--output`; `--format` as in the other commands).
    #[arg(
        short = 'o',
        long,
        visible_alias = "format",
        value_enum,
        default_value = "table"
    )]
    pub output: OutputArg,
}

/// helm template's release name when none is given.
pub(super) const DEFAULT_RELEASE_NAME: &str = "release-name";

/// Where the chart comes from and how to render it.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// A chart directory, a packaged chart (.tgz), a rendered stream file, or `-` for stdin.
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,
    /// Chart directory or archive supplying Chart.yaml facts for a rendered stream.
    #[arg(long, value_name = "DIR")]
    pub chart: Option<PathBuf>,
    #[command(flatten)]
    pub helm: HelmArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// How helm renders a chart: the same flags, meaning the same, in every command that renders
/// (lint, plan, template, apply, diff, migrate).
#[derive(Debug, Args)]
pub struct HelmArgs {
    /// The helm binary (default: `$CHARTSEQ_HELM`, then helm on `PATH`).
    #[arg(long, value_name = "PATH")]
    pub helm: Option<PathBuf>,
    /// Values files, as for helm (repeatable).
    #[arg(short = 'f', long = "values", value_name = "FILE")]
    pub values: Vec<PathBuf>,
    /// Set values on the command line, as for helm (repeatable).
    #[arg(long, value_name = "KEY=VAL")]
    pub set: Vec<String>,
    /// Set string values on the command line, as for helm (repeatable).
    #[arg(long = "set-string", value_name = "KEY=VAL")]
    pub set_string: Vec<String>,
    /// Release name passed to helm template.
    #[arg(
        long = "release-name",
        value_name = "NAME",
        default_value = DEFAULT_RELEASE_NAME
    )]
    pub release_name: String,
    /// Namespace passed to helm template.
    #[arg(short = 'n', long, value_name = "NS")]
    pub namespace: Option<String>,
    /// Kubernetes version passed to helm template.
    #[arg(long = "kube-version", value_name = "VERSION")]
    pub kube_version: Option<String>,
    /// Time helm template may run (Go duration: 5m, 90s; a bare number is seconds).
    #[arg(long = "helm-timeout", value_name = "DURATION", default_value = "5m", value_parser = crate::duration::parse_duration)]
    pub helm_timeout: Duration,
}

/// The caps on hostile input (README, `## Limits`).
#[derive(Debug, Args)]
pub struct LimitArgs {
    /// Deepest YAML nesting accepted in one document.
    #[arg(long = "max-depth", value_name = "N", default_value_t = Limits::default().max_depth)]
    pub max_depth: usize,
    /// Nodes YAML aliases may expand to in one document.
    #[arg(long = "max-alias-nodes", value_name = "N", default_value_t = Limits::default().max_alias_nodes)]
    pub max_alias_nodes: usize,
    /// Bytes one YAML document may have.
    #[arg(long = "max-document-bytes", value_name = "N", default_value_t = Limits::default().max_document_bytes)]
    pub max_document_bytes: usize,
    /// Bytes a chart archive may expand to, or a chart directory may hold (links followed).
    #[arg(long = "max-archive-bytes", value_name = "N", default_value_t = ChartLimits::default().max_archive_bytes)]
    pub max_archive_bytes: u64,
    /// Bytes a rendered stream (a file, standard input, helm's output) may have.
    #[arg(long = "max-input-bytes", value_name = "N", default_value_t = crate::source::read::MAX_INPUT_BYTES)]
    pub max_input_bytes: u64,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PlanFormatArg {
    Text,
    /// Exactly what the reference implementation's `helm dag` prints.
    Dag,
    Json,
    Dot,
    Mermaid,
}

/// Whose ordering `plan`, `template` and `apply` follow: a dialect by its name
/// ([`Dialect::all`]), or `auto`, the one whose annotations the chart carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DialectArg(pub Choice);

static DIALECT_ARGS: LazyLock<Vec<DialectArg>> = LazyLock::new(|| {
    Dialect::all()
        .map(|d| DialectArg(Choice::Dialect(d)))
        .chain([DialectArg(Choice::Auto)])
        .collect()
});

impl ValueEnum for DialectArg {
    fn value_variants<'a>() -> &'a [Self] {
        &DIALECT_ARGS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self.0 {
            Choice::Dialect(d) => PossibleValue::new(d.name()).help(d.summary()),
            Choice::Auto => PossibleValue::new("auto")
                .help("The dialect whose annotations the chart carries (HIP-0025 when none)"),
        })
    }
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Whose order to plan in.
    #[arg(long, value_enum, default_value = "hip")]
    pub dialect: DialectArg,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: PlanFormatArg,
    /// Print the deletion order (the exact reverse) instead.
    #[arg(long)]
    pub uninstall: bool,
    /// List every resource of the text plan's long lists (by default a list that does not fit
    /// a line shows its first ten names and counts the rest).
    #[arg(short, long)]
    pub verbose: bool,
}

#[derive(Debug, Args)]
#[command(mut_arg("target", |a| a
    .value_name("[NAME] TARGET")
    .help("A chart directory, a packaged chart (.tgz), a rendered stream file, or `-` for stdin; as helm's `helm template NAME CHART`, a release name may come first")))]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches"
)]
pub struct TemplateArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// With two arguments, the chart (the first is the release name).
    #[arg(value_name = "CHART", index = 2, hide = true)]
    pub then_chart: Option<PathBuf>,
    /// Whose order to print the documents in.
    #[arg(long, value_enum, default_value = "hip")]
    pub dialect: DialectArg,
    /// Print the install order with `## START/END resource-group` markers and without
    /// `helm.sh/depends-on/resource-groups`, as helm/helm#32314's ordered `helm template` did.
    /// Without it, the output is what the split pull requests' `helm template` prints: Helm's
    /// kind order, no markers, the key kept.
    #[arg(long)]
    pub markers: bool,
    /// Remove `helm.sh/depends-on/resource-groups` (not a valid annotation key: `kubectl apply`
    /// refuses it). Helm's `helm template` keeps it, and so does chartseq unless asked (or
    /// given --markers).
    #[arg(long = "strip-sequencing-annotations")]
    pub strip_sequencing_annotations: bool,
    /// With --markers, keep `helm.sh/depends-on/resource-groups` (so that the output can be
    /// planned again with its groups' dependencies).
    #[arg(
        long = "keep-sequencing-annotations",
        conflicts_with = "strip_sequencing_annotations"
    )]
    pub keep_sequencing_annotations: bool,
    /// Print the chart's crds/ documents first, as `helm template --include-crds` does (a
    /// rendered stream is always printed whole; plan, lint and apply always read crds/).
    #[arg(long = "include-crds")]
    pub include_crds: bool,
}

/// The tool a chart's order is migrated from: a dialect other than HIP-0025 by its name, or
/// `None` (`auto`) for whichever the chart's annotations name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FromArg(pub Option<Dialect>);

static FROM_ARGS: LazyLock<Vec<FromArg>> = LazyLock::new(|| {
    Dialect::all()
        .filter(|d| crate::migrate::mapping(*d).is_some())
        .map(|d| FromArg(Some(d)))
        .chain([FromArg(None)])
        .collect()
});

impl ValueEnum for FromArg {
    fn value_variants<'a>() -> &'a [Self] {
        &FROM_ARGS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self.0 {
            Some(d) => PossibleValue::new(d.name()).help(d.summary()),
            None => PossibleValue::new("auto").help("Whichever the chart's annotations name"),
        })
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum MigrateFormatArg {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The tool whose ordering annotations the chart carries.
    #[arg(long, value_enum)]
    pub from: FromArg,
    /// Write the edits into the chart's templates (default: print them as a unified diff).
    #[arg(long)]
    pub write: bool,
    /// Remove the source annotations the migration carried over (kept by default: the chart
    /// may still be deployed by the old tool).
    #[arg(long = "drop-source-annotations")]
    pub drop_source_annotations: bool,
    /// Exit 0 only when no order of the old tool is lost and no manual edit is pending; else
    /// exit 1 and end standard error with the lost orders.
    #[arg(long)]
    pub strict: bool,
    /// Output format: the diff (stdout) and the proof (stderr), or SPEC's JSON.
    #[arg(long, value_enum, default_value = "text")]
    pub format: MigrateFormatArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ReadinessFormatArg {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct LspArgs {
    /// The helm binary that renders the charts (default: `$CHARTSEQ_HELM`, then `PATH`).
    #[arg(long, value_name = "PATH")]
    pub helm: Option<PathBuf>,
    /// Accepted for editors that pass it; the server always speaks on stdin and stdout.
    #[arg(long, hide = true)]
    pub stdio: bool,
}

#[derive(Debug, Args)]
pub struct ReadinessArgs {
    /// A YAML file with one or more objects (a `kind: List` too), or `-` for stdin.
    #[arg(value_name = "OBJECT")]
    pub object: PathBuf,
    /// A success expression, e.g. '{.succeeded} == 1' (repeatable); replaces the objects'
    /// helm.sh/readiness-success annotation.
    #[arg(long, value_name = "EXPR")]
    pub success: Vec<String>,
    /// A failure expression, e.g. '{.failed} >= 1' (repeatable); replaces the objects'
    /// helm.sh/readiness-failure annotation.
    #[arg(long, value_name = "EXPR")]
    pub failure: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReadinessFormatArg,
    /// As helm's --wait-for-jobs: a Job counts as ready only once it is Complete.
    #[arg(long = "wait-for-jobs")]
    pub wait_for_jobs: bool,
    /// Judge at this instant (RFC 3339, e.g. 2025-01-01T00:00:00Z) instead of the clock: kstatus
    /// fails a Pod still unschedulable 15 s after its creationTimestamp.
    #[arg(long, value_name = "RFC3339", value_parser = parse_instant)]
    pub now: Option<std::time::SystemTime>,
}

/// `--now`: an RFC 3339 instant.
fn parse_instant(text: &str) -> Result<std::time::SystemTime, String> {
    crate::readiness::clock::parse_rfc3339(text)
        .ok_or_else(|| "expected an RFC 3339 time such as 2025-01-01T00:00:00Z".to_owned())
}

const DIFF_HELP: &str = "\
OLD and NEW are each a chart directory, a packaged chart (.tgz), a rendered stream, `-`, or a
chart at a git revision, REF:path (read with git, the working tree untouched; the path is
relative to the current directory, and an existing file or directory of that name wins):

  chartseq diff HEAD~1:charts/web charts/web
  chartseq diff origin/main:charts/web charts/web --format markdown -o comment.md

The helm flags (--values, --set, --release-name, --helm-timeout, ...) and the limits
(--max-depth, ...) apply to both sides, as in the other commands; --old-values and --new-values
add values files to one side.

Exit status: 0 when the plans are the same, 1 when they differ, 2 when the diff could not run.";

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DiffFormatArg {
    Text,
    Json,
    /// For a pull request comment, with a Mermaid drawing of the changed part of the plan.
    Markdown,
    /// GitHub Actions annotations; appends the Markdown to `$GITHUB_STEP_SUMMARY` when set.
    Github,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The old side: a TARGET or REF:path.
    #[arg(value_name = "OLD")]
    pub old: String,
    /// The new side: a TARGET or REF:path.
    #[arg(value_name = "NEW")]
    pub new: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: DiffFormatArg,
    #[command(flatten)]
    pub output: OutputFileArgs,
    /// Configuration file for the lint rules (default: .chartseq.toml from NEW or above).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub helm: HelmArgs,
    /// Values files for the old side only, after --values (repeatable).
    #[arg(long = "old-values", value_name = "FILE")]
    pub old_values: Vec<PathBuf>,
    /// Values files for the new side only, after --values (repeatable).
    #[arg(long = "new-values", value_name = "FILE")]
    pub new_values: Vec<PathBuf>,
    #[command(flatten)]
    pub limits: LimitArgs,
}
