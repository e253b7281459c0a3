//! The API server's audit log, read for one namespace: who wrote what and when, on the API
//! server's clock (microseconds), and the bodies the workload controllers stored with each
//! status write (the cluster's audit policy records those), so that the moment an object
//! became ready is the server's, not the test's.

use std::path::Path;

use serde_json::Value;

/// The user the tests' kubeconfig authenticates as (`scripts/cluster.sh`).
pub const TEST_USER: &str = "chartseq-admin";

#[derive(Debug, Clone)]
pub struct Event {
    pub verb: String,
    pub user: String,
    /// The client's `User-Agent`: `kubectl/…` for the tests' own kubectl calls.
    pub user_agent: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    /// When the request arrived, and when its response was complete (RFC 3339, microseconds,
    /// UTC: the strings order as the instants do).
    pub received: String,
    pub completed: String,
    pub code: u16,
    pub object: Option<Value>,
    /// The request asked for a dry run (`dryRun=All`).
    pub dry_run: bool,
    /// The request's path and query.
    pub uri: String,
}

pub struct Audit {
    pub events: Vec<Event>,
}

/// The plural resource name of a kind, as the audit log names it.
pub fn resource(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    match kind {
        "Endpoints" => lower,
        _ if lower.ends_with('s') => format!("{lower}es"),
        _ if lower.ends_with('y') => format!("{}ies", &lower[..lower.len() - 1]),
        _ => format!("{lower}s"),
    }
}

fn text(v: &Value, path: &[&str]) -> String {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

fn int(v: &Value, path: &[&str], default: i64) -> i64 {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_i64)
        .unwrap_or(default)
}

fn condition(v: &Value, kind: &str) -> bool {
    v.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == kind && c["status"] == "True")
        })
}

/// Whether a workload, as its controller stored it, is ready: every replica updated and
/// available for the generation the controller has observed; a Job complete.
fn ready(resource: &str, o: &Value) -> bool {
    let observed =
        int(o, &["status", "observedGeneration"], 0) >= int(o, &["metadata", "generation"], 1);
    let want = int(o, &["spec", "replicas"], 1);
    match resource {
        "deployments" => {
            observed
                && int(o, &["status", "replicas"], 0) == want
                && int(o, &["status", "updatedReplicas"], 0) == want
                && int(o, &["status", "availableReplicas"], 0) >= want
        }
        "statefulsets" | "replicasets" => {
            observed && int(o, &["status", "readyReplicas"], 0) >= want
        }
        "daemonsets" => {
            let desired = int(o, &["status", "desiredNumberScheduled"], -1);
            observed && desired >= 0 && int(o, &["status", "numberReady"], 0) == desired
        }
        "jobs" => condition(o, "Complete"),
        _ => true,
    }
}

/// Whether the kind has a status a controller writes (and so a moment of becoming ready
/// after its creation).
fn has_controller(resource: &str) -> bool {
    matches!(
        resource,
        "deployments" | "statefulsets" | "replicasets" | "daemonsets" | "jobs"
    )
}

impl Audit {
    /// The events of `namespace` in the log at `path`, in the order the server completed
    /// them; requests with `dryRun` are left out.
    pub fn read(path: &Path, namespace: &str) -> Self {
        let mut audit = Self::read_with_dry_runs(path, namespace);
        audit.events.retain(|e| !e.dry_run);
        audit
    }

