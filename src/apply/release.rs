//! One revision of a release: Helm's own `Release` (SPEC §5) and the plan chartseq runs it by.
//!
//! The revision is stored as Helm v4 stores it (see [`super::storage`]): `name`, `namespace`,
//! `version`, `info` (status, description, timestamps), `chart`, `config`, `manifest` (the
//! rendered documents with their `# Source:` lines and their sequencing annotations, which a
//! sequencing-aware Helm rebuilds its uninstall order from), `hooks`, `apply_method: "ssa"`
//! and `sequenced: true` (helm/helm PR #32314). chartseq adds one key Helm ignores,
//! `chartseq`: the exact plan it applied (steps and their prerequisites, by index into the
//! manifest's documents then the hooks) and how the run went. A revision Helm wrote (or
//! rewrote, dropping that key) is planned again from its manifest, so uninstall and rollback
//! always follow the recorded documents, never today's chart.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::deploy::Report;
use crate::model::annotations::DEPENDS_ON_GROUPS;
use crate::model::argo::DeletePolicy;
use crate::model::{Content, Model, Placement};
use crate::plan::{Dialect, External, Plan, Wait};

/// One object of the release.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    /// The object as applied (sequencing annotation Helm strips already removed; ownership
    /// marks are added when it is sent).
    pub object: Value,
    /// The `# Source:` template path.
    pub source: Option<String>,
    /// The document as rendered, without its `# Source:` line: what the manifest keeps.
    pub text: String,
    pub hook: Option<HookInfo>,
    /// HIP-0025's wait for it ([`crate::plan::wait::hip`]), decided from the model it was read
    /// from; a dialect's own wait ([`Record::waits`]) overrides it.
    pub wait: Wait,
    /// When Argo CD deletes it, if Argo CD reads it as a hook (empty otherwise).
    pub argo_delete_policies: Vec<DeletePolicy>,
}

impl Item {
    /// `Kind/name`, with the recorded namespace when there is one. Every item records the
    /// release namespace unless its manifest names another, cluster-scoped ones too: once the
    /// kind's scope is known, [`Item::label_in`] says it right.
    #[must_use]
    pub fn label(&self) -> String {
        self.label_in(self.namespace.as_deref())
    }

    /// `Kind/name`, as progress lists a step's objects.
    #[must_use]
    pub fn short(&self) -> String {
        format!("{}/{}", self.kind, self.name)
    }

    /// `Kind/name`, with `namespace` when there is one.
    #[must_use]
    pub fn label_in(&self, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) => format!("{}/{} (namespace {ns})", self.kind, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }

    /// Identity: API group, kind, namespace, name.
    #[must_use]
    pub fn identity(&self) -> (String, String, Option<String>, String) {
        (
            crate::model::kinds::api_group(&self.api_version).to_owned(),
            self.kind.clone(),
            self.namespace.clone(),
            self.name.clone(),
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HookInfo {
    pub events: Vec<String>,
    pub weight: i64,
    pub delete_policies: Vec<String>,
}

/// One plan step as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedStep {
    /// `chart/path group`, or `chart/path (unsequenced)`.
    pub label: String,
    /// Indexes into [`Record::items`], in apply order.
    pub resources: Vec<usize>,
    /// Direct prerequisites (indexes into [`Record::steps`]).
    pub after: Vec<usize>,
}

/// One revision of a release.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub name: String,
    pub namespace: String,
    pub revision: u32,
    /// Helm's statuses: `pending-install`, `pending-upgrade`, `pending-rollback`,
    /// `deployed`, `failed`, `superseded`, `uninstalling`, `uninstalled`.
    pub status: String,
    pub description: String,
    /// Go RFC 3339 timestamps, as Helm writes them.
    pub first_deployed: Option<String>,
    pub last_deployed: Option<String>,
    pub deleted: Option<String>,
    /// Applied by a sequenced plan (Helm's `sequenced`).
    pub sequenced: bool,
    /// Manifest objects first (in recorded order), then hooks, then `crds/` objects (which a
    /// revision does not store: Helm installs them and never tracks them).
    pub items: Vec<Item>,
    /// Indexes of `crds/` objects.
    pub crds: Vec<usize>,
    /// Indexes of hooks in the order Helm runs them (weight, name, kind).
    pub hooks: Vec<usize>,
    pub steps: Vec<RecordedStep>,
    /// How the run of this revision went, once it ran.
    pub report: Option<Report>,
    /// The plan was recorded by chartseq (not planned again from a manifest Helm wrote).
    pub plan_recorded: bool,
    /// Helm's release fields carried as they are (`chart`, `config`, `info.notes`, hooks'
    /// `last_run`, fields a newer Helm adds).
    pub helm: Map<String, Value>,
    /// Labels of the storage object other than Helm's own (`helm install --labels`).
    pub labels: BTreeMap<String, String>,
    /// The dialect whose order and waits the plan follows (`None`: HIP-0025). A dialect's
    /// steps may hold hooks, applied as the tool applies them.
    pub dialect: Option<Dialect>,
    /// How each item is waited for when its dialect says (by index into `items`); the others
    /// wait as HIP-0025 says ([`Item::wait`]).
    pub waits: BTreeMap<usize, Wait>,
    /// Objects outside the release each item waits to exist before it is applied.
    pub external: BTreeMap<usize, Vec<External>>,
    /// The order the dialect's tool deletes the release in, when it is not the exact reverse
    /// of `steps` (werf's delete dependencies, Argo CD's waves, KOTS's deletion phases, kapp's
    /// delete rules): each step deleted once the steps its `after` names are gone, and waited
    /// gone where a later step names it (else at the end). `None`: the exact reverse.
    pub uninstall: Option<Vec<RecordedStep>>,
    /// Argo CD's delete hooks (by index into `items`), for a release applied in its order:
    /// `PreDelete` ones run before the uninstall deletes anything, `PostDelete` ones once
    /// everything is gone, each waited healthy by Argo CD's check, in place of Helm's
    /// `pre-delete`/`post-delete` events. `None`: Helm's events run them.
    pub delete_hooks: Option<DeleteHooks>,
}

/// The delete hooks of a release applied in Argo CD's order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteHooks {
    /// `argocd.argoproj.io/hook: PreDelete` or Helm's `pre-delete`, in input order.
    pub pre: Vec<usize>,
    /// `argocd.argoproj.io/hook: PostDelete` or Helm's `post-delete`, in input order.
    pub post: Vec<usize>,
}

