//! The arguments validated into the settings the commands read: an [`Input`] and one settings
//! struct per command. No clap type goes further than this file.

use std::path::PathBuf;
#[cfg(feature = "apply")]
use std::time::Duration;

#[cfg(feature = "apply")]
use super::args::{
    ApplyArgs, ConnectionArgs, OutputArg, ProgressArg, ReleaseArgs, StorageArg, WaitArgs,
};
use super::args::{
    ColorArg, DEFAULT_RELEASE_NAME, DialectArg, DiffArgs, DiffFormatArg, FailOnArg, HelmArgs,
    InputArgs, LimitArgs, LintArgs, LintFormatArg, MigrateArgs, OutputFileArgs, ReadinessArgs,
    ReadinessFormatArg, TemplateArgs,
};
use crate::commands;
use crate::model::Input;
use crate::parse::Limits;
use crate::source::chart::ChartLimits;
use crate::source::helm::HelmOptions;
use crate::source::values::ValueInputs;

/// Every output format name of every command.
const FORMAT_NAMES: &[&str] = &[
    "human", "concise", "json", "sarif", "github", "junit", "text", "markdown", "table", "yaml",
    "dag", "dot", "mermaid",
];

impl OutputFileArgs {
    /// The file to write, or why `-o` is refused.
    fn file(&self) -> Result<Option<PathBuf>, commands::Failure> {
        if let Some(old) = &self.output_old {
            let name = old.to_string_lossy();
            if FORMAT_NAMES.contains(&name.as_ref()) {
                return Err(crate::error::Error::usage(format!(
                    "-o {name} would write the report to a file named `{name}`: use --format {name} for the format, or --output-file ./{name} for a file of that name"
                ))
                .into());
            }
            return Ok(Some(old.clone()));
        }
        Ok(self.output_file.clone())
    }
}

impl LintFormatArg {
    fn format(self) -> crate::report::Format {
        match self {
            LintFormatArg::Human => crate::report::Format::Human,
            LintFormatArg::Concise => crate::report::Format::Concise,
            LintFormatArg::Json => crate::report::Format::Json,
            LintFormatArg::Sarif => crate::report::Format::Sarif,
            LintFormatArg::Github => crate::report::Format::Github,
            LintFormatArg::Junit => crate::report::Format::Junit,
        }
    }
}

impl LintArgs {
    /// The validated settings of this command line.
    pub fn to_options(&self) -> Result<commands::lint::LintOptions, commands::Failure> {
        use crate::lint::Severity;
        Ok(commands::lint::LintOptions {
            input: self.input.to_input(),
            format: self.format.format(),
            also_report: self
                .also_report
                .iter()
                .map(|(f, p)| (f.format(), p.clone()))
                .collect(),
            ci_values: self.ci_values,
            values_matrix: self.values_matrix.then_some(self.values_matrix_max),
            output: self.output.file()?,
            fail_on: match self.fail_on {
                FailOnArg::Error => Some(Severity::Error),
                FailOnArg::Warning => Some(Severity::Warning),
                FailOnArg::Info => Some(Severity::Info),
                FailOnArg::Never => None,
            },
            select: crate::lint::config::SelectArgs {
                select: self.select.clone(),
                extend_select: self.extend_select.clone(),
                ignore: self.ignore.clone(),
            },
            config: self.config.clone(),
            timeout: self.timeout,
            readiness_timeout: self.readiness_timeout,
            color: match self.color {
                ColorArg::Auto => commands::lint::Color::Auto,
                ColorArg::Always => commands::lint::Color::Always,
                ColorArg::Never => commands::lint::Color::Never,
            },
            more_targets: self.more_targets.clone(),
            changed_since: self.changed_since.clone(),
            owning_charts: self.owning_charts,
            step_summary: matches!(self.format, LintFormatArg::Github)
                .then(|| std::env::var_os("GITHUB_STEP_SUMMARY"))
                .flatten()
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
        })
    }
}

#[cfg(feature = "apply")]
impl ConnectionArgs {
    fn connection(&self) -> crate::apply::cluster::Connection {
        crate::apply::cluster::Connection {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            server: self.api_server.clone(),
            token: self.token.clone(),
            insecure: self.insecure,
        }
    }

