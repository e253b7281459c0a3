//! `chartseq diff OLD NEW`: load and lint both sides, compare (SPEC §6), report. Exit 0 when
//! the plans are the same, 1 when they differ, 2 when the diff could not run — like `diff`.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Failure, Outcome};
use crate::diff::output::{DiffFormat, NewSide, Sides, write_diff};
use crate::error::Error;
use crate::lint::config::{self, SelectArgs};
use crate::lint::{Config, Selection, Settings};
use crate::model::{self, Input, Model};
use crate::source::display_path;
use crate::source::git::{Checkout, Revision, TempDir, checkout};

/// Everything `chartseq diff` needs, validated.
#[derive(Clone, Debug)]
pub struct DiffOptions {
    /// OLD and NEW as typed: a TARGET or `REF:path`.
    pub old: String,
    pub new: String,
    /// The input settings both sides share (values, release name, namespace, helm).
    pub input: Input,
    pub old_values: Vec<PathBuf>,
    pub new_values: Vec<PathBuf>,
    pub format: DiffFormat,
    pub output: Option<PathBuf>,
    pub config: Option<PathBuf>,
    /// `$GITHUB_STEP_SUMMARY`, for the `github` format.
    pub step_summary: Option<PathBuf>,
}

/// One side, loaded: the model, its lint report, and the temporary checkout it came from.
struct Loaded {
    model: Model,
    report: crate::lint::Report,
    _checkout: Option<TempDir>,
}

/// A side read from git: the revision, the temporary directory and what was written there.
type FromGit = (Revision, TempDir, Checkout);

/// Where a side comes from: a path on disk (or `-`), else a git revision.
fn locate(text: &str, input: &Input) -> Result<(PathBuf, Option<FromGit>), Failure> {
    let path = Path::new(text);
    if text == "-" || path.exists() {
        return Ok((path.to_path_buf(), None));
    }
    match Revision::parse(text) {
        Some(revision) => {
            let dir = TempDir::new("chartseq-diff")?;
            let copy = checkout(&revision, dir.path(), input.chart_limits)?;
            Ok((copy.target.clone(), Some((revision, dir, copy))))
        }
        None => Err(Error::usage(format!("{text}: no such chart, stream or file"))
            .with_detail("a side is a chart directory, a packaged chart (.tgz), a rendered stream, `-`, or REF:path for a chart at a git revision")
            .into()),
    }
}

/// Replaces the temporary checkout's paths in a finding's locations: a file of the chart by
/// `REF:path/...` as typed, a file a symbolic link leads to elsewhere in the repository by
/// `REF:` and its path from the current directory.
fn relabel(report: &mut crate::lint::Report, copy: &Checkout, revision: &Revision) {
    let shown = display_path(&copy.target);
    let roots: Vec<String> = [Some(copy.root.clone()), copy.root.canonicalize().ok()]
        .into_iter()
        .flatten()
        .map(|r| display_path(&r))
        .collect();
    let label = revision.to_string();
    let label = label.trim_end_matches('/');
    let prefix: Vec<&str> = copy.prefix.split('/').filter(|s| !s.is_empty()).collect();
    let swap = |file: &mut String| {
        if let Some(rest) = file.strip_prefix(&shown) {
            let rest = rest.trim_start_matches('/');
            *file = if rest.is_empty() {
                label.to_owned()
            } else {
                format!("{label}/{rest}")
            };
            return;
        }
        for root in &roots {
            let Some(rest) = file
                .strip_prefix(root.as_str())
                .and_then(|r| r.strip_prefix('/'))
            else {
                continue;
            };
            // From the repository's top to the current directory's terms.
            let parts: Vec<&str> = rest.split('/').collect();
            let shared = parts
                .iter()
                .zip(&prefix)
                .take_while(|(a, b)| a == b)
                .count();
            let mut path: Vec<&str> = vec![".."; prefix.len() - shared];
            path.extend(&parts[shared..]);
            *file = format!("{}:{}", revision.rev, path.join("/"));
            return;
        }
    };
    for f in &mut report.findings {
        swap(&mut f.location.file);
        if let Some(r) = &mut f.rendered {
            swap(&mut r.file);
        }
    }
}

