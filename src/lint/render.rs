//! A chart helm cannot render is a finding of that chart (CS900), not the end of the run:
//! the other charts are still linted, as ruff reports a file it cannot read and goes on. The
//! finding points at the template line helm names (`execution error at
//! (chart/templates/cm.yaml:4:26)`), else at the chart's `Chart.yaml`.

use super::{Context, Diagnostic, Report, Settings};
use crate::error::RenderFailure;
use crate::model::{Chart, Model};
use crate::parse::Span;
use crate::source::chart::{self, ChartLimits, LoadedChart};
use crate::source::{FileId, Loc, Origin, SourceMap, display_path};

/// A place helm names in its error: a path from the chart's name and an optional line and
/// column.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct HelmPlace {
    pub path: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

/// The first `name/…[:line[:column]]` in helm's error, where `name` is the chart's name.
pub(crate) fn helm_place(stderr: &str, name: &str) -> Option<HelmPlace> {
    let prefix = format!("{name}/");
    let mut from = 0;
    while let Some(found) = stderr[from..].find(&prefix) {
        let at = from + found;
        from = at + prefix.len();
        let boundary = stderr[..at]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '(' | '"' | '\''));
        if !boundary {
            continue;
        }
        let rest = &stderr[at..];
        let end = rest
            .find(|c: char| c == ':' || c == ')' || c == '"' || c.is_whitespace())
            .unwrap_or(rest.len());
        let path = rest[..end].to_owned();
        // `:4:26)`, `:7)`, `:3: message`: the digits right after each colon.
        let mut numbers = rest[end..].split(':').skip(1).map(|n| {
            let digits = n.len() - n.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            n[..digits].parse::<u32>().ok().filter(|n| *n > 0)
        });
        let line = numbers.next().flatten();
        let column = if line.is_some() {
            numbers.next().flatten()
        } else {
            None
        };
        return Some(HelmPlace { path, line, column });
    }
    None
}

/// The file of `loaded` (or a subchart of it) that helm's `chart/charts/sub/templates/x`
/// names.
fn chart_file(loaded: &LoadedChart, rel: &str) -> Option<FileId> {
    if rel == "Chart.yaml" {
        return Some(loaded.meta.file);
    }
    if let Some(file) = loaded.files.get(rel) {
        return Some(*file);
    }
    let rest = rel.strip_prefix("charts/")?;
    let (sub, rest) = rest.split_once('/')?;
    let child = loaded
        .subcharts
        .iter()
        .find(|c| c.meta.name == sub || c.dir_name == sub)?;
    chart_file(child, rest)
}

/// The span of a 1-based line and column of a file (the whole line when no column).
fn span_at(sources: &SourceMap, file: FileId, line: Option<u32>, column: Option<u32>) -> Span {
    let source = sources.get(file);
    let Some(range) = line.and_then(|l| source.lines().line_range(&source.bytes, l)) else {
        return Span { start: 0, end: 0 };
    };
    let text = String::from_utf8_lossy(&source.bytes[range.clone()]);
    let start = column
        .and_then(|c| text.char_indices().nth(c as usize - 1).map(|(i, _)| i))
        .map_or(range.start, |i| range.start + i);
    // To the end of the template action helm stopped in, else of the line.
    let end = column
        .and_then(|_| {
            let after = &source.bytes[start.min(range.end)..range.end];
            memchr::memmem::find(after, b"}}").map(|i| start + i + 2)
        })
        .unwrap_or(range.end);
    Span {
        start: start as u32,
        end: end.max(start) as u32,
    }
}

