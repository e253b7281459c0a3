//! `apply --dry-run --diff`: what an install or upgrade would do to each object, decided by
//! the cluster itself and changing nothing.
//!
//! Every object the release would write is read (GET) and sent as the very server-side apply
//! the deploy sends (field manager `helm`, this release's marks) with `dryRun=All`; the
//! answer is compared with the live object field by field, after both lose what the server
//! sets by itself ([`normalize`]). What an upgrade would prune is judged by the deployer's own
//! ownership rules ([`super::deploy::Runner::judge_deletions`]): deleted, kept
//! (`helm.sh/resource-policy: keep`) or left in place (not this release's). Nothing is
//! written to the cluster or to the release's storage. Secret `data` / `stringData` values are
//! never held in a [`Change`]: only which keys changed.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::cluster::{ApplyOptions, ErrorKind};
use super::deploy::{RunError, Runner};
use super::ownership::Decision;
use super::release::{Item, Record};

/// What one field change was.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Added,
    Removed,
    Changed,
}

impl Op {
    #[must_use]
    pub fn word(&self) -> &'static str {
        match self {
            Op::Added => "added",
            Op::Removed => "removed",
            Op::Changed => "changed",
        }
    }
}

/// One field that differs between the live object and the dry run's result. `from` / `to`
/// are `None` where the value is hidden (a Secret's data) or absent.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// `spec.replicas`, `metadata.labels["app.kubernetes.io/version"]`, `spec.ports[0].port`.
    pub path: String,
    pub op: Op,
    pub from: Option<Value>,
    pub to: Option<Value>,
    /// The values are secret and never shown.
    pub hidden: bool,
}

/// What would happen to one object.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// It does not exist and would be created (`note`: why the server could not check it).
    Create {
        note: Option<String>,
    },
    Update(Vec<Change>),
    Unchanged,
    /// A hook that exists and would be deleted and created again (`before-hook-creation`).
    Recreate,
    /// Pruned by the upgrade.
    Delete,
    /// Would be pruned, but `helm.sh/resource-policy: keep` keeps it.
    Kept,
    /// Would be pruned, but is not this release's: left in place.
    LeftInPlace(String),
    /// Exists and is not this release's: the release would be refused.
    Refused(String),
    /// The server refused the dry run (a conflict, an invalid object).
    Failed(String),
}

impl Action {
    /// The word the outputs use.
    #[must_use]
    pub fn word(&self) -> &'static str {
        match self {
            Action::Create { .. } => "create",
            Action::Update(_) => "update",
            Action::Unchanged => "unchanged",
            Action::Recreate => "recreate",
            Action::Delete => "delete",
            Action::Kept => "kept",
            Action::LeftInPlace(_) => "left-in-place",
            Action::Refused(_) => "refused",
            Action::Failed(_) => "failed",
        }
    }
}

/// One object's line of the preview.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// `crds`, `pre-upgrade hooks`, the plan step's label, `prune`, `post-upgrade hooks`.
    pub section: String,
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub action: Action,
}

impl Entry {
    /// `item`'s line, after `runner` has looked up its kind (so that a cluster-scoped object
    /// shows no namespace).
    fn new(runner: &Runner, section: &str, item: &Item, action: Action) -> Self {
        Self {
            section: section.to_owned(),
            api_version: item.api_version.clone(),
            kind: item.kind.clone(),
            namespace: runner.scope(item),
            name: item.name.clone(),
            action,
        }
    }