/// What Helm's listings print for a revision that records no chart.
pub const MISSING: &str = "MISSING";

/// The `# Source:` line Helm puts before each document of a manifest.
const SOURCE: &str = "# Source: ";

impl Record {
    /// The chart's metadata, when the revision records one.
    fn chart_metadata(&self) -> Option<&Map<String, Value>> {
        self.helm.get("chart")?.get("metadata")?.as_object()
    }

    /// `name-version` of the chart, as Helm prints it; `MISSING` when the revision records
    /// no chart (Helm's `formatChartName`).
    #[must_use]
    pub fn chart(&self) -> String {
        let Some(meta) = self.chart_metadata() else {
            return MISSING.to_owned();
        };
        let field = |key: &str| meta.get(key).and_then(Value::as_str);
        match (field("name"), field("version")) {
            (Some(n), Some(v)) if !v.is_empty() => format!("{n}-{v}"),
            (Some(n), _) => n.to_owned(),
            _ => String::new(),
        }
    }

    /// The chart's `appVersion`; `MISSING` without a chart (Helm's `formatAppVersion`).
    #[must_use]
    pub fn app_version(&self) -> &str {
        match self.chart_metadata() {
            None => MISSING,
            Some(meta) => meta
                .get("appVersion")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        }
    }

    /// When the revision last changed state, for listings.
    #[must_use]
    pub fn updated(&self) -> &str {
        self.deleted
            .as_deref()
            .or(self.last_deployed.as_deref())
            .unwrap_or_default()
    }

    fn is_manifest(&self, i: usize) -> bool {
        !self.crds.contains(&i) && self.items[i].hook.is_none()
    }

