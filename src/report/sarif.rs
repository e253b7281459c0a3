//! SARIF 2.1.0 (OASIS), the format GitHub code scanning ingests: one run whose tool driver is
//! chartseq with every rule (summary, documentation, page, default level), and one result per
//! finding with its template location and a fingerprint that survives unrelated edits.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde_json::{Map, Value, json};

use super::location::{RepoLocation, fallback, label_location, locate, repository_root};
use super::{Reporter, Run};
use crate::lint::{Finding, Severity};
use crate::model::Model;
use crate::rules::RULES;
use crate::source::Origin;

/// The artifact standing for standard input, the one file that is on no disk.
const STDIN_URI: &str = "stdin";

pub struct Sarif;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Where the rule pages live: the `rules/` directory of the repository.
fn rule_page(page: &str) -> String {
    let repository = env!("CARGO_PKG_REPOSITORY").trim_end_matches('/');
    format!("{repository}/blob/main/rules/{page}")
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn rules() -> Vec<Value> {
    RULES
        .iter()
        .map(|rule| {
            let doc = rule.doc();
            json!({
                "id": rule.code,
                "name": rule.name,
                "shortDescription": { "text": format!("{}: fires when {}", rule.name, rule.summary) },
                "fullDescription": { "text": doc },
                "help": { "text": doc, "markdown": doc },
                "helpUri": rule_page(&rule.page_name()),
                "defaultConfiguration": { "level": level(rule.severity) },
            })
        })
        .collect()
}

/// FNV-1a, 64 bits: a fixed, dependency-free hash, so fingerprints are equal across runs,
/// machines and releases.
fn fnv1a(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain(std::iter::once(0)) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// What identifies a finding apart from its line number: rule, file, the resource it is about
/// and its message. A line moving down after an unrelated edit keeps its alert.
fn identity(finding: &Finding, location: Option<&RepoLocation>) -> String {
    let mut id = String::new();
    let _ = write!(
        id,
        "{}|{}|{}",
        finding.code,
        location.map_or(finding.location.file.as_str(), |l| l.path.as_str()),
        finding.chart
    );
    if let Some(r) = &finding.resource {
        let _ = write!(
            id,
            "|{}/{}/{}/{}",
            r.api_version,
            r.kind,
            r.namespace.as_deref().unwrap_or(""),
            r.name
        );
    }
    id.push('|');
    id.push_str(&finding.message);
    id
}

fn message(finding: &Finding) -> String {
    let mut text = finding.message.clone();
    if !finding.help.is_empty() {
        let _ = write!(text, "\nhelp: {}", finding.help);
    }
    for note in &finding.notes {
        let _ = write!(text, "\nnote: {note}");
    }
    if let Some(note) = finding.guess_note() {
        let _ = write!(text, "\nnote: {note}");
    }
    text
}

/// The rendered stream read from standard input, as the run's one artifact without a file:
/// the finding's exact place in that stream.
fn stdin_location(finding: &Finding) -> Value {
    let mut physical = json!({ "artifactLocation": { "uri": STDIN_URI, "index": 0 } });
    if let Some(p) = &finding.rendered {
        physical["region"] = region(p);
    }
    physical
}

/// The template a stream's `# Source:` comment names, when the line in it is only a guess:
/// the file, without a region (the guessed line is in the message).
fn guessed_template(finding: &Finding) -> Option<Value> {
    finding.guessed.then(|| {
        json!({
            "physicalLocation": {
                "artifactLocation": { "uri": uri_path(&finding.location.file) },
            },
            "message": {
                "text": format!(
                    "the template named by `# Source:`; near line {} (counted in the rendered document)",
                    finding.location.line
                ),
            },
        })
    })
}

/// A path as a URI reference: `/` kept, everything outside RFC 3986's unreserved set
/// percent-encoded.
fn uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

fn physical(location: &RepoLocation) -> Value {
    // Files in the repository are relative to its root (%SRCROOT%, the checkout on GitHub);
    // others are absolute `file:` URIs.
    let artifact = if location.in_repository {
        json!({ "uri": uri_path(&location.path), "uriBaseId": "%SRCROOT%" })
    } else {
        json!({ "uri": format!("file://{}", uri_path(&location.path)) })
    };
    let mut physical = json!({ "artifactLocation": artifact });
    if let Some(p) = &location.region {
        physical["region"] = region(p);
    }
    physical
}

/// A SARIF region: the position's first and last line and column.
fn region(p: &crate::lint::Position) -> Value {
    json!({
        "startLine": p.line,
        "startColumn": p.column,
        "endLine": p.end_line,
        "endColumn": p.end_column,
    })
}

/// The other places that explain a finding (each edge of a cycle, the rendered line), as
/// SARIF related locations.
fn related(model: &Model, finding: &Finding, root: Option<&std::path::Path>) -> Vec<Value> {
    finding
        .labels
        .iter()
        .filter(|l| !l.primary)
        .filter_map(|l| {
            let location = label_location(model, l, root)?;
            let mut value = json!({ "physicalLocation": physical(&location) });
            if !l.message.is_empty() {
                value["message"] = json!({ "text": l.message });
            }
            Some(value)
        })
        .chain(guessed_template(finding))
        .enumerate()
        .map(|(i, mut v)| {
            v["id"] = json!(i + 1);
            v
        })
        .collect()
}

fn result(
    model: &Model,
    finding: &Finding,
    root: Option<&std::path::Path>,
    seen: &mut std::collections::BTreeMap<String, usize>,
    stdin: &mut bool,
) -> Value {
    let location = locate(model, finding, root).or_else(|| {
        // From standard input, the stream itself is the place; otherwise (a chart archive)
        // the file holding the chart.
        (model.sources.get(model.stream).origin != Origin::Stdin)
            .then(|| fallback(model, finding, root))
            .flatten()
    });
    let identity = identity(finding, location.as_ref());
    // Identical findings (the same resource twice) are told apart by their order.
    let occurrence = seen.entry(identity.clone()).or_insert(0);
    *occurrence += 1;
    let fingerprint = fnv1a(&[&identity, &occurrence.to_string()]);
    let rule_index = RULES.iter().position(|r| r.code == finding.code);
    let mut object = Map::new();
    object.insert("ruleId".into(), json!(finding.code));
    if let Some(index) = rule_index {
        object.insert("ruleIndex".into(), json!(index));
    }
    object.insert("level".into(), json!(level(finding.severity)));
    object.insert("message".into(), json!({ "text": message(finding) }));
    // Every result has a location: code scanning refuses results without one.
    let physical = if let Some(location) = &location {
        physical(location)
    } else {
        *stdin = true;
        stdin_location(finding)
    };
    object.insert(
        "locations".into(),
        json!([{ "physicalLocation": physical }]),
    );
    let related = related(model, finding, root);
    if !related.is_empty() {
        object.insert("relatedLocations".into(), Value::Array(related));
    }
    object.insert(
        "partialFingerprints".into(),
        json!({ "chartseqFindingHash/v1": fingerprint }),
    );
    let mut properties = json!({ "chart": finding.chart, "severity": finding.severity.as_str() });
    if let Some(rendered) = &finding.rendered {
        properties["rendered"] = json!({
            "file": rendered.file,
            "line": rendered.line,
            "column": rendered.column,
        });
    }
    if !finding.value_sets.is_empty() {
        properties["valueSets"] = json!(finding.value_sets);
    }
    object.insert("properties".into(), properties);
    Value::Object(object)
}

impl Reporter for Sarif {
    fn report_all(&self, out: &mut dyn Write, runs: &[Run<'_>]) -> io::Result<()> {
        let root = repository_root();
        let mut seen = std::collections::BTreeMap::new();
        let mut stdin = false;
        let results: Vec<Value> = runs
            .iter()
            .flat_map(|run| {
                run.report
                    .findings
                    .iter()
                    .map(|f| (run.model, f))
                    .collect::<Vec<_>>()
            })
            .map(|(model, f)| result(model, f, root.as_deref(), &mut seen, &mut stdin))
            .collect();
        let mut doc = json!({
            "$schema": SCHEMA,
            "version": "2.1.0",
            "runs": [{
                "tool": {
                    "driver": {
                        "name": "chartseq",
                        "version": env!("CARGO_PKG_VERSION"),
                        "semanticVersion": env!("CARGO_PKG_VERSION"),
                        "informationUri": env!("CARGO_PKG_REPOSITORY"),
                        "rules": rules(),
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }],
        });
        if stdin {
            doc["runs"][0]["artifacts"] = json!([{
                "location": { "uri": STDIN_URI },
                "description": { "text": "the rendered manifest stream read from standard input; no file holds it" },
                "roles": ["analysisTarget"],
            }]);
        }
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_fixed_hashes() {
        // Published FNV-1a 64-bit test vectors (Fowler, Noll and Vo): each part is hashed
        // with its terminating NUL, so one part "a" is the vector for "a\0".
        assert_eq!(fnv1a(&[]), "cbf29ce484222325");
        assert_eq!(fnv1a(&["a"]), "089be207b544f1e4");
        assert_eq!(fnv1a(&["foobar"]), "34531ca7168b8f38");
        // Parts are separated, so moving a boundary changes the hash.
        assert_eq!(fnv1a(&["a", "b"]), "ab40d7820d408076");
        assert_ne!(fnv1a(&["a", "b"]), fnv1a(&["ab"]));
    }
}