    /// `Kind/name`, with the namespace when there is one.
    #[must_use]
    pub fn label(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{} (namespace {ns})", self.kind, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }
}

/// What an install or upgrade would do, in release order.
#[derive(Clone, Debug, PartialEq)]
pub struct Preview {
    pub release: String,
    pub namespace: String,
    /// The revision the run would record.
    pub revision: u32,
    pub upgrade: bool,
    pub entries: Vec<Entry>,
}

impl Preview {
    /// Whether the release would be refused or fail.
    #[must_use]
    pub fn blocked(&self) -> bool {
        self.entries
            .iter()
            .any(|e| matches!(e.action, Action::Refused(_) | Action::Failed(_)))
    }
}

/// Builds the preview of installing `record` (release order: CRDs, pre hooks, the plan in
/// install order, pruning, post hooks), after `history` (oldest first).
pub(super) async fn preview(
    runner: &Runner,
    record: &Record,
    history: &[Record],
    take_ownership: bool,
) -> Result<Preview, RunError> {
    let upgrade = history.iter().any(|r| r.status == "deployed");
    let (pre, post) = if upgrade {
        ("pre-upgrade", "post-upgrade")
    } else {
        ("pre-install", "post-install")
    };
    let mut entries = Vec::new();
    for &i in &record.crds {
        let action = object(runner, record, i, take_ownership).await?;
        entries.push(Entry::new(runner, "crds", &record.items[i], action));
    }
    hooks(runner, record, pre, take_ownership, &mut entries).await?;
    for step in &record.steps {
        for &i in &step.resources {
            let action = object(runner, record, i, take_ownership).await?;
            entries.push(Entry::new(runner, &step.label, &record.items[i], action));
        }
    }
    let previous: Vec<&Record> = super::since_deployed(history).iter().rev().collect();
    let mut pruned = BTreeSet::new();
    for prev in previous {
        let gone = super::deploy::removed(prev, record);
        for (_, indexes) in super::deploy::reverse_steps(prev, Some(&gone)) {
            for (i, _, _, _, decision) in runner.judge_deletions(prev, &indexes).await? {
                let item = &prev.items[i];
                if !pruned.insert(item.identity()) {
                    continue;
                }
                let action = match decision {
                    Decision::Owned => Action::Delete,
                    Decision::Kept => Action::Kept,
                    Decision::Foreign(owner) => Action::LeftInPlace(owner.to_string()),
                };
                entries.push(Entry::new(runner, "prune", item, action));
            }
        }
    }
    hooks(runner, record, post, take_ownership, &mut entries).await?;
    Ok(Preview {
        release: record.name.clone(),
        namespace: record.namespace.clone(),
        revision: record.revision,
        upgrade,
        entries,
    })
}

/// The hooks of one event, in the order Helm runs them.
async fn hooks(
    runner: &Runner,
    record: &Record,
    event: &str,
    take_ownership: bool,
    entries: &mut Vec<Entry>,
) -> Result<(), RunError> {
    let section = format!("{event} hooks");
    for &i in &record.hooks {
        let item = &record.items[i];
        let Some(hook) = &item.hook else { continue };
        if !hook.events.iter().any(|e| e == event) {
            continue;
        }
        let policies = &hook.delete_policies;
        // Helm's default policy is before-hook-creation: an existing hook is replaced whole.
        let recreated = policies.is_empty() || policies.iter().any(|p| p == "before-hook-creation");
        let mut action = object(runner, record, i, take_ownership).await?;
        if recreated && matches!(action, Action::Update(_) | Action::Unchanged) {
            action = Action::Recreate;
        }
        entries.push(Entry::new(runner, &section, item, action));
    }
    Ok(())
}

/// One object: read it, judge who owns it, send the dry run, compare.
async fn object(
    runner: &Runner,
    record: &Record,
    index: usize,
    take_ownership: bool,
) -> Result<Action, RunError> {
    let item = &record.items[index];
    let kind = match runner.kind(item, false).await {
        Ok(k) => k,
        // Its type is not served yet: a CRD this release creates first.
        Err(RunError::Cluster { error, .. }) if error.kind == ErrorKind::NotFound => {
            return Ok(Action::Create {
                note: Some(format!(
                    "not checked by the server: it serves no {} in {} yet",
                    item.kind, item.api_version
                )),
            });
        }
        Err(e) => return Err(e),
    };
    let ns = Runner::namespace_for(&kind, item);
    let live = runner.get_live(item, &kind, ns.as_deref()).await?;
    let create_only = record.crds.contains(&index);
    if create_only && live.is_some() {
        // Helm never updates a CRD from `crds/`.
        return Ok(Action::Unchanged);
    }
    if let Some(live) = &live {
        if let Decision::Foreign(owner) = Runner::decide(record, index, live) {
            if !take_ownership {
                return Ok(Action::Refused(owner.to_string()));
            }
        }
    }
    let options = ApplyOptions {
        force: runner.settings.force_conflicts,
        dry_run: true,
    };
    let outgoing = Runner::outgoing(record, index, ns.as_deref());
    let result = match runner
        .cluster
        .apply(&kind, ns.as_deref(), &outgoing, options)
        .await
    {
        Ok(r) => r,
        Err(error) if error.kind == ErrorKind::Transient => {
            return Err(RunError::Cluster {
                resource: Some(runner.label(item)),
                error,
            });
        }
        Err(error) => return Ok(Action::Failed(error.message)),
    };
    let Some(live) = live else {
        return Ok(Action::Create { note: None });
    };
    let changes = diff(&live, &result);
    Ok(if changes.is_empty() {
        Action::Unchanged
    } else {
        Action::Update(changes)
    })
}

/// `metadata` fields the server sets by itself.
const SERVER_METADATA: &[&str] = &[
    "managedFields",
    "resourceVersion",
    "generation",
    "uid",
    "creationTimestamp",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// Annotations clients and controllers write for themselves: kubectl's copy of what it
/// applied last (which would also repeat a Secret's values) and the Deployment controller's
/// revision counter.
const TOOL_ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
];

/// The object without what the server and tools set by themselves: the server-set metadata,
/// `status`, tool annotations, and label/annotation maps left empty. Applied to both sides
/// alike, so what remains differs only where the apply would change it.
#[must_use]
pub fn normalize(object: &Value) -> Value {
    let mut v = object.clone();
    if let Some(map) = v.as_object_mut() {
        map.remove("status");
        if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in SERVER_METADATA {
                meta.remove(*k);
            }
            if let Some(a) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
                for k in TOOL_ANNOTATIONS {
                    a.remove(*k);
                }
            }
            for k in ["annotations", "labels"] {
                if meta
                    .get(k)
                    .is_some_and(|m| m.is_null() || m.as_object().is_some_and(Map::is_empty))
                {
                    meta.remove(k);
                }
            }
        }
    }
    v
}