    /// Puts the items in stored order: manifest objects in the order the plan applies them,
    /// hooks by weight, then `crds/` objects. Recorded indexes stay valid when the revision
    /// is read back, and the manifest reads in install order.
    ///
    /// A revision read back keeps the order it was stored in (`by_plan` false): its recorded
    /// plan indexes into that order.
    fn normalize(&mut self, by_plan: bool) {
        let n = self.items.len();
        let mut position = vec![usize::MAX; n];
        let planned = self
            .steps
            .iter()
            .flat_map(|s| s.resources.iter())
            .chain(self.hooks.iter())
            .chain(self.crds.iter());
        for (p, &i) in planned.enumerate() {
            if by_plan && i < n && position[i] == usize::MAX {
                position[i] = p;
            }
        }
        let rank = |i: usize| {
            if self.crds.contains(&i) {
                2
            } else {
                u8::from(self.items[i].hook.is_some())
            }
        };
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| (rank(i), position[i], i));
        let mut new_index = vec![0; n];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let mut items: Vec<Option<Item>> = self.items.drain(..).map(Some).collect();
        self.items = order.iter().filter_map(|&old| items[old].take()).collect();
        let remap = |v: &mut Vec<usize>| v.iter_mut().for_each(|i| *i = new_index[*i]);
        remap(&mut self.crds);
        remap(&mut self.hooks);
        for s in &mut self.steps {
            remap(&mut s.resources);
        }
        for s in self.uninstall.iter_mut().flatten() {
            remap(&mut s.resources);
        }
        if let Some(hooks) = &mut self.delete_hooks {
            remap(&mut hooks.pre);
            remap(&mut hooks.post);
        }
        self.waits = std::mem::take(&mut self.waits)
            .into_iter()
            .map(|(i, w)| (new_index[i], w))
            .collect();
        self.external = std::mem::take(&mut self.external)
            .into_iter()
            .map(|(i, e)| (new_index[i], e))
            .collect();
    }

    /// How an item is waited for once applied: the dialect's wait, else HIP-0025's.
    #[must_use]
    pub fn wait_of(&self, index: usize) -> &Wait {
        const KSTATUS: Wait = Wait::Kstatus;
        self.waits
            .get(&index)
            .or_else(|| self.items.get(index).map(|item| &item.wait))
            .unwrap_or(&KSTATUS)
    }

    /// The manifest Helm keeps: every non-hook object as rendered, each after its `# Source:`
    /// line, in recorded order.
    #[must_use]
    pub fn manifest(&self) -> String {
        let mut out = String::new();
        for (i, item) in self.items.iter().enumerate() {
            if self.is_manifest(i) {
                document(&mut out, item);
            }
        }
        out
    }

    /// Helm's release JSON for this revision.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let mut release = self.helm.clone();
        release.insert("name".into(), json!(self.name));
        let mut info = release
            .get("info")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (key, value) in [
            ("first_deployed", &self.first_deployed),
            ("last_deployed", &self.last_deployed),
            ("deleted", &self.deleted),
        ] {
            match value {
                Some(v) => info.insert(key.into(), json!(v)),
                None => info.remove(key),
            };
        }
        info.insert("description".into(), json!(self.description));
        info.insert("status".into(), json!(self.status));
        release.insert("info".into(), Value::Object(info));
        if !release.contains_key("manifest") {
            release.insert("manifest".into(), json!(self.manifest()));
        }
        if !release.contains_key("hooks") {
            let hooks: Vec<Value> = self
                .items
                .iter()
                .filter_map(|item| item.hook.as_ref().map(|h| (item, h)))
                .map(|(item, h)| hook_json(item, h))
                .collect();
            if !hooks.is_empty() {
                release.insert("hooks".into(), Value::Array(hooks));
            }
        }
        release.insert("version".into(), json!(self.revision));
        release.insert("namespace".into(), json!(self.namespace));
        if self.sequenced {
            release.insert("sequenced".into(), json!(true));
        }
        if self.plan_recorded {
            let mut own = json!({"steps": self.steps});
            if let Some(dialect) = &self.dialect {
                own["dialect"] = json!(dialect.name());
                own["waits"] = json!(self.waits.iter().collect::<Vec<_>>());
                own["external"] = json!(self.external.iter().collect::<Vec<_>>());
                if let Some(uninstall) = &self.uninstall {
                    own["uninstall"] = json!(uninstall);
                }
                if let Some(hooks) = &self.delete_hooks {
                    own["delete_hooks"] = json!(hooks);
                }
            }
            if let Some(report) = &self.report {
                own["report"] = json!(report);
            }
            release.insert("chartseq".into(), own);
        } else {
            release.remove("chartseq");
        }
        Value::Object(release)
    }

    /// Reads a revision from Helm's release JSON: the objects from its manifest and hooks,
    /// the plan from what chartseq recorded or, failing that, planned again from them.
    pub fn from_json(
        mut release: Map<String, Value>,
        labels: BTreeMap<String, String>,
    ) -> Result<Self, String> {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let name = text(release.get("name")).unwrap_or_default();
        let namespace = text(release.get("namespace")).unwrap_or_default();
        let revision = release
            .get("version")
            .and_then(Value::as_u64)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| format!("release {name}: no revision number"))?;
        let info = release.get("info").cloned().unwrap_or(Value::Null);
        let when = |key: &str| text(info.get(key)).filter(|t| !t.is_empty());
        let sequenced = release.get("sequenced").and_then(Value::as_bool) == Some(true)
            || release
                .get("sequencing_info")
                .is_some_and(|s| s["enabled"] == true);
        // The documents Helm stores: the manifest, then each hook after its `# Source:` line.
        let mut stream = text(release.get("manifest")).unwrap_or_default();
        for hook in release
            .get("hooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let path = hook["path"].as_str().unwrap_or_default();
            let manifest = hook["manifest"].as_str().unwrap_or_default();
            let _ = write!(stream, "\n---\n{SOURCE}{path}\n{manifest}\n");
        }
        let model = crate::model::load_stream(
            &format!("release {name} revision {revision}"),
            stream.into_bytes(),
            crate::parse::Limits::default(),
        );
        let plan = crate::plan::plan(&model).ok();
        let own = release.remove("chartseq");
        let dialect = match own.as_ref().and_then(|o| o["dialect"].as_str()) {
            None => None,
            Some(order) => Some(Dialect::from_name(order).ok_or_else(|| {
                format!(
                    "release {name} revision {revision}: recorded in an unknown order {order:?}"
                )
            })?),
        };
        // A release applied in Argo CD's order holds its hooks named by `generateName`.
        let argo = dialect.is_some_and(Dialect::generated_hooks);
        let mut record = from_model(&model, plan.as_ref(), &name, &namespace, false, argo)
            .map_err(|e| format!("release {name} revision {revision}: {e}"))?;
        let recorded: Option<Vec<RecordedStep>> = own
            .as_ref()
            .and_then(|o| serde_json::from_value::<Vec<RecordedStep>>(o["steps"].clone()).ok())
            .filter(|steps| plan_fits(&record, steps, dialect.is_some()));
        if let Some(steps) = recorded {
            record.steps = steps;
            record.plan_recorded = true;
            if let (Some(dialect), Some(o)) = (dialect, own.as_ref()) {
                // A dialect's steps run its hooks; the others stay Helm's, by event.
                let in_steps: std::collections::BTreeSet<usize> = record
                    .steps
                    .iter()
                    .flat_map(|s| s.resources.iter().copied())
                    .collect();
                record.hooks.retain(|i| !in_steps.contains(i));
                let n = record.items.len();
                record.waits = serde_json::from_value::<Vec<(usize, Wait)>>(o["waits"].clone())
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|(i, _)| *i < n)
                    .collect();
                record.external =
                    serde_json::from_value::<Vec<(usize, Vec<External>)>>(o["external"].clone())
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|(i, _)| *i < n)
                        .collect();
                record.uninstall =
                    serde_json::from_value::<Vec<RecordedStep>>(o["uninstall"].clone())
                        .ok()
                        .filter(|steps| deletes_fit(&record, steps));
                record.delete_hooks =
                    serde_json::from_value::<DeleteHooks>(o["delete_hooks"].clone())
                        .ok()
                        .filter(|hooks| {
                            hooks
                                .pre
                                .iter()
                                .chain(&hooks.post)
                                .all(|&i| i < n && !record.crds.contains(&i))
                        });
                record.dialect = Some(dialect);
            }
        }
        record.report = own.and_then(|o| serde_json::from_value(o["report"].clone()).ok());
        record.revision = revision;
        record.status = text(info.get("status")).unwrap_or_else(|| "unknown".into());
        record.description = text(info.get("description")).unwrap_or_default();
        record.first_deployed = when("first_deployed");
        record.last_deployed = when("last_deployed");
        record.deleted = when("deleted");
        record.sequenced = sequenced;
        record.labels = labels;
        record.helm = release;
        Ok(record)
    }

    /// A new revision that re-applies this one (a rollback), with a fresh outcome.
    #[must_use]
    pub fn again(&self, revision: u32, status: &str, description: String) -> Self {
        let mut next = self.clone();
        next.revision = revision;
        status.clone_into(&mut next.status);
        next.description = description;
        next.last_deployed = Some(now());
        next.deleted = None;
        next.report = None;
        next.sequenced = true;
        next.plan_recorded = true;
        next.helm.insert("apply_method".into(), json!("ssa"));
        if let Some(hooks) = next.helm.get_mut("hooks").and_then(Value::as_array_mut) {
            for hook in hooks {
                if let Some(h) = hook.as_object_mut() {
                    h.remove("last_run");
                }
            }
        }
        next
    }
}

