//! The release record kept in the cluster: one Secret per revision in the release namespace,
//! labelled `owner=chartseq`, `name`, `version`, `status`, holding the rendered objects, the
//! plan they were applied by and the outcome. Uninstall and rollback read the recorded plan,
//! never today's chart (SPEC §2: uninstall is the exact reverse of the recorded order).

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::cluster::{ApplyOptions, Cluster, ClusterError, Kind};

/// One object of the release.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    /// The object as applied (sequencing annotation Helm strips already removed).
    pub object: Value,
    /// The document index in the rendered stream, when it came from one.
    pub doc: Option<usize>,
    pub hook: Option<HookInfo>,
}

impl Item {
    /// `Kind/name`, with the namespace when there is one.
    #[must_use]
    pub fn label(&self) -> String {
        match &self.namespace {
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub name: String,
    pub namespace: String,
    pub revision: u32,
    /// `pending-install`, `pending-upgrade`, `pending-rollback`, `deployed`, `failed`,
    /// `superseded`, `uninstalling`.
    pub status: String,
    pub description: String,
    pub chart: String,
    pub updated: String,
    /// Applied by a sequenced plan.
    pub sequenced: bool,
    pub items: Vec<Item>,
    /// Indexes of `crds/` objects.
    pub crds: Vec<usize>,
    /// Indexes of hooks in the order Helm runs them (weight, name, kind).
    pub hooks: Vec<usize>,
    pub steps: Vec<RecordedStep>,
    /// Indexes of the objects sent to the cluster so far (an interrupted run records them).
    pub applied: Vec<usize>,
}

/// The Secret kind, resolved once.
fn secret_kind() -> Kind {
    Kind {
        group: String::new(),
        version: "v1".to_owned(),
        kind: "Secret".to_owned(),
        plural: "secrets".to_owned(),
        namespaced: true,
    }
}

fn secret_name(name: &str, revision: u32) -> String {
    format!("chartseq.release.v1.{name}.v{revision}")
}

/// Writes (or overwrites) the revision's Secret.
pub async fn save(cluster: &dyn Cluster, record: &Record) -> Result<(), ClusterError> {
    let body = serde_json::to_vec(record)
        .map_err(|e| ClusterError::other(format!("encoding the release record: {e}")))?;
    let secret = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "chartseq.io/release.v1",
        "metadata": {
            "name": secret_name(&record.name, record.revision),
            "namespace": record.namespace,
            "labels": {
                "owner": "chartseq",
                "name": record.name,
                "version": record.revision.to_string(),
                "status": record.status,
                "sequenced": "true",
            },
        },
        "data": {"release": base64::engine::general_purpose::STANDARD.encode(body)},
    });
    cluster
        .apply(
            &secret_kind(),
            Some(&record.namespace),
            &secret,
            ApplyOptions {
                force: true,
                dry_run: false,
            },
        )
        .await?;
    Ok(())
}

/// Every revision of a release, oldest first.
pub async fn load_all(
    cluster: &dyn Cluster,
    namespace: &str,
    name: &str,
) -> Result<Vec<Record>, ClusterError> {
    let labels = format!("owner=chartseq,name={name}");
    let (items, _) = cluster
        .list(&secret_kind(), Some(namespace), &labels)
        .await?;
    let mut records = Vec::new();
    for secret in items {
        let label = secret["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let data = secret["data"]["release"].as_str().unwrap_or_default();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| ClusterError::other(format!("release record {label}: not base64: {e}")))?;
        let record: Record = serde_json::from_slice(&bytes)
            .map_err(|e| ClusterError::other(format!("release record {label}: {e}")))?;
        records.push(record);
    }
    records.sort_by_key(|r| r.revision);
    Ok(records)
}

/// Deletes every revision's Secret.
pub async fn delete_all(
    cluster: &dyn Cluster,
    namespace: &str,
    records: &[Record],
) -> Result<(), ClusterError> {
    for r in records {
        cluster
            .delete(
                &secret_kind(),
                Some(namespace),
                &secret_name(&r.name, r.revision),
            )
            .await?;
    }
    Ok(())
}

/// Now, as RFC 3339 UTC.
#[must_use]
pub fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
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
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