fn is_secret(object: &Value) -> bool {
    object["apiVersion"] == "v1" && object["kind"] == "Secret"
}

/// The fields that differ between `live` and `after`, both normalized, in a stable order
/// (keys sorted, list items by index). A Secret's `data` and `stringData` are compared key
/// by key and their values never copied.
#[must_use]
pub fn diff(live: &Value, after: &Value) -> Vec<Change> {
    let (live, after) = (normalize(live), normalize(after));
    let secret = is_secret(&live) || is_secret(&after);
    let mut out = Vec::new();
    walk(&mut Vec::new(), Some(&live), Some(&after), secret, &mut out);
    out
}

#[derive(Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

fn path_text(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k)
                if !k.is_empty()
                    && k.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') =>
            {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Key(k) => {
                s.push('[');
                s.push_str(&Value::String(k.clone()).to_string());
                s.push(']');
            }
            Seg::Index(i) => {
                s.push('[');
                s.push_str(&i.to_string());
                s.push(']');
            }
        }
    }
    s
}

fn walk(
    path: &mut Vec<Seg>,
    old: Option<&Value>,
    new: Option<&Value>,
    secret: bool,
    out: &mut Vec<Change>,
) {
    if secret
        && path.len() == 1
        && matches!(&path[0], Seg::Key(k) if k == "data" || k == "stringData")
    {
        secret_keys(path, old, new, out);
        return;
    }
    match (old, new) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                path.push(Seg::Key(k.clone()));
                walk(path, a.get(k), b.get(k), secret, out);
                path.pop();
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            for i in 0..a.len().max(b.len()) {
                path.push(Seg::Index(i));
                walk(path, a.get(i), b.get(i), secret, out);
                path.pop();
            }
        }
        (Some(a), Some(b)) if a == b => {}
        (None, None) => {}
        (a, b) => out.push(Change {
            path: path_text(path),
            op: match (a, b) {
                (None, _) => Op::Added,
                (_, None) => Op::Removed,
                _ => Op::Changed,
            },
            from: a.cloned(),
            to: b.cloned(),
            hidden: false,
        }),
    }
}

