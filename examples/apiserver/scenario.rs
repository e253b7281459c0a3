//! What the simulated controllers and the fault injector do: the scenario file
//! (`fixtures/apply/scenario.yaml` shows its format).

use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

/// What the simulated controllers and the fault injector do (YAML or JSON file).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    /// Delay before a workload without an entry becomes ready (default 50 ms).
    pub default_delay_ms: Option<u64>,
    /// Delay between a delete request and the object being gone (default 0).
    pub delete_delay_ms: Option<u64>,
    #[serde(default)]
    pub resources: Vec<ResourceScenario>,
    #[serde(default)]
    pub faults: Faults,
}

/// One object's simulated behaviour, matched by kind and name (and namespace when given).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceScenario {
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
    /// Milliseconds after each apply until it is ready (or failed).
    pub ready_after_ms: Option<u64>,
    /// Never becomes ready.
    #[serde(default)]
    pub never: bool,
    /// Fails instead (Job `Failed`, Deployment `ProgressDeadlineExceeded`, Pod `Failed`).
    #[serde(default)]
    pub fail: bool,
    /// For any kind: `.status` set to `value` `afterMs` after creation.
    #[serde(default)]
    pub status: Vec<TimedStatus>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimedStatus {
    pub after_ms: u64,
    pub value: Value,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Faults {
    /// Fraction (0–1) of non-watch requests answered with 500, 503 or 429 and no effect.
    #[serde(default)]
    pub error_rate: f64,
    /// Added latency on every response.
    #[serde(default)]
    pub slow_ms: u64,
    /// Watches are cut after this many milliseconds.
    pub watch_drop_ms: Option<u64>,
    /// Seed of the fault generator (deterministic runs).
    #[serde(default)]
    pub seed: u64,
}

impl Scenario {
    /// Reads a scenario from YAML (or JSON) text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let node = chartseq::parse::parse_document(text, 0, chartseq::parse::Limits::default())
            .map_err(|e| format!("scenario: {} (byte {})", e.message, e.offset))?;
        let json = node.map_or_else(|| json!({}), |n| n.to_json());
        serde_json::from_value(json).map_err(|e| format!("scenario: {e}"))
    }

    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        Self::parse(&text)
    }

    pub(super) fn entry(
        &self,
        kind: &str,
        ns: Option<&str>,
        name: &str,
    ) -> Option<&ResourceScenario> {
        self.resources.iter().find(|r| {
            r.kind == kind
                && r.name == name
                && (r.namespace.is_none() || r.namespace.as_deref() == ns)
        })
    }
}