    /// The storage driver: `--storage`, else `$HELM_DRIVER` as helm reads it.
    fn driver(&self) -> Result<crate::apply::storage::Driver, commands::Failure> {
        use crate::apply::storage::Driver;
        match self.storage {
            Some(StorageArg::Secret) => Ok(Driver::Secret),
            Some(StorageArg::Configmap) => Ok(Driver::ConfigMap),
            None => {
                let env = std::env::var("HELM_DRIVER").unwrap_or_default();
                Driver::from_name(&env.to_ascii_lowercase())
                    .map_err(|e| crate::error::Error::usage(format!("$HELM_DRIVER: {e}")).into())
            }
        }
    }

    pub(super) fn settings(
        &self,
        namespace: Option<&str>,
        wait: Option<&WaitArgs>,
        output: Option<OutputArg>,
    ) -> Result<commands::apply::ClusterSettings, commands::Failure> {
        let json = match (wait, output) {
            (Some(w), _) => matches!(w.progress, ProgressArg::Json),
            (None, Some(o)) => matches!(o, OutputArg::Json),
            (None, None) => false,
        };
        let namespace = namespace.unwrap_or("default");
        if let Some(why) = crate::apply::names::check_namespace(namespace) {
            return Err(crate::error::Error::usage(format!(
                "invalid namespace {namespace:?}: {why}"
            ))
            .into());
        }
        Ok(commands::apply::ClusterSettings {
            namespace: namespace.to_owned(),
            connection: self.connection(),
            timeout: wait.map_or(Duration::from_secs(300), |w| w.timeout),
            readiness_timeout: wait.and_then(|w| w.readiness_timeout),
            wait_for_jobs: wait.is_some_and(|w| w.wait_for_jobs),
            progress: if json {
                commands::apply::Progress::Json
            } else {
                commands::apply::Progress::Human
            },
            driver: self.driver()?,
        })
    }
}