/// Whether recorded steps describe this record's objects: every manifest object in exactly
/// one step, nothing else. A dialect's steps may also hold hooks, and a hook may run in two
/// of them (werf stages, Argo phases); a manifest object it never applies stays out.
fn plan_fits(record: &Record, steps: &[RecordedStep], dialect: bool) -> bool {
    let mut seen = vec![false; record.items.len()];
    for s in steps {
        if s.after.iter().any(|&a| a >= steps.len()) {
            return false;
        }
        for &i in &s.resources {
            if i >= seen.len() || record.crds.contains(&i) {
                return false;
            }
            let hook = record.items[i].hook.is_some();
            if !dialect && (seen[i] || hook) {
                return false;
            }
            seen[i] = true;
        }
    }
    dialect || (0..seen.len()).all(|i| seen[i] || !record.is_manifest(i))
}

/// Whether a recorded uninstall order names only this record's objects, none from `crds/`,
/// each once: otherwise the exact reverse of the steps stands in for it.
fn deletes_fit(record: &Record, steps: &[RecordedStep]) -> bool {
    let mut seen = vec![false; record.items.len()];
    steps.iter().all(|s| {
        s.after.iter().all(|&a| a < steps.len())
            && s.resources.iter().all(|&i| {
                i < seen.len()
                    && !record.crds.contains(&i)
                    && !std::mem::replace(&mut seen[i], true)
            })
    })
}

