//! Which rules run and how loud they are: `--select`/`--ignore`/`--extend-select` and
//! `.chartseq.toml` (found by searching upward from the target, or named by `--config`).
//!
//! ```toml
//! select = ["CS"]            # codes, code prefixes (`CS3`), kebab names, or "ALL"
//! extend-select = []
//! ignore = ["CS503"]
//! [severity]                 # per-rule overrides
//! CS305 = "error"
//! [per-file-ignores]         # globs on template paths
//! "templates/jobs/*.yaml" = ["CS305"]
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use globset::{Glob, GlobMatcher};
use serde::Deserialize;

use super::{Finding, Severity};
use crate::rules::{RULES, Rule};

/// The name of the configuration file.
pub const FILE_NAME: &str = ".chartseq.toml";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawConfig {
    select: Option<Vec<String>>,
    #[serde(default)]
    extend_select: Vec<String>,
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default)]
    severity: BTreeMap<String, String>,
    #[serde(default)]
    per_file_ignores: BTreeMap<String, Vec<String>>,
}

/// A configuration file that could not be read, with where.
#[derive(Debug)]
pub struct ConfigError {
    pub path: String,
    pub text: String,
    pub span: Option<std::ops::Range<usize>>,
    pub message: String,
}

/// `.chartseq.toml`, validated.
#[derive(Clone, Debug, Default)]
pub struct Config {
    pub path: Option<PathBuf>,
    pub select: Option<Vec<String>>,
    pub extend_select: Vec<String>,
    pub ignore: Vec<String>,
    pub severity: BTreeMap<&'static str, Severity>,
    per_file_ignores: Vec<(String, GlobMatcher, BTreeSet<&'static str>)>,
}

/// Finds `.chartseq.toml` in `start` (a directory or a file's directory) or above it.
#[must_use]
pub fn discover(start: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(start).ok()?;
    let mut dir = if absolute.is_dir() {
        Some(absolute.as_path())
    } else {
        absolute.parent()
    };
    while let Some(d) = dir {
        let candidate = d.join(FILE_NAME);
        if candidate.is_file() {
            return Some(candidate);
        }
        dir = d.parent();
    }
    None
}

impl Config {
    /// Reads and validates a configuration file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let shown = crate::source::display_path(path);
        let failed = |message: String| ConfigError {
            path: shown.clone(),
            text: String::new(),
            span: None,
            message,
        };
        let limit = crate::parse::Limits::default().max_document_bytes as u64;
        let bytes = crate::source::read::file(path, limit).map_err(|e| {
            failed(match e {
                crate::source::read::ReadError::Io(e) => {
                    format!("cannot read the configuration: {e}")
                }
                crate::source::read::ReadError::TooBig(_) => {
                    format!("the configuration has more than {limit} bytes")
                }
            })
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            failed(format!(
                "cannot read the configuration: not valid UTF-8 at byte {}",
                e.utf8_error().valid_up_to()
            ))
        })?;
        let mut config = Self::parse(&text).map_err(|(span, message)| ConfigError {
            path: shown,
            text: text.clone(),
            span,
            message,
        })?;
        config.path = Some(path.to_path_buf());
        Ok(config)
    }

    /// Parses configuration text; errors carry the byte range at fault when known.
    pub fn parse(text: &str) -> Result<Self, (Option<std::ops::Range<usize>>, String)> {
        let raw: RawConfig =
            toml::from_str(text).map_err(|e| (e.span(), e.message().trim().to_owned()))?;
        let find_span = |needle: &str| text.find(needle).map(|start| start..start + needle.len());
        let check = |selectors: &[String]| -> Result<(), (Option<std::ops::Range<usize>>, String)> {
            for s in selectors {
                if matching(s).is_empty() {
                    return Err((find_span(s), unknown_selector(s)));
                }
            }
            Ok(())
        };
        if let Some(select) = &raw.select {
            check(select)?;
        }
        check(&raw.extend_select)?;
        check(&raw.ignore)?;
        let mut severity = BTreeMap::new();
        for (key, level) in &raw.severity {
            let Some(rule) = crate::rules::find(key) else {
                return Err((
                    find_span(key),
                    format!("`{key}` is not a rule code or name"),
                ));
            };
            let Some(level) = Severity::parse(level) else {
                return Err((
                    find_span(level),
                    format!("`{level}` is not a severity (error, warning or info)"),
                ));
            };
            severity.insert(rule.code, level);
        }
        let mut per_file_ignores = Vec::new();
        for (pattern, selectors) in &raw.per_file_ignores {
            let glob = Glob::new(pattern)
                .map_err(|e| (find_span(pattern), format!("invalid glob `{pattern}`: {e}")))?;
            check(selectors)?;
            let codes = selectors.iter().flat_map(|s| matching(s)).collect();
            per_file_ignores.push((pattern.clone(), glob.compile_matcher(), codes));
        }
        Ok(Self {
            path: None,
            select: raw.select,
            extend_select: raw.extend_select,
            ignore: raw.ignore,
            severity,
            per_file_ignores,
        })
    }