/// A message about the temporary checkout, with its paths named as the user named them:
/// the target as `REF:path`, other files of the copy as `REF:` and their repository path.
fn unlabel(text: &str, copy: &Checkout, revision: &Revision) -> String {
    let text = text.replace(&display_path(&copy.target), &revision.to_string());
    let root = format!("{}/", display_path(&copy.root));
    text.replace(&root, &format!("{}:", revision.rev))
}

fn load_side(
    text: &str,
    values: &[PathBuf],
    options: &DiffOptions,
    settings: &Settings,
) -> Result<Loaded, Failure> {
    let (path, checkout) = locate(text, &options.input)?;
    let mut input = Input {
        target: Input::target_for(&path),
        ..options.input.clone()
    };
    input.helm.values.files.extend(values.iter().cloned());
    let model = model::load(&input).map_err(|e| {
        let mut e = e;
        if let Some((revision, _, copy)) = &checkout {
            // The temporary copy means nothing to the user: its paths become `REF:path`.
            e = e.map_text(
                |m| unlabel(m, copy, revision),
                |d| unlabel(d, copy, revision),
            );
        }
        if !e.message().contains(text) {
            e = e.map_text(|m| format!("{text}: {m}"), str::to_owned);
        }
        Failure::Tool(e)
    })?;
    let mut report = crate::lint::run(&model, settings);
    let checkout = checkout.map(|(revision, dir, copy)| {
        relabel(&mut report, &copy, &revision);
        dir
    });
    Ok(Loaded {
        model,
        report,
        _checkout: checkout,
    })
}

/// The lint settings both sides share: the configuration found from NEW (or the current
/// directory), so that a finding is new or fixed because the chart changed, not the rules.
fn settings(options: &DiffOptions) -> Result<Settings, Failure> {
    let start = if Path::new(&options.new).exists() && options.new != "-" {
        PathBuf::from(&options.new)
    } else {
        PathBuf::from(".")
    };
    let config = match options.config.clone().or_else(|| config::discover(&start)) {
        Some(path) => {
            Config::load(&path).map_err(|e| Error::invalid(format!("{}: {}", e.path, e.message)))?
        }
        None => Config::default(),
    };
    let selection = Selection::build(&config, &SelectArgs::default()).map_err(Error::new)?;
    Ok(Settings {
        selection,
        config,
        ..Settings::default()
    })
}

/// `chartseq diff`.
pub fn diff(
    options: &DiffOptions,
    out: &mut dyn Write,
    _err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    if options.old == "-" && options.new == "-" {
        return Err(Error::usage("OLD and NEW cannot both be standard input (`-`)").into());
    }
    let settings = settings(options)?;
    let old = load_side(&options.old, &options.old_values, options, &settings)?;
    let new = load_side(&options.new, &options.new_values, options, &settings)?;
    let result = crate::diff::diff(&old.model, &old.report, &new.model, &new.report);
    let sides = Sides {
        old: options.old.clone(),
        new: options.new.clone(),
    };
    let new_side = NewSide {
        model: &new.model,
        report: &new.report,
    };
    match &options.output {
        Some(path) => {
            let mut buffer = Vec::new();
            write_diff(
                &mut buffer,
                options.format,
                &result,
                &sides,
                &new_side,
                options.step_summary.as_ref(),
            )?;
            std::fs::write(path, buffer)
                .map_err(|e| Error::io(format!("cannot write {}", display_path(path)), e))?;
        }
        None => write_diff(
            out,
            options.format,
            &result,
            &sides,
            &new_side,
            options.step_summary.as_ref(),
        )?,
    }
    Ok(if result.is_empty() {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}