fn document(out: &mut String, item: &Item) {
    out.push_str("---\n");
    if let Some(source) = &item.source {
        out.push_str(SOURCE);
        out.push_str(source);
        out.push('\n');
    }
    out.push_str(item.text.trim_end());
    out.push('\n');
}

/// A hook as Helm records it (`pkg/release/v1/hook.go`).
fn hook_json(item: &Item, hook: &HookInfo) -> Value {
    let mut h = json!({
        "name": item.name,
        "kind": item.kind,
        "path": item.source.clone().unwrap_or_default(),
        "manifest": item.text.trim_end(),
        "events": hook.events,
        "last_run": {"phase": ""},
    });
    if hook.weight != 0 {
        h["weight"] = json!(hook.weight);
    }
    if !hook.delete_policies.is_empty() {
        h["delete_policies"] = json!(hook.delete_policies);
    }
    h
}

/// Builds a new revision from the model and its plan: the objects, the steps with their
/// direct prerequisites, CRDs and hooks, without re-planning or re-reading annotations.
pub fn record_from_plan(
    model: &Model,
    plan: &Plan,
    name: &str,
    namespace: &str,
) -> Result<Record, String> {
    let argo = plan.dialect.generated_hooks();
    let mut record = from_model(model, Some(plan), name, namespace, true, argo)?;
    record.sequenced = true;
    record.plan_recorded = true;
    record.first_deployed = Some(now());
    record.last_deployed = record.first_deployed.clone();
    record.helm.insert("apply_method".into(), json!("ssa"));
    Ok(record)
}

/// The objects of a model in stored order (`by_plan`: install order) and the steps of its
/// plan (one unsequenced step when there is no plan); with `argo`, Argo CD's hooks named only
/// by `generateName` too.
fn from_model(
    model: &Model,
    plan: Option<&Plan>,
    name: &str,
    namespace: &str,
    by_plan: bool,
    argo: bool,
) -> Result<Record, String> {
    let mut items = Vec::new();
    let mut by_doc = BTreeMap::new();
    for (doc_id, doc) in model.documents.iter().enumerate() {
        let resource = match &doc.content {
            Content::Resource(r) => r,
            // An Argo CD hook named only by `generateName`, in Argo CD's order: created under
            // a name the server makes, on every run (the deployer POSTs it).
            Content::NotAnObject {
                generated: Some(r), ..
            } if r.argo.is_hook && argo => r,
            // Documents that are not objects were reported (and stop the deploy unless
            // --no-lint); they cannot be sent.
            Content::Empty | Content::Invalid { .. } | Content::NotAnObject { .. } => continue,
        };
        let file = model.sources.get(doc.file);
        let raw = file.text(doc.span);
        let node = crate::parse::parse_document(&raw, 0, crate::parse::Limits::default()).map_err(
            |e| {
                format!(
                    "{}: {}",
                    crate::plan::output::label(model, doc_id),
                    e.message
                )
            },
        )?;
        let Some(mut object) = node.map(|n| n.to_json()) else {
            continue;
        };
        strip_sequencing(&mut object);
        let ns = resource
            .id
            .namespace
            .clone()
            .unwrap_or_else(|| namespace.to_owned());
        let hook = resource.hook.as_ref().map(|h| HookInfo {
            events: h.events.clone(),
            weight: h.weight,
            delete_policies: h.delete_policies.clone(),
        });
        by_doc.insert(doc_id, items.len());
        items.push(Item {
            api_version: resource.api_version.clone(),
            kind: resource.id.kind.clone(),
            namespace: Some(ns),
            name: resource.id.name.clone(),
            object,
            source: doc.source_path.clone(),
            text: without_source_line(&raw),
            hook,
            wait: crate::plan::wait::hip(resource),
            argo_delete_policies: if resource.argo.is_hook {
                resource.argo.delete_policies.clone()
            } else {
                Vec::new()
            },
        });
    }
    let pick = |docs: &[usize]| -> Vec<usize> {
        docs.iter().filter_map(|d| by_doc.get(d).copied()).collect()
    };
    let (steps, crds, hooks) = if let Some(plan) = plan.filter(|p| p.dialect.release_wide()) {
        dialect_steps(model, plan, &items, &pick)
    } else if let Some(plan) = plan {
        let steps = plan
            .steps
            .iter()
            .map(|s| RecordedStep {
                label: format!(
                    "{} {}",
                    model.charts[s.chart].display,
                    s.group.as_deref().unwrap_or("(unsequenced)")
                ),
                resources: pick(&s.resources),
                after: s.after.clone(),
            })
            .collect();
        (steps, pick(&plan.crds), pick(&plan.hooks))
    } else {
        let mut hooks: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].hook.is_some())
            .collect();
        // Helm's hook order: weight, name, kind.
        hooks.sort_by_key(|&i| {
            let item = &items[i];
            (
                crate::plan::hook_key(
                    item.hook.as_ref().map_or(0, |h| h.weight),
                    &item.name,
                    &item.kind,
                ),
                i,
            )
        });
        let rest = (0..items.len())
            .filter(|&i| items[i].hook.is_none())
            .collect();
        let step = RecordedStep {
            label: format!("{name} (unsequenced)"),
            resources: rest,
            after: Vec::new(),
        };
        (vec![step], Vec::new(), hooks)
    };
    let mut record = Record {
        name: name.to_owned(),
        namespace: namespace.to_owned(),
        revision: 0,
        status: String::new(),
        description: String::new(),
        first_deployed: None,
        last_deployed: None,
        deleted: None,
        sequenced: false,
        crds,
        hooks,
        items,
        steps,
        report: None,
        plan_recorded: false,
        helm: Map::new(),
        labels: BTreeMap::new(),
        dialect: None,
        waits: BTreeMap::new(),
        external: BTreeMap::new(),
        uninstall: None,
        delete_hooks: None,
    };
    if let Some(plan) = plan.filter(|p| p.dialect.release_wide()) {
        record.dialect = Some(plan.dialect);
        for (doc, &i) in &by_doc {
            // `crds/` documents are Helm's whatever the dialect: waited established.
            if model.documents[*doc].placement == Placement::Crd {
                continue;
            }
            if let Some(wait) = plan.waits.get(doc) {
                record.waits.insert(i, wait.clone());
            }
            if let Some(external) = plan.external.get(doc) {
                record.external.insert(i, external.clone());
            }
        }
        record.uninstall = plan.uninstall.as_ref().map(|steps| {
            let kept = |d: &usize| model.documents[*d].placement != Placement::Crd;
            steps
                .iter()
                .map(|s| RecordedStep {
                    label: s.group.as_deref().unwrap_or("(not objects)").to_owned(),
                    resources: s
                        .resources
                        .iter()
                        .filter(|d| kept(d))
                        .filter_map(|d| by_doc.get(d).copied())
                        .collect(),
                    after: s.after.clone(),
                })
                .collect()
        });
        if plan.dialect == Dialect::Argo {
            use crate::model::argo::HookType;
            let hooks = |t| pick(&crate::plan::argo::delete_hooks(model, t));
            let hooks = DeleteHooks {
                pre: hooks(HookType::PreDelete),
                post: hooks(HookType::PostDelete),
            };
            // Waited healthy as Argo CD judges them, whatever HIP-0025 would say.
            for (doc, &i) in &by_doc {
                if hooks.pre.contains(&i) || hooks.post.contains(&i) {
                    record
                        .waits
                        .insert(i, crate::plan::argo::delete_hook_wait(model, *doc));
                }
            }
            record.delete_hooks = Some(hooks);
        }
    }
    record.normalize(by_plan);
    Ok(record)
}

