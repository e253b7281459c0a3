//! Where sequencing names are written: a line scan of templates and `Chart.yaml` that finds
//! each group declaration, each name in a depends-on list, each dependency of `Chart.yaml`
//! and each readiness expression, with the range a person edits.
//!
//! The model holds the rendered values; this index holds the written ones, which is what
//! navigation, completion and quick fixes edit. A value that a template action writes (`{{`)
//! is marked so that no edit touches it.

use std::path::{Path, PathBuf};

use crate::model::annotations::{
    DEPENDS_ON_GROUPS, DEPENDS_ON_GROUPS_ONE_SLASH, DEPENDS_ON_SUBCHARTS, READINESS_FAILURE,
    READINESS_SUCCESS, RESOURCE_GROUP,
};

/// What a written name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `helm.sh/resource-group: NAME`.
    GroupDecl,
    /// A name in `helm.sh/depends-on/resource-groups`.
    GroupRef,
    /// A name in `helm.sh/depends-on/subcharts` or a `dependencies[].depends-on` list.
    SubchartRef,
    /// `dependencies[].name` in `Chart.yaml`.
    DependencyName,
    /// `dependencies[].alias` in `Chart.yaml`.
    DependencyAlias,
    /// The value of `helm.sh/readiness-success`.
    ReadinessSuccess,
    /// The value of `helm.sh/readiness-failure`.
    ReadinessFailure,
}

/// One written name: 0-based line, UTF-16 columns (what the protocol counts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub kind: Kind,
    pub name: String,
    pub line: u32,
    pub start: u32,
    pub end: u32,
    /// The value is (partly) written by a template action: shown, never edited.
    pub templated: bool,
    /// For a dependency: its effective name (the alias, else the name).
    pub effective: Option<String>,
}

/// The occurrences of one file, in order.
#[derive(Clone, Debug, Default)]
pub struct FileIndex {
    pub occurrences: Vec<Occurrence>,
}

impl FileIndex {
    /// The occurrence under a position.
    #[must_use]
    pub fn at(&self, line: u32, character: u32) -> Option<&Occurrence> {
        self.occurrences
            .iter()
            .find(|o| o.line == line && o.start <= character && character <= o.end)
    }
}

/// The directory of the chart level a file belongs to: the nearest one with `Chart.yaml`.
#[must_use]
pub fn chart_dir(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .find(|d| d.join("Chart.yaml").is_file())
        .map(Path::to_path_buf)
}

/// The root chart a file belongs to: the outermost chart directory reached through
/// `charts/` nesting.
#[must_use]
pub fn chart_root(file: &Path) -> Option<PathBuf> {
    let mut root = chart_dir(file)?;
    loop {
        let parent = root.parent();
        let up = parent
            .filter(|p| p.file_name().is_some_and(|n| n == "charts"))
            .and_then(Path::parent)
            .filter(|p| p.join("Chart.yaml").is_file());
        match up {
            Some(p) => root = p.to_path_buf(),
            None => return Some(root),
        }
    }
}

/// UTF-16 length of a string.
#[must_use]
pub fn utf16_len(text: &str) -> u32 {
    text.encode_utf16().count() as u32
}

/// Splits `key: value` (the key possibly quoted) into the key and the value's byte offset.
fn key_value(line: &str) -> Option<(&str, usize)> {
    let indent = line.len() - line.trim_start().len();
    let rest = &line[indent..];
    let rest_start = if let Some(r) = rest.strip_prefix("- ") {
        indent + 2 + (r.len() - r.trim_start().len())
    } else {
        indent
    };
    let rest = &line[rest_start..];
    let (key, after) = if let Some(q @ ('"' | '\'')) = rest.chars().next() {
        let close = rest[1..].find(q)? + 1;
        (&rest[1..close], rest_start + close + 1)
    } else {
        let colon = rest.find(':')?;
        (rest[..colon].trim_end(), rest_start + colon)
    };
    let tail = &line[after..];
    let tail = tail.strip_prefix(':')?;
    if !(tail.is_empty() || tail.starts_with([' ', '\t'])) {
        return None;
    }
    let value = after + 1 + (tail.len() - tail.trim_start().len());
    Some((key, value))
}

