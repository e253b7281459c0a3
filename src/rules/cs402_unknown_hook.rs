use crate::lint::{Context, Diagnostic, Sink};
use crate::model::HOOK_EVENTS;
use crate::model::annotations::HOOK;
use crate::parse::Span;
use crate::source::Loc;

declare_rule! {
    /// ## What it does
    /// Reports `helm.sh/hook` with an event Helm does not know. Because `helm template`
    /// drops such a resource from its output, the template files on disk are read as well.
    ///
    /// ## Why is this bad?
    /// Helm silently drops the whole resource: it is neither a hook nor installed.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/hook: pre-instal
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// helm.sh/hook: pre-install
    /// ```
    pub static UNKNOWN_HOOK = ("CS402", "unknown-hook", Error,
        "helm.sh/hook has an unknown event (Helm silently drops the resource)", check);
}

fn diagnostic(chart: usize, loc: Loc, unknown: &[String]) -> Diagnostic {
    let suggestions: Vec<String> = unknown
        .iter()
        .filter_map(|e| {
            HOOK_EVENTS
                .iter()
                .min_by_key(|k| strsim::damerau_levenshtein(k, e))
                .filter(|k| strsim::damerau_levenshtein(k, e) <= 3)
                .map(|k| format!("`{k}` for `{e}`"))
        })
        .collect();
    let shown: Vec<String> = unknown.iter().map(|e| format!("`{e}`")).collect();
    Diagnostic::new(
        &UNKNOWN_HOOK,
        chart,
        loc,
        format!(
            "unknown hook event {}: Helm drops this resource entirely",
            shown.join(", ")
        ),
    )
    .label("unknown event")
    .help(if suggestions.is_empty() {
        format!("hook events are: {}", HOOK_EVENTS.join(", "))
    } else {
        format!("did you mean {}?", suggestions.join(", "))
    })
}

fn check(ctx: &Context, sink: &mut Sink) {
    let model = ctx.model;
    for (doc, r) in ctx.resources() {
        let Some(hook) = &r.hook else { continue };
        if hook.unknown_events.is_empty() {
            continue;
        }
        sink.push(diagnostic(model.documents[doc].chart, hook.loc, &hook.unknown_events).doc(doc));
    }
    // Templates on disk: the resource never reaches the rendered stream.
    for (id, chart) in model.charts.iter().enumerate() {
        let Some(info) = chart.info.as_ref().filter(|_| chart.enabled) else {
            continue;
        };
        for (rel, &file) in &info.files {
            if !rel.starts_with("templates/") {
                continue;
            }
            let source = model.sources.get(file);
            let text = String::from_utf8_lossy(&source.bytes);
            let mut offset = 0usize;
            for line in text.split_inclusive('\n') {
                let start = offset;
                offset += line.len();
                let trimmed = line.trim();
                let Some(rest) = trimmed
                    .strip_prefix(HOOK)
                    .or_else(|| trimmed.strip_prefix("\"helm.sh/hook\""))
                    .or_else(|| trimmed.strip_prefix("'helm.sh/hook'"))
                else {
                    continue;
                };
                let Some(value) = rest.trim_start().strip_prefix(':') else {
                    continue;
                };
                let value = value.split(" #").next().unwrap_or_default().trim();
                if value.contains("{{") || value.is_empty() {
                    continue;
                }
                let unknown: Vec<String> = value
                    .trim_matches(['"', '\''])
                    .split(',')
                    .map(|e| e.trim().to_lowercase())
                    .filter(|e| !HOOK_EVENTS.contains(&e.as_str()))
                    .collect();
                if unknown.is_empty() {
                    continue;
                }
                let indent = line.len() - line.trim_start().len();
                // The key and its value; a trailing comment is not part of the annotation.
                let entry = trimmed.split(" #").next().unwrap_or_default().trim_end();
                let loc = Loc {
                    file,
                    span: Span::new(start + indent, start + indent + entry.len()),
                };
                sink.push(diagnostic(id, loc, &unknown));
            }
        }
    }
}