type Steps = (Vec<RecordedStep>, Vec<usize>, Vec<usize>);

/// A dialect's plan as recorded steps. What it applies before its pre-install hooks (the
/// plan's `crds`) becomes a first step the others wait for; documents from `crds/` stay
/// Helm's, whatever the dialect says: created first, never changed or deleted (their custom
/// resources would go with them). Its steps run its hooks; hooks in none of them stay Helm's,
/// run by event (pre-delete on uninstall, …).
fn dialect_steps(
    model: &Model,
    plan: &Plan,
    items: &[Item],
    pick: &dyn Fn(&[usize]) -> Vec<usize>,
) -> Steps {
    let from_crds_dir = |d: &usize| model.documents[*d].placement == Placement::Crd;
    let templated = |docs: &[usize]| -> Vec<usize> {
        pick(
            &docs
                .iter()
                .copied()
                .filter(|d| !from_crds_dir(d))
                .collect::<Vec<_>>(),
        )
    };
    let crds: Vec<usize> = pick(
        &model
            .documents
            .iter()
            .enumerate()
            .filter(|(_, d)| d.placement == Placement::Crd)
            .map(|(i, _)| i)
            .collect::<Vec<_>>(),
    );
    let first = templated(&plan.crds);
    let shift = usize::from(!first.is_empty());
    let mut steps = Vec::with_capacity(plan.steps.len() + shift);
    if shift == 1 {
        steps.push(RecordedStep {
            label: format!("{} (before hooks)", plan.dialect.name()),
            resources: first,
            after: Vec::new(),
        });
    }
    for s in &plan.steps {
        let mut after: Vec<usize> = s.after.iter().map(|a| a + shift).collect();
        if after.is_empty() && shift == 1 {
            after.push(0);
        }
        steps.push(RecordedStep {
            label: s.group.as_deref().unwrap_or("(not objects)").to_owned(),
            resources: templated(&s.resources),
            after,
        });
    }
    let in_steps: std::collections::BTreeSet<usize> = steps
        .iter()
        .flat_map(|s| s.resources.iter().copied())
        .collect();
    let mut hooks: Vec<usize> = (0..items.len())
        .filter(|i| items[*i].hook.is_some() && !in_steps.contains(i))
        .collect();
    // Helm's hook order: weight, name, kind.
    hooks.sort_by_key(|&i| {
        let item = &items[i];
        (
            crate::plan::hook_key(
                item.hook.as_ref().map_or(0, |h| h.weight),
                &item.name,
                &item.kind,
            ),
            i,
        )
    });
    (steps, crds, hooks)
}