fn name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// The names of a list value (`'["a", "b"]'`, `[a, b]`, `a`) with their byte ranges in `text`.
fn list_names(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if name_char(c) {
            if start.is_none() {
                start = Some(i);
            }
        } else if let Some(s) = start.take() {
            out.push((s, i));
        }
        if c == '#' && start.is_none() && text[..i].ends_with(' ') {
            break;
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    out
}

/// One scalar value (the quotes and a trailing comment left out).
fn scalar(text: &str) -> (usize, usize) {
    let trimmed = text.trim_end();
    let end = trimmed.find(" #").unwrap_or(trimmed.len());
    let value = trimmed[..end].trim_end();
    match value.chars().next() {
        Some(q @ ('"' | '\'')) if value.len() >= 2 && value.ends_with(q) => (1, value.len() - 1),
        _ => (0, value.len()),
    }
}

/// Scans a template or values file.
#[must_use]
pub fn scan_template(text: &str) -> FileIndex {
    let mut occurrences = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let Some((key, value_at)) = key_value(line) else {
            continue;
        };
        let value = &line[value_at..];
        let templated = value.contains("{{");
        let col = |byte: usize| utf16_len(&line[..byte]);
        let mut push = |kind, s: usize, e: usize| {
            occurrences.push(Occurrence {
                kind,
                name: line[s..e].to_owned(),
                line: n as u32,
                start: col(s),
                end: col(e),
                templated,
                effective: None,
            });
        };
        match key {
            RESOURCE_GROUP => {
                let (s, e) = scalar(value);
                if e > s {
                    push(Kind::GroupDecl, value_at + s, value_at + e);
                }
            }
            DEPENDS_ON_GROUPS | DEPENDS_ON_GROUPS_ONE_SLASH => {
                for (s, e) in list_names(value) {
                    push(Kind::GroupRef, value_at + s, value_at + e);
                }
            }
            DEPENDS_ON_SUBCHARTS => {
                for (s, e) in list_names(value) {
                    push(Kind::SubchartRef, value_at + s, value_at + e);
                }
            }
            READINESS_SUCCESS | READINESS_FAILURE => {
                let (s, e) = scalar(value);
                let kind = if key == READINESS_SUCCESS {
                    Kind::ReadinessSuccess
                } else {
                    Kind::ReadinessFailure
                };
                push(kind, value_at + s, value_at + e);
            }
            _ => {}
        }
    }
    FileIndex { occurrences }
}

/// Scans `Chart.yaml`: the dependencies (name, alias, depends-on) and the chart's
/// `helm.sh/depends-on/subcharts` annotation.
#[must_use]
pub fn scan_chart_yaml(text: &str) -> FileIndex {
    let mut occurrences = Vec::new();
    let mut in_dependencies = false;
    // Indent of the current `- ` item of `dependencies`, and whether a block `depends-on:`
    // list is open (its indent).
    let mut item_indent: Option<usize> = None;
    let mut block_list: Option<usize> = None;
    let mut item_start = 0;
    for (n, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let templated = line.contains("{{");
        let col = |byte: usize| utf16_len(&line[..byte]);
        if indent == 0 {
            in_dependencies = trimmed.starts_with("dependencies:");
            item_indent = None;
            block_list = None;
        }
        if let Some(list_indent) = block_list {
            if indent >= list_indent && trimmed.starts_with("- ") {
                let at = indent + 2;
                let (s, e) = scalar(&line[at..]);
                occurrences.push(Occurrence {
                    kind: Kind::SubchartRef,
                    name: line[at + s..at + e].to_owned(),
                    line: n as u32,
                    start: col(at + s),
                    end: col(at + e),
                    templated,
                    effective: None,
                });
                continue;
            }
            block_list = None;
        }
        if let Some((key, value_at)) = key_value(line) {
            if key == DEPENDS_ON_SUBCHARTS {
                let value = &line[value_at..];
                for (s, e) in list_names(value) {
                    occurrences.push(Occurrence {
                        kind: Kind::SubchartRef,
                        name: value[s..e].to_owned(),
                        line: n as u32,
                        start: col(value_at + s),
                        end: col(value_at + e),
                        templated,
                        effective: None,
                    });
                }
                continue;
            }
            if !in_dependencies || indent == 0 {
                continue;
            }
            if trimmed.starts_with("- ") {
                item_indent = Some(indent);
                item_start = occurrences.len();
            }
            if item_indent.is_none() {
                continue;
            }
            let value = &line[value_at..];
            match key {
                "name" | "alias" => {
                    let (s, e) = scalar(value);
                    if e > s {
                        occurrences.push(Occurrence {
                            kind: if key == "name" {
                                Kind::DependencyName
                            } else {
                                Kind::DependencyAlias
                            },
                            name: value[s..e].to_owned(),
                            line: n as u32,
                            start: col(value_at + s),
                            end: col(value_at + e),
                            templated,
                            effective: None,
                        });
                        set_effective(&mut occurrences[item_start..]);
                    }
                }
                "depends-on" => {
                    if value.trim().is_empty() {
                        block_list = Some(indent);
                    } else {
                        for (s, e) in list_names(value) {
                            occurrences.push(Occurrence {
                                kind: Kind::SubchartRef,
                                name: value[s..e].to_owned(),
                                line: n as u32,
                                start: col(value_at + s),
                                end: col(value_at + e),
                                templated,
                                effective: None,
                            });
                        }
                    }
                }
                _ => {}
            }
        }
    }
    FileIndex { occurrences }
}