/// A Secret's `data` or `stringData`: which keys were added, removed or changed; never a
/// value.
fn secret_keys(
    path: &mut Vec<Seg>,
    old: Option<&Value>,
    new: Option<&Value>,
    out: &mut Vec<Change>,
) {
    let empty = Map::new();
    let a = old.and_then(Value::as_object).unwrap_or(&empty);
    let b = new.and_then(Value::as_object).unwrap_or(&empty);
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for k in keys {
        let op = match (a.get(k), b.get(k)) {
            (Some(x), Some(y)) if x == y => continue,
            (None, _) => Op::Added,
            (_, None) => Op::Removed,
            _ => Op::Changed,
        };
        path.push(Seg::Key(k.clone()));
        out.push(Change {
            path: path_text(path),
            op,
            from: None,
            to: None,
            hidden: true,
        });
        path.pop();
    }
}

/// The preview for people: sections in release order, one line per object, the changed
/// fields under each update, then the counts.
pub fn write_text(out: &mut dyn std::io::Write, p: &Preview) -> std::io::Result<()> {
    // One line per object and per change: names and values from the chart or the cluster
    // stay on their line.
    use crate::safe::one_line as safe;
    let what = if p.upgrade { "upgrade" } else { "install" };
    writeln!(
        out,
        "release {} (namespace {}): {what} as revision {} (server-side dry run; nothing was changed)",
        safe(&p.release),
        safe(&p.namespace),
        p.revision
    )?;
    let mut section: Option<&str> = None;
    for e in &p.entries {
        if section != Some(e.section.as_str()) {
            writeln!(out, "{}", safe(&e.section))?;
            section = Some(&e.section);
        }
        let (mark, detail) = match &e.action {
            Action::Create { note: None } => ('+', String::new()),
            Action::Create { note: Some(n) } => ('+', format!(" ({n})")),
            Action::Update(_) => ('~', String::new()),
            Action::Unchanged => ('=', String::new()),
            Action::Recreate => (
                '~',
                " (deleted and created again: before-hook-creation)".to_owned(),
            ),
            Action::Delete => ('-', String::new()),
            Action::Kept => ('=', " (helm.sh/resource-policy: keep)".to_owned()),
            Action::LeftInPlace(owner) => ('=', format!(" (not this release's: {owner})")),
            Action::Refused(owner) => ('!', format!(" ({owner}; adopt it with --take-ownership)")),
            Action::Failed(message) => ('!', format!(": {message}")),
        };
        writeln!(
            out,
            "  {mark} {}: {}{}",
            safe(&e.label()),
            e.action.word(),
            safe(&detail)
        )?;
        if let Action::Update(changes) = &e.action {
            for c in changes {
                let text = match (&c.op, c.hidden) {
                    (op, true) => format!("{} (value hidden)", op.word()),
                    (Op::Added, false) => format!("added {}", show(c.to.as_ref())),
                    (Op::Removed, false) => format!("removed {}", show(c.from.as_ref())),
                    (Op::Changed, false) => {
                        format!("{} → {}", show(c.from.as_ref()), show(c.to.as_ref()))
                    }
                };
                writeln!(out, "      {}: {}", safe(&c.path), safe(&text))?;
            }
        }
    }
    let count = |w: &str| p.entries.iter().filter(|e| e.action.word() == w).count();
    writeln!(
        out,
        "{} to create, {} to update, {} unchanged, {} to recreate, {} to delete, {} kept, {} left in place, {} refused, {} failed",
        count("create"),
        count("update"),
        count("unchanged"),
        count("recreate"),
        count("delete"),
        count("kept"),
        count("left-in-place"),
        count("refused"),
        count("failed")
    )
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "null".to_owned(), Value::to_string)
}