/// A document's text without the `# Source:` comment Helm writes above it.
fn without_source_line(doc: &str) -> String {
    let mut rest = doc;
    while let Some(line_end) = rest.find('\n') {
        let line = rest[..line_end].trim_end();
        if line.starts_with(SOURCE) || line.is_empty() {
            rest = &rest[line_end + 1..];
        } else {
            break;
        }
    }
    if rest.starts_with(SOURCE) && !rest.contains('\n') {
        rest = "";
    }
    rest.to_owned()
}

/// Removes `helm.sh/depends-on/resource-groups`: not a valid annotation key, Helm strips it
/// before apply (SPEC §1).
fn strip_sequencing(object: &mut Value) {
    if let Some(annotations) = object["metadata"]["annotations"].as_object_mut() {
        annotations.remove(DEPENDS_ON_GROUPS);
        if annotations.is_empty() {
            if let Some(meta) = object["metadata"].as_object_mut() {
                meta.remove("annotations");
            }
        }
    }
}

/// Now, as Go's RFC 3339 with nanoseconds in UTC (how `time.Time` marshals).
#[must_use]
pub fn now() -> String {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(
        i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        since.subsec_nanos(),
    )
}

/// Seconds since the epoch as RFC 3339 UTC, with the fraction Go would print.
#[must_use]
pub fn rfc3339(secs: i64, nanos: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since the epoch (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let fraction = if nanos == 0 {
        String::new()
    } else {
        format!(".{nanos:09}").trim_end_matches('0').to_owned()
    };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}{fraction}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_go_rfc3339_nano() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(1_700_000_000, 120_000_000),
            "2023-11-14T22:13:20.12Z"
        );
        assert_eq!(rfc3339(951_782_400, 5), "2000-02-29T00:00:00.000000005Z");
        assert_eq!(rfc3339(-62_135_596_800, 0), "0001-01-01T00:00:00Z");
    }

    #[test]
    fn strips_only_the_invalid_sequencing_key() {
        let mut obj = serde_json::json!({"metadata": {"annotations": {DEPENDS_ON_GROUPS: "[\"db\"]", "helm.sh/resource-group": "app"}}});
        strip_sequencing(&mut obj);
        assert_eq!(
            obj["metadata"]["annotations"],
            serde_json::json!({"helm.sh/resource-group": "app"})
        );
        let mut obj = serde_json::json!({"metadata": {"annotations": {DEPENDS_ON_GROUPS: "[]"}}});
        strip_sequencing(&mut obj);
        assert!(obj["metadata"].get("annotations").is_none());
    }

    const STREAM: &str = "---
# Source: shop/templates/hook.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    helm.sh/hook: pre-install
    helm.sh/hook-weight: \"-1\"
spec: {}
---
# Source: shop/templates/db.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: db
  annotations:
    helm.sh/resource-group: db
---
# Source: shop/templates/app.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  annotations:
    helm.sh/resource-group: app
    helm.sh/depends-on/resource-groups: '[\"db\"]'