/// The CS900 finding of a chart helm did not render, with a model that holds the file it
/// points at; `None` when the chart cannot even be read again (the failure is then the
/// tool's).
#[must_use]
pub fn render_failure(
    failure: &RenderFailure,
    limits: ChartLimits,
    settings: &Settings,
) -> Option<(Model, Report)> {
    let mut sources = SourceMap::default();
    let loaded = chart::load(&failure.chart, &mut sources, limits).ok()?;
    let stream = sources.add(
        format!("{} (helm template)", display_path(&failure.chart)),
        Origin::Rendered,
        Vec::new(),
    );
    let place = helm_place(&failure.stderr, &loaded.meta.name);
    let located = place.as_ref().and_then(|p| {
        let rel = p.path.strip_prefix(&format!("{}/", loaded.meta.name))?;
        Some((chart_file(&loaded, rel)?, p.line, p.column))
    });
    // Helm names no file of the chart: the chart itself, at its name.
    let (file, span) = located.map_or_else(
        || {
            let span = loaded
                .meta
                .node
                .get("name")
                .map_or(Span { start: 0, end: 0 }, |n| n.span);
            (loaded.meta.file, span)
        },
        |(file, line, column)| (file, span_at(&sources, file, line, column)),
    );
    let name = loaded.meta.name.clone();
    let model = lone_chart(sources, name, stream);
    let message = helm_message(&failure.stderr);
    let mut diagnostic = Diagnostic::new(
        &crate::rules::RENDER_FAILED,
        0,
        Loc { file, span },
        format!("helm cannot render the chart: {message}"),
    )
    .label(if located.is_some() {
        "helm stops here"
    } else {
        "this chart"
    })
    .help("fix the template or pass the values it needs (-f, --set, --ci-values); `helm template` shows the same error");
    if let (Some(p), None) = (&place, located) {
        diagnostic = diagnostic.note(format!(
            "helm names {}, which is not a file of the chart on disk",
            p.path
        ));
    }
    let report = if settings.selection.enabled(&crate::rules::RENDER_FAILED) {
        let ctx = Context::new(&model, settings);
        super::report(&ctx, vec![diagnostic])
    } else {
        Report::default()
    };
    Some((model, report))
}

/// The CS902 finding of a chart whose own files could not be loaded, with a model that holds
/// the file it points at: the chart is loaded again, which registers the files read up to the
/// failure, and the error's leading `file:line:column: ` names one of them.
#[must_use]
pub fn load_failure(
    chart: &std::path::Path,
    error: &crate::error::Error,
    limits: ChartLimits,
    settings: &Settings,
) -> (Model, Report) {
    let mut sources = SourceMap::default();
    let again = chart::load(chart, &mut sources, limits);
    let message = match &again {
        Err(e) => e.message(),
        Ok(_) => error.message(),
    };
    let shown = display_path(chart);
    // The longest registered name the message starts with: `chart/Chart.yaml:3:1: …`.
    let named = (0..sources.len() as u32)
        .map(FileId)
        .filter(|f| {
            let name = &sources.get(*f).name;
            message.len() > name.len()
                && message.starts_with(name.as_str())
                && message[name.len()..].starts_with(':')
        })
        .max_by_key(|f| sources.get(*f).name.len());
    let (loc, rest) = if let Some(file) = named {
        let after = &message[sources.get(file).name.len() + 1..];
        let mut parts = after.splitn(3, ':');
        let line = parts
            .next()
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|n| *n > 0);
        let column = parts
            .next()
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|n| *n > 0);
        let rest = match (line, column) {
            (Some(_), Some(_)) => parts.next().unwrap_or_default(),
            (Some(_), None) => after.split_once(':').map_or("", |(_, r)| r),
            _ => after,
        };
        let span = span_at(&sources, file, line, column);
        (Loc { file, span }, rest.trim())
    } else {
        let rest = message
            .strip_prefix(&format!("{shown}: "))
            .unwrap_or(&message);
        let file = sources.add(shown.clone(), Origin::Disk, Vec::new());
        (
            Loc {
                file,
                span: Span { start: 0, end: 0 },
            },
            rest.trim(),
        )
    };
    let name = chart
        .file_name()
        .map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
    let stream = sources.add(format!("{shown} (not loaded)"), Origin::Disk, Vec::new());
    let model = lone_chart(sources, name, stream);
    let diagnostic = Diagnostic::new(
        &crate::rules::UNLOADABLE_CHART,
        0,
        loc,
        format!(
            "the chart cannot be loaded: {}",
            crate::safe::one_line(rest.trim_end_matches('.'))
        ),
    )
    .label("loading stops here")
    .help("fix the chart's file here; helm refuses the chart as well");
    let report = if settings.selection.enabled(&crate::rules::UNLOADABLE_CHART) {
        let ctx = Context::new(&model, settings);
        super::report(&ctx, vec![diagnostic])
    } else {
        Report::default()
    };
    (model, report)
}