/// One entry as a JSON line (`--progress json`): `{"event": "diff", …}`.
#[must_use]
pub fn entry_json(e: &Entry) -> Value {
    let mut v = json!({
        "event": "diff",
        "section": e.section,
        "resource": {"apiVersion": e.api_version, "kind": e.kind, "namespace": e.namespace, "name": e.name},
        "action": e.action.word(),
    });
    match &e.action {
        Action::Update(changes) => {
            v["changes"] = changes
                .iter()
                .map(|c| {
                    let mut j = json!({"path": c.path, "op": c.op.word()});
                    if c.hidden {
                        j["hidden"] = json!(true);
                    } else {
                        if let Some(from) = &c.from {
                            j["from"] = from.clone();
                        }
                        if let Some(to) = &c.to {
                            j["to"] = to.clone();
                        }
                    }
                    j
                })
                .collect();
        }
        Action::Create { note: Some(n) } => v["note"] = json!(n),
        Action::LeftInPlace(owner) | Action::Refused(owner) => v["owner"] = json!(owner),
        Action::Failed(message) => v["error"] = json!(message),
        _ => {}
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_noise_is_not_a_change() {
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "uid": "1", "resourceVersion": "7", "generation": 1,
                "creationTimestamp": "t", "managedFields": [{"manager": "helm"}],
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "data": {"x": "1", "y": "2"}, "status": {"a": 1}});
        let after = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "uid": "1", "resourceVersion": "8", "generation": 2,
                "managedFields": []},
            "data": {"x": "1", "y": "3", "z": "4"}});
        let changes = diff(&live, &after);
        assert_eq!(
            changes
                .iter()
                .map(|c| (c.path.as_str(), c.op.word()))
                .collect::<Vec<_>>(),
            [("data.y", "changed"), ("data.z", "added")]
        );
    }

    #[test]
    fn paths_quote_keys_with_dots_and_index_lists() {
        let a = json!({"metadata": {"labels": {"app.kubernetes.io/v": "1"}}, "spec": {"ports": [{"port": 80}]}});
        let b = json!({"metadata": {"labels": {"app.kubernetes.io/v": "2"}}, "spec": {"ports": [{"port": 81}, {"port": 82}]}});
        let paths: Vec<String> = diff(&a, &b).into_iter().map(|c| c.path).collect();
        assert_eq!(
            paths,
            [
                r#"metadata.labels["app.kubernetes.io/v"]"#,
                "spec.ports[0].port",
                "spec.ports[1]"
            ]
        );
    }

    #[test]
    fn secret_values_are_never_held() {
        let a = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"k": "c2VjcmV0MQ==", "same": "eA=="}, "stringData": {"old": "hunter2"}});
        let b = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"k": "c2VjcmV0Mg==", "same": "eA==", "new": "eQ=="}});
        let changes = diff(&a, &b);
        assert!(
            changes
                .iter()
                .all(|c| c.hidden && c.from.is_none() && c.to.is_none())
        );
        assert_eq!(
            changes
                .iter()
                .map(|c| (c.path.as_str(), c.op.word()))
                .collect::<Vec<_>>(),
            [
                ("data.k", "changed"),
                ("data.new", "added"),
                ("stringData.old", "removed")
            ]
        );
    }
}