";

    fn record() -> Record {
        let model = crate::model::load_stream(
            "s",
            STREAM.as_bytes().to_vec(),
            crate::parse::Limits::default(),
        );
        let plan = crate::plan::plan(&model).expect("plans");
        let mut r = record_from_plan(&model, &plan, "shop", "default").expect("records");
        r.revision = 1;
        r.status = "deployed".into();
        r
    }

    #[test]
    fn manifest_keeps_sources_and_sequencing_and_leaves_hooks_out() {
        let r = record();
        assert_eq!(
            r.manifest(),
            "---\n# Source: shop/templates/db.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db\n  annotations:\n    helm.sh/resource-group: db\n---\n# Source: shop/templates/app.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  annotations:\n    helm.sh/resource-group: app\n    helm.sh/depends-on/resource-groups: '[\"db\"]'\n"
        );
        // Stored order: manifest objects, then hooks.
        assert_eq!(r.items[2].name, "migrate");
        assert_eq!(r.hooks, [2]);
        let json = r.to_json();
        assert_eq!(json["hooks"][0]["path"], "shop/templates/hook.yaml");
        assert_eq!(json["hooks"][0]["weight"], -1);
        assert_eq!(json["hooks"][0]["events"], json!(["pre-install"]));
        assert_eq!(
            (json["sequenced"].clone(), json["apply_method"].clone()),
            (json!(true), json!("ssa"))
        );
        assert_eq!(json["version"], 1);
        assert_eq!(json["info"]["status"], "deployed");
    }

    #[test]
    fn a_revision_reads_back_with_its_recorded_plan_or_planned_again() {
        let r = record();
        let Value::Object(json) = r.to_json() else {
            panic!("an object")
        };
        let back = Record::from_json(json.clone(), BTreeMap::new()).expect("reads");
        assert_eq!(back.items, r.items);
        assert_eq!(back.steps, r.steps);
        assert_eq!(back.hooks, r.hooks);
        assert!(back.plan_recorded);
        assert_eq!(back.to_json(), r.to_json());
        // Without chartseq's key (Helm rewrote it), the manifest is planned again: same steps.
        let mut helm_only = json;
        helm_only.remove("chartseq");
        let again = Record::from_json(helm_only, BTreeMap::new()).expect("reads");
        assert!(!again.plan_recorded);
        assert_eq!(again.steps, r.steps);
        assert_eq!(again.steps[1].after, [0]);
    }

    /// A release applied in Argo CD's order records its cascade (waves, highest first, no CRD,
    /// nothing `Delete=false` or `keep`) and its delete hooks, waited healthy by Argo CD's Job
    /// check; both read back from the release, so uninstall never needs today's chart.
    #[test]
    fn an_argo_release_records_its_cascade_and_delete_hooks() {
        let model = crate::model::load_stream(
            "s",
            std::fs::read("fixtures/dialects/argo/delete-hooks.yaml").expect("the fixture"),
            crate::parse::Limits::default(),
        );
        let mut plan = crate::plan::plan_in(&model, Dialect::Argo).expect("plans");
        crate::plan::with_uninstall(&model, &mut plan).expect("an uninstall order");
        let mut r = record_from_plan(&model, &plan, "shop", "default").expect("records");
        r.revision = 1;
        let Value::Object(json) = r.to_json() else {
            panic!("an object")
        };
        let back = Record::from_json(json, BTreeMap::new()).expect("reads");
        let names = |v: &[usize]| -> Vec<String> {
            v.iter().map(|&i| back.items[i].name.clone()).collect()
        };
        let hooks = back.delete_hooks.clone().expect("delete hooks recorded");
        assert_eq!(names(&hooks.pre), ["before-delete"]);
        assert_eq!(names(&hooks.post), ["after-delete"]);
        for &i in hooks.pre.iter().chain(&hooks.post) {
            assert_eq!(back.wait_of(i), &Wait::ArgoHook);
        }
        let cascade: Vec<(String, Vec<String>)> = back
            .uninstall
            .clone()
            .expect("the cascade recorded")
            .iter()
            .map(|s| (s.label.clone(), names(&s.resources)))
            .collect();
        let step = |label: &str, names: &[&str]| {
            (
                label.to_owned(),
                names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            cascade,
            [
                step("delete:wave=2", &["frontend", "frontend"]),
                step("delete:wave=1", &["backend", "migrate"]),
                step("delete:wave=0", &["before-delete", "config"]),
            ]
        );
        assert_eq!(back.to_json(), r.to_json());
    }

    /// A revision helm wrote whose manifest cannot be planned (a cycle) keeps Helm's hook
    /// order: a `ServiceAccount` before the `Job` of the same name and weight that runs as it
    /// (install order, not the kinds' spelling).
    #[test]
    fn hooks_of_a_revision_planned_again_keep_helms_kind_order() {
        let group = |name: &str, after: &str| {
            format!(
                "---\n# Source: c/templates/{name}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n    helm.sh/resource-group: {name}\n    helm.sh/depends-on/resource-groups: '[\"{after}\"]'\n"
            )
        };
        let hook = |kind: &str, api: &str| {
            json!({
                "path": format!("c/templates/{kind}.yaml"),
                "manifest": format!("apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: setup\n  annotations:\n    helm.sh/hook: pre-install\n"),
            })
        };
        let release = json!({
            "name": "r",
            "namespace": "default",
            "version": 1,
            "info": {"status": "deployed"},
            "manifest": group("a", "b") + &group("b", "a"),
            "hooks": [hook("Job", "batch/v1"), hook("ServiceAccount", "v1")],
        });
        let Value::Object(release) = release else {
            panic!("an object")
        };
        let r = Record::from_json(release, BTreeMap::new()).expect("reads");
        let kinds: Vec<&str> = r.hooks.iter().map(|&i| r.items[i].kind.as_str()).collect();
        assert_eq!(kinds, ["ServiceAccount", "Job"]);
    }
}