/// `--history-max`, else `$HELM_MAX_HISTORY` (as helm), else 10.
#[cfg(feature = "apply")]
pub(super) fn history_max(given: Option<usize>) -> usize {
    given
        .or_else(|| {
            std::env::var("HELM_MAX_HISTORY")
                .ok()
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(crate::apply::storage::DEFAULT_HISTORY_MAX)
}

#[cfg(feature = "apply")]
impl ReleaseArgs {
    pub(super) fn settings(
        &self,
        wait: Option<&WaitArgs>,
        output: Option<OutputArg>,
        dry_run: bool,
        history_max: usize,
    ) -> Result<commands::apply::ReleaseSettings, commands::Failure> {
        Ok(commands::apply::ReleaseSettings {
            release: self.name.clone(),
            cluster: self
                .connection
                .settings(self.namespace.as_deref(), wait, output)?,
            dry_run,
            history_max,
            take_ownership: false,
            argo_health: Vec::new(),
        })
    }
}

#[cfg(feature = "apply")]
impl ApplyArgs {
    pub(super) fn settings(&self) -> Result<commands::apply::ApplySettings, commands::Failure> {
        // `--release-name` keeps its default unless given (clap refuses it beside NAME).
        let flag = (self.input.helm.release_name != DEFAULT_RELEASE_NAME)
            .then(|| self.input.helm.release_name.clone());
        let Some(release) = self.name.clone().or(flag) else {
            return Err(crate::error::Error::usage(
                "a release name is required: chartseq apply NAME CHART (or --release-name NAME)",
            )
            .into());
        };
        let mut input = self.input.to_input();
        input.helm.release_name.clone_from(&release);
        Ok(commands::apply::ApplySettings {
            input,
            release,
            cluster: self.connection.settings(
                self.input.helm.namespace.as_deref(),
                Some(&self.wait),
                None,
            )?,
            atomic: self.atomic,
            dry_run: self.dry_run,
            diff: self.diff,
            force_conflicts: self.force_conflicts,
            take_ownership: self.take_ownership,
            create_namespace: self.create_namespace,
            no_lint: self.no_lint,
            history_max: history_max(self.history_max),
            dialect: self.dialect.choice(),
            argo_health: self.argo_health.clone(),
            values_reuse: if self.reuse_values {
                crate::apply::ValuesReuse::Reuse
            } else if self.reset_values {
                crate::apply::ValuesReuse::Reset
            } else if self.reset_then_reuse_values {
                crate::apply::ValuesReuse::ResetThenReuse
            } else {
                crate::apply::ValuesReuse::Auto
            },
        })
    }
}

impl InputArgs {
    /// The settings this command line asks for.
    #[must_use]
    pub fn to_input(&self) -> Input {
        to_input(&self.target, self.chart.clone(), &self.helm, &self.limits)
    }
}

/// The input of one target, rendered as `helm` says and bounded by `limits`.
fn to_input(
    target: &std::path::Path,
    chart: Option<PathBuf>,
    helm: &HelmArgs,
    limits: &LimitArgs,
) -> Input {
    Input {
        target: Input::target_for(target),
        chart,
        helm: HelmOptions {
            helm: helm.helm.clone(),
            release_name: helm.release_name.clone(),
            namespace: helm.namespace.clone(),
            kube_version: helm.kube_version.clone(),
            values: ValueInputs {
                files: helm.values.clone(),
                set: helm.set.clone(),
                set_string: helm.set_string.clone(),
                reused: None,
                reused_defaults: None,
            },
            timeout: helm.helm_timeout,
            max_output_bytes: limits.max_input_bytes,
            cancel: crate::source::read::Cancel::default(),
        },
        limits: Limits {
            max_depth: limits.max_depth,
            max_alias_nodes: limits.max_alias_nodes,
            max_document_bytes: limits.max_document_bytes,
        },
        chart_limits: ChartLimits {
            max_archive_bytes: limits.max_archive_bytes,
            ..ChartLimits::default()
        },
        max_input_bytes: limits.max_input_bytes,
    }
}

impl DialectArg {
    pub(super) fn choice(self) -> crate::plan::detect::Choice {
        self.0
    }
}

impl TemplateArgs {
    /// The input, reading helm's `template NAME CHART` form: with two arguments the first is
    /// the release name.
    pub(super) fn input_of_helm_form(&self) -> Result<Input, commands::Failure> {
        let mut input = self.input.to_input();
        if let Some(chart) = &self.then_chart {
            let name = self.input.target.to_string_lossy().into_owned();
            if self.input.helm.release_name != DEFAULT_RELEASE_NAME
                && self.input.helm.release_name != name
            {
                return Err(crate::error::Error::usage(format!(
                    "two release names: {name} (before the chart) and --release-name {}",
                    self.input.helm.release_name
                ))
                .into());
            }
            crate::source::helm::validate_release_name(&name)?;
            input.helm.release_name = name;
            input.target = Input::target_for(chart);
        }
        Ok(input)
    }
}

impl MigrateArgs {
    pub(super) fn settings(&self) -> crate::migrate::Settings {
        crate::migrate::Settings {
            input: self.input.to_input(),
            from: self.from.0,
            write: self.write,
            drop_source_annotations: self.drop_source_annotations,
            strict: self.strict,
        }
    }
}

impl ReadinessArgs {
    /// The settings this command line asks for.
    #[must_use]
    pub fn to_settings(&self) -> commands::readiness::ReadinessSettings {
        commands::readiness::ReadinessSettings {
            object: self.object.clone(),
            success: self.success.clone(),
            failure: self.failure.clone(),
            format: match self.format {
                ReadinessFormatArg::Text => commands::readiness::ReadinessFormat::Text,
                ReadinessFormatArg::Json => commands::readiness::ReadinessFormat::Json,
            },
            kstatus: crate::readiness::KstatusOptions {
                wait_for_jobs: self.wait_for_jobs,
                hook: false,
            },
            now: self.now,
            limits: Limits::default(),
        }
    }
}

impl DiffArgs {
    /// The validated settings of this command line.
    pub fn to_options(&self) -> Result<commands::diff::DiffOptions, commands::Failure> {
        use crate::diff::output::DiffFormat;
        // Each side's target is set when it is located; `-` stands for it until then.
        let input = to_input(std::path::Path::new("-"), None, &self.helm, &self.limits);
        Ok(commands::diff::DiffOptions {
            old: self.old.clone(),
            new: self.new.clone(),
            input,
            old_values: self.old_values.clone(),
            new_values: self.new_values.clone(),
            format: match self.format {
                DiffFormatArg::Text => DiffFormat::Text,
                DiffFormatArg::Json => DiffFormat::Json,
                DiffFormatArg::Markdown => DiffFormat::Markdown,
                DiffFormatArg::Github => DiffFormat::Github,
            },
            output: self.output.file()?,
            config: self.config.clone(),
            step_summary: matches!(self.format, DiffFormatArg::Github)
                .then(|| std::env::var_os("GITHUB_STEP_SUMMARY"))
                .flatten()
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
        })
    }
}