/// helm's error as one line: its `Error:` line and the indented lines that continue it,
/// without `Error: `, lowercase first.
fn helm_message(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_start().starts_with("Error:"))
        .or_else(|| lines.iter().position(|l| !l.trim().is_empty()));
    let Some(start) = start else {
        return "helm gave no reason".to_owned();
    };
    let mut parts = vec![lines[start].trim()];
    parts.extend(
        lines[start + 1..]
            .iter()
            .take_while(|l| l.starts_with([' ', '\t']) && !l.trim().is_empty())
            .map(|l| l.trim()),
    );
    let line = parts.join(" ");
    let line = line.strip_prefix("Error:").unwrap_or(&line).trim();
    let line = line.trim_end_matches('.');
    let mut chars = line.chars();
    let text = chars.next().map_or_else(String::new, |c| {
        c.to_lowercase().collect::<String>() + chars.as_str()
    });
    crate::safe::one_line(&text).into_owned()
}

/// The model of a chart that could not be rendered or loaded: the chart alone, no documents,
/// so that its one finding is reported as any other chart's.
fn lone_chart(sources: SourceMap, name: String, stream: FileId) -> Model {
    Model {
        sources,
        charts: vec![Chart {
            name: name.clone(),
            parent: None,
            children: Vec::new(),
            manifest_prefix: name.clone(),
            display: name,
            declared: true,
            enabled: true,
            disabled_by: None,
            rendered_while_disabled: None,
            info: None,
        }],
        documents: Vec::new(),
        stream,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helm_places_are_read_from_its_errors() {
        let place = |s| helm_place(s, "app");
        assert_eq!(
            place("Error: execution error at (app/templates/cm.yaml:4:26): name is required"),
            Some(HelmPlace {
                path: "app/templates/cm.yaml".into(),
                line: Some(4),
                column: Some(26)
            })
        );
        assert_eq!(
            place("Error: parse error at (app/templates/x.yaml:7): unexpected"),
            Some(HelmPlace {
                path: "app/templates/x.yaml".into(),
                line: Some(7),
                column: None
            })
        );
        assert_eq!(
            place("Error: YAML parse error on app/charts/db/templates/s.yaml: error converting"),
            Some(HelmPlace {
                path: "app/charts/db/templates/s.yaml".into(),
                line: None,
                column: None
            })
        );
        assert_eq!(place("Error: myapp/templates/x.yaml:3"), None);
        assert_eq!(
            place("Error: template: app/templates/x.yaml:3: function \"nope\" not defined")
                .and_then(|p| p.line),
            Some(3)
        );
        assert_eq!(place("Error: chart requires kubeVersion"), None);
    }

    #[test]
    fn helm_messages_are_one_lowercase_line() {
        assert_eq!(
            helm_message("Error: Execution error at (a/b:1): x.\n\nUse --debug flag"),
            "execution error at (a/b:1): x"
        );
        assert_eq!(helm_message(""), "helm gave no reason");
        assert_eq!(
            helm_message(
                "Error: app/t.yaml:6:20\n  executing \"app/t.yaml\" at <x>:\n    template \"y\" not defined\n"
            ),
            "app/t.yaml:6:20 executing \"app/t.yaml\" at <x>: template \"y\" not defined"
        );
    }
}