/// A dependency's effective name is its alias, else its name.
fn set_effective(item: &mut [Occurrence]) {
    let alias = item
        .iter()
        .find(|o| o.kind == Kind::DependencyAlias)
        .map(|o| o.name.clone());
    let name = item
        .iter()
        .find(|o| o.kind == Kind::DependencyName)
        .map(|o| o.name.clone());
    let effective = alias.or(name);
    for o in item.iter_mut() {
        if matches!(o.kind, Kind::DependencyName | Kind::DependencyAlias) {
            o.effective.clone_from(&effective);
        }
    }
}

/// Scans a file by its name.
#[must_use]
pub fn scan(path: &Path, text: &str) -> FileIndex {
    if path.file_name().is_some_and(|n| n == "Chart.yaml") {
        scan_chart_yaml(text)
    } else {
        scan_template(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_yield_declarations_and_references_with_their_columns() {
        let text = "metadata:\n  annotations:\n    helm.sh/resource-group: \"app\"\n    helm.sh/depends-on/resource-groups: '[\"db\", \"cache\"]'\n    helm.sh/readiness-success: '[\"{.status.ok} == true\"]'\n";
        let index = scan_template(text);
        let names: Vec<_> = index
            .occurrences
            .iter()
            .map(|o| (o.kind, o.name.as_str(), o.line, o.start, o.end))
            .collect();
        assert_eq!(
            names,
            vec![
                (Kind::GroupDecl, "app", 2, 29, 32),
                (Kind::GroupRef, "db", 3, 43, 45),
                (Kind::GroupRef, "cache", 3, 49, 54),
                (
                    Kind::ReadinessSuccess,
                    "[\"{.status.ok} == true\"]",
                    4,
                    32,
                    56
                ),
            ]
        );
    }

    #[test]
    fn chart_yaml_yields_dependencies_and_their_depends_on() {
        let text = "apiVersion: v3\nname: app\ndependencies:\n  - name: postgresql\n    alias: db\n    depends-on: [cache]\n  - name: redis\n    alias: cache\n    depends-on:\n      - other\nannotations:\n  helm.sh/depends-on/subcharts: '[\"db\"]'\n";
        let index = scan_chart_yaml(text);
        let names: Vec<_> = index
            .occurrences
            .iter()
            .map(|o| (o.kind, o.name.as_str(), o.line, o.effective.as_deref()))
            .collect();
        assert_eq!(
            names,
            vec![
                (Kind::DependencyName, "postgresql", 3, Some("db")),
                (Kind::DependencyAlias, "db", 4, Some("db")),
                (Kind::SubchartRef, "cache", 5, None),
                (Kind::DependencyName, "redis", 6, Some("cache")),
                (Kind::DependencyAlias, "cache", 7, Some("cache")),
                (Kind::SubchartRef, "other", 9, None),
                (Kind::SubchartRef, "db", 11, None),
            ]
        );
    }

    /// Every prefix of every annotation line (what an author has typed so far, multibyte
    /// names included) is read without failing, into ranges inside the line.
    #[test]
    fn every_prefix_of_an_annotation_line_is_read_into_ranges_inside_it() {
        let lines = [
            "    helm.sh/depends-on/resource-groups: '[\"db\", \"cäche\"]' # note",
            "    \"helm.sh/resource-group\": \"ü-app\"",
            "    helm.sh/depends-on/subcharts: \"[\\\"db\\\"]\"",
            "    helm.sh/readiness-failure: '[\"{.failed} >= 1\"]'",
            "  - name: postgres✓",
            "    depends-on: [a, b]",
        ];
        for line in lines {
            for (cut, _) in line
                .char_indices()
                .chain(std::iter::once((line.len(), ' ')))
            {
                let text = &line[..cut];
                let width = utf16_len(text);
                let chart_yaml = format!("dependencies:\n{text}\n");
                for index in [scan_template(text), scan_chart_yaml(&chart_yaml)] {
                    for o in &index.occurrences {
                        assert!(o.start <= o.end && o.end <= width, "{text:?}: {o:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn half_typed_annotations_are_read_without_failing() {
        for text in [
            "helm.sh/depends-on/resource-groups: '[\"",
            "helm.sh/resource-group:",
            "  \"helm.sh/resource-group",
            "- : x",
            "helm.sh/readiness-success: '",
            "é: ü",
        ] {
            let _ = scan_template(text);
            let _ = scan_chart_yaml(text);
        }
    }
}
