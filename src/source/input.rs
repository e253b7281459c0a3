//! What a model is built from, read: the chart (its files and the user's values) and the
//! rendered stream (`helm template`'s output, a file or standard input), refused early when it
//! is no stream at all (UTF-16, binary data, an archive, too large). All the I/O of building a
//! model is here; [`crate::model::build`] makes the model from what was read with none.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::parse::Limits;
use crate::source::chart::{self, ChartLimits, LoadedChart};
use crate::source::helm::{self, HelmOptions};
use crate::source::values;
use crate::source::{FileId, Origin, SourceMap, display_path, read};

/// What to load.
#[derive(Clone, Debug)]
pub enum InputTarget {
    /// A chart directory or `.tgz`, rendered with `helm template`.
    Chart(PathBuf),
    /// A rendered stream in a file, or `-` for standard input.
    Stream(PathBuf),
}

/// Everything needed to build a model.
#[derive(Clone, Debug)]
pub struct Input {
    pub target: InputTarget,
    /// `--chart`: chart metadata for a rendered stream.
    pub chart: Option<PathBuf>,
    pub helm: HelmOptions,
    pub limits: Limits,
    pub chart_limits: ChartLimits,
    /// Bytes a rendered stream (a file, standard input) may have.
    pub max_input_bytes: u64,
}

impl Input {
    /// Classifies a command-line TARGET: `-`, a directory with `Chart.yaml`, a `.tgz`, or a
    /// rendered stream file.
    #[must_use]
    pub fn target_for(path: &Path) -> InputTarget {
        let is_archive = path.extension().is_some_and(|e| e == "tgz")
            || path.to_string_lossy().ends_with(".tar.gz");
        if path.as_os_str() != "-"
            && (path.join("Chart.yaml").is_file() || is_archive && path.is_file())
        {
            InputTarget::Chart(path.to_path_buf())
        } else {
            InputTarget::Stream(path.to_path_buf())
        }
    }
}

/// Everything read for one model.
pub struct Read {
    pub sources: SourceMap,
    /// The chart, when there is one (a chart target, or `--chart` beside a stream).
    pub chart: Option<LoadedChart>,
    /// The user's values (`-f`, `--set`, …), read when there is a chart.
    pub user: Option<serde_json::Value>,
    /// The rendered stream.
    pub stream: FileId,
}

/// Reads the chart, the user's values and the rendered stream.
pub fn read(input: &Input) -> Result<Read> {
    let mut sources = SourceMap::default();
    let chart_path = match &input.target {
        InputTarget::Chart(path) => Some(path.clone()),
        InputTarget::Stream(_) => input.chart.clone(),
    };
    if let Some(path) = &chart_path {
        if !path.exists() {
            return Err(Error::usage(format!(
                "{}: no such chart",
                display_path(path)
            )));
        }
        if path.is_dir() && !path.join("Chart.yaml").is_file() {
            return Err(not_a_chart(path));
        }
    }
    let loaded = chart_path
        .as_deref()
        .map(|p| {
            chart::load(p, &mut sources, input.chart_limits).map_err(|e| e.with_chart_failure(p))
        })
        .transpose()?;

    // The user's values first: a values file that breaks a limit is refused before helm runs.
    let user = loaded
        .as_ref()
        .map(|_| values::user_values(&input.helm.values, &mut sources, input.limits))
        .transpose()?;

    let (stream_name, origin, bytes) = match &input.target {
        InputTarget::Chart(path) => {
            let rendered = helm::render(path, &input.helm)?;
            (
                format!("{} (helm template)", display_path(path)),
                Origin::Rendered,
                rendered,
            )
        }
        InputTarget::Stream(path) if path.as_os_str() == "-" => {
            let bytes = read::bounded(std::io::stdin().lock(), input.max_input_bytes)
                .map_err(|e| e.describe("standard input", input_cap(input)))?;
            ("-".to_owned(), Origin::Stdin, bytes)
        }
        InputTarget::Stream(path) if path.is_dir() => return Err(not_a_chart(path)),
        InputTarget::Stream(path) if !path.exists() && path.symlink_metadata().is_err() => {
            return Err(Error::usage(format!("{}: no such path", display_path(path))).with_detail(
                "a target is a chart directory (with Chart.yaml), a chart archive (.tgz), a rendered manifest stream file, or - for standard input",
            ));
        }
        InputTarget::Stream(path) => {
            let name = display_path(path);
            let bytes = read::file(path, input.max_input_bytes)
                .map_err(|e| e.describe(&name, input_cap(input)))?;
            (name, Origin::Disk, bytes)
        }
    };
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(Error::invalid(format!(
            "{stream_name}:1:1: the input is UTF-16; convert it to UTF-8 (e.g. `iconv -f UTF-16 -t UTF-8`)"
        )));
    }
    if u32::try_from(bytes.len()).is_err() {
        return Err(Error::invalid(format!(
            "{stream_name}: inputs over 4 GiB are not supported"
        )));
    }
    if origin != Origin::Rendered {
        refuse_binary(&stream_name, &bytes)?;
    }
    let stream = sources.add(stream_name, origin, bytes);
    Ok(Read {
        sources,
        chart: loaded,
        user,
        stream,
    })
}

/// The cap on a rendered stream.
fn input_cap(input: &Input) -> read::Cap<'static> {
    read::Cap {
        limit: input.max_input_bytes,
        raise: Some("--max-input-bytes"),
    }
}

/// A directory named as a chart or a stream that holds no `Chart.yaml`.
fn not_a_chart(path: &Path) -> Error {
    Error::usage(format!("no Chart.yaml in {}: not a chart", display_path(path))).with_detail(
        "a target is a chart directory (with Chart.yaml), a chart archive (.tgz), a rendered manifest stream file, or - for standard input",
    )
}

/// A file of binary data (NUL bytes near its start, as git judges it, among many other
/// control bytes) is not a rendered stream; saying so beats reporting it as invalid YAML.
fn refuse_binary(name: &str, bytes: &[u8]) -> Result<()> {
    let head = &bytes[..bytes.len().min(8000)];
    // A stray NUL in a text stream is a located YAML error; binary data is full of them,
    // of other control bytes and of bytes that are not UTF-8.
    let invalid: usize = head.utf8_chunks().map(|c| c.invalid().len()).sum();
    let controls = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c))
        .count();
    let binary = memchr::memchr(0, head).is_some() && (invalid + controls) * 10 > head.len();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(Error::invalid(format!(
            "{name}: a gzip archive, not a rendered manifest stream"
        ))
        .with_detail("a chart archive must be named *.tgz or *.tar.gz"));
    }
    if binary {
        return Err(Error::invalid(format!(
            "{name}: a binary file, not a rendered manifest stream or a chart"
        ))
        .with_detail(
            "a target is a chart directory (with Chart.yaml), a chart archive (.tgz), a rendered manifest stream file, or - for standard input",
        ));
    }
    Ok(())
}