    /// [`Audit::read`] with the dry runs.
    pub fn read_with_dry_runs(path: &Path, namespace: &str) -> Self {
        let log = std::fs::read_to_string(path).expect("the audit log is readable");
        // As the API server writes it (Go's JSON encoder: no spaces).
        let needle = format!("\"namespace\":\"{namespace}\"");
        let mut events: Vec<Event> = log
            .lines()
            // Only lines that name the namespace are parsed: the log is the whole cluster's,
            // tens of megabytes by the end of a run, and every test reads it often.
            .filter(|line| line.contains(&needle))
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|e| text(e, &["objectRef", "namespace"]) == namespace)
            .map(|e| Event {
                verb: text(&e, &["verb"]),
                user: text(&e, &["user", "username"]),
                user_agent: text(&e, &["userAgent"]),
                resource: text(&e, &["objectRef", "resource"]),
                subresource: text(&e, &["objectRef", "subresource"]),
                name: text(&e, &["objectRef", "name"]),
                received: text(&e, &["requestReceivedTimestamp"]),
                completed: text(&e, &["stageTimestamp"]),
                code: u16::try_from(int(&e, &["responseStatus", "code"], 0)).unwrap_or(0),
                object: e.get("responseObject").cloned(),
                dry_run: text(&e, &["requestURI"]).contains("dryRun="),
                uri: text(&e, &["requestURI"]),
            })
            .collect();
        events.sort_by(|a, b| a.completed.cmp(&b.completed));
        Self { events }
    }

    /// The tests' (chartseq's or helm's) successful writes of objects, in order.
    pub fn writes(&self) -> impl Iterator<Item = &Event> {
        self.events.iter().filter(|e| {
            e.user == TEST_USER
                && e.subresource.is_empty()
                && matches!(e.verb.as_str(), "create" | "patch" | "update")
                && (200..300).contains(&e.code)
        })
    }

    /// The first successful write of an object by the tests: its creation.
    pub fn created(&self, kind: &str, name: &str) -> &Event {
        let resource = resource(kind);
        self.writes()
            .find(|e| e.resource == resource && e.name == name)
            .unwrap_or_else(|| panic!("no write of {kind}/{name} in the audit log:\n{self}"))
    }

    /// When the object was ready on the server's clock: the arrival of the status write of
    /// its controller that first showed it ready (or of its creation, for kinds that are ready
    /// once they exist). The write takes effect between its arrival and its completion, and a
    /// watcher may see it, and act, before the completion is logged: so a request that
    /// arrived after this instant may have waited for it, and one that arrived before it
    /// cannot have.
    pub fn ready(&self, kind: &str, name: &str) -> String {
        let resource = resource(kind);
        if !has_controller(&resource) {
            return self.created(kind, name).received.clone();
        }
        self.events
            .iter()
            .filter(|e| e.resource == resource && e.name == name && e.subresource == "status")
            .find(|e| e.object.as_ref().is_some_and(|o| ready(&resource, o)))
            .map_or_else(
                || panic!("{kind}/{name} never became ready in the audit log:\n{self}"),
                |e| e.received.clone(),
            )
    }

    /// The tests' successful deletions, in order, as `resource/name`.
    pub fn deletions(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e.user == TEST_USER && e.verb == "delete" && (200..300).contains(&e.code))
            .map(|e| format!("{}/{}", e.resource, e.name))
            .collect()
    }

    /// chartseq's own successful writes and deletions (not kubectl's, not helm's), in order, as
    /// `verb resource/name`.
    pub fn chartseq_changes(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| {
                e.user == TEST_USER
                    && !e.user_agent.starts_with("kubectl")
                    && !e.user_agent.starts_with("helm")
                    && e.subresource.is_empty()
                    && matches!(e.verb.as_str(), "create" | "patch" | "update" | "delete")
                    && (200..300).contains(&e.code)
            })
            .map(|e| format!("{} {}/{}", e.verb, e.resource, e.name))
            .collect()
    }

    /// How often `verb` succeeded on `kind/name` by any client of the tests.
    pub fn count(&self, verb: &str, kind: &str, name: &str) -> usize {
        let resource = resource(kind);
        self.events
            .iter()
            .filter(|e| {
                e.user == TEST_USER
                    && e.verb == verb
                    && e.resource == resource
                    && e.name == name
                    && e.subresource.is_empty()
                    && (200..300).contains(&e.code)
            })
            .count()
    }

    /// Whether an object was ever written by the tests.
    pub fn written(&self, kind: &str, name: &str) -> bool {
        let resource = resource(kind);
        self.writes()
            .any(|e| e.resource == resource && e.name == name)
    }
}

impl std::fmt::Display for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for e in &self.events {
            let sub = if e.subresource.is_empty() {
                String::new()
            } else {
                format!("/{}", e.subresource)
            };
            writeln!(
                f,
                "{} {} {} {}/{}{} {}",
                e.completed, e.user, e.verb, e.resource, e.name, sub, e.code
            )?;
        }
        Ok(())
    }
}