    /// Whether a `per-file-ignores` entry silences this finding.
    #[must_use]
    pub fn file_ignored(&self, finding: &Finding) -> bool {
        if self.per_file_ignores.is_empty() {
            return false;
        }
        let mut candidates: Vec<&str> = vec![finding.location.file.as_str()];
        if let Some(source) = &finding.source_path {
            candidates.push(source);
            // Chart-relative (`templates/x.yaml`), so patterns need not name the chart.
            let mut rest = source.as_str();
            while let Some((_, tail)) = rest.split_once('/') {
                candidates.push(tail);
                rest = tail;
            }
        }
        self.per_file_ignores.iter().any(|(_, glob, codes)| {
            codes.contains(finding.code) && candidates.iter().any(|c| glob.is_match(c))
        })
    }
}

fn unknown_selector(s: &str) -> String {
    format!("`{s}` selects no rule (use a code like CS101, a prefix like CS3, a rule name, or ALL)")
}

/// Codes a selector names: `ALL`, a code or code prefix, or a kebab name.
#[must_use]
pub fn matching(selector: &str) -> Vec<&'static str> {
    let upper = selector.to_ascii_uppercase();
    RULES
        .iter()
        .filter(|r| {
            upper == "ALL"
                || (upper.starts_with("CS") && r.code.starts_with(&upper))
                || r.name == selector
        })
        .map(|r| r.code)
        .collect()
}

/// The enabled rules and their severities.
#[derive(Clone, Debug)]
pub struct Selection {
    enabled: BTreeSet<&'static str>,
    severity: BTreeMap<&'static str, Severity>,
}

impl Default for Selection {
    fn default() -> Self {
        Self {
            enabled: RULES.iter().map(|r| r.code).collect(),
            severity: BTreeMap::new(),
        }
    }
}

/// Rule selectors from the command line.
#[derive(Clone, Debug, Default)]
pub struct SelectArgs {
    pub select: Option<Vec<String>>,
    pub extend_select: Vec<String>,
    pub ignore: Vec<String>,
}

impl Selection {
    /// Combines the configuration with the command line (which wins for `select`).
    pub fn build(config: &Config, cli: &SelectArgs) -> Result<Self, String> {
        for s in cli
            .select
            .iter()
            .flatten()
            .chain(&cli.extend_select)
            .chain(&cli.ignore)
        {
            if matching(s).is_empty() {
                return Err(unknown_selector(s));
            }
        }
        let select = cli
            .select
            .as_ref()
            .or(config.select.as_ref())
            .cloned()
            .unwrap_or_else(|| vec!["ALL".to_owned()]);
        let mut enabled: BTreeSet<&'static str> = select.iter().flat_map(|s| matching(s)).collect();
        for s in config.extend_select.iter().chain(&cli.extend_select) {
            enabled.extend(matching(s));
        }
        for s in config.ignore.iter().chain(&cli.ignore) {
            for code in matching(s) {
                enabled.remove(code);
            }
        }
        Ok(Self {
            enabled,
            severity: config.severity.clone(),
        })
    }

    #[must_use]
    pub fn enabled(&self, rule: &Rule) -> bool {
        self.enabled.contains(rule.code)
    }

    #[must_use]
    pub fn severity(&self, rule: &Rule) -> Severity {
        self.severity
            .get(rule.code)
            .copied()
            .unwrap_or(rule.severity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_match_codes_prefixes_and_names() {
        assert_eq!(matching("CS30").len(), 6);
        assert_eq!(matching("missing-resource-group"), vec!["CS101"]);
        assert_eq!(matching("cs101"), vec!["CS101"]);
        assert!(matching("nope").is_empty());
        let config = Config::parse("ignore = [\"CS5\"]\n[severity]\nCS305 = \"error\"\n")
            .expect("valid config");
        let sel = Selection::build(
            &config,
            &SelectArgs {
                select: None,
                extend_select: vec![],
                ignore: vec!["CS003".into()],
            },
        )
        .expect("valid selection");
        assert!(!sel.enabled(&crate::rules::REFERENCE_DEPLOYED_LATER));
        assert!(!sel.enabled(&crate::rules::ISOLATED_RESOURCE_GROUP));
        assert!(sel.enabled(&crate::rules::MISSING_RESOURCE_GROUP));
        assert_eq!(
            sel.severity(&crate::rules::JOB_GATE_WITHOUT_READINESS),
            Severity::Error
        );
        let err = Config::parse("select = [\"CS9x\"]\n").expect_err("bad selector");
        assert_eq!(err.0, Some(11..15));
    }
}
