//! Helm v4's release storage (SPEC §5), read and written exactly as Helm's Secret and
//! `ConfigMap` drivers do (`pkg/storage/driver/{secrets,cfgmaps,util}.go`, `pkg/storage`).
//!
//! One object per revision in the release namespace, named `sh.helm.release.v1.<name>.v<N>`,
//! labelled `owner=helm`, `name`, `status`, `version` and `createdAt` (on create) or
//! `modifiedAt` (on update), its `release` key holding base64 of the gzipped release JSON. A
//! Secret (the default, `HELM_DRIVER=secret`) has type `helm.sh/release.v1` and, being a
//! Secret, base64-encodes that text once more in its `data`; a `ConfigMap`
//! (`HELM_DRIVER=configmap`) holds the text as is. Revisions are created (never overwritten)
//! and updated in place, as Helm does; `--history-max` deletes the oldest ones but never the
//! deployed one (`Storage.removeLeastRecent`).
//!
//! Either object holds at most 1 MiB of data on a real API server: [`Storage::prepare`]
//! refuses a larger revision before anything of the release is applied.

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::cluster::{Cluster, ClusterError, ErrorKind, Kind};
use super::release::Record;

/// What the API server accepts in one Secret's or `ConfigMap`'s data (`MaxSecretSize`).
pub const MAX_DATA_BYTES: usize = 1024 * 1024;
/// Room kept for what a run adds to its revision (the outcome and the failure's
/// description) when a revision is judged before it runs.
pub const OUTCOME_RESERVE: usize = 32 * 1024;
/// Helm's `--history-max` default.
pub const DEFAULT_HISTORY_MAX: usize = 10;

/// Storage objects' labels Helm sets itself (`systemLabels` in `util.go`).
const SYSTEM_LABELS: [&str; 6] = [
    "name",
    "owner",
    "status",
    "version",
    "createdAt",
    "modifiedAt",
];

/// Which kind of object holds the revisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driver {
    Secret,
    ConfigMap,
}

impl Driver {
    /// A `HELM_DRIVER` / `--storage` value, as Helm reads it (`secret`, `secrets` or empty;
    /// `configmap`, `configmaps`).
    pub fn from_name(name: &str) -> Result<Self, String> {
        match name {
            "" | "secret" | "secrets" => Ok(Driver::Secret),
            "configmap" | "configmaps" => Ok(Driver::ConfigMap),
            "memory" | "sql" => Err(format!(
                "the {name} storage driver is not supported by chartseq: use secret or configmap"
            )),
            other => Err(format!(
                "unknown storage driver {other:?}: use secret or configmap"
            )),
        }
    }

    fn kind(self) -> Kind {
        let (kind, plural) = match self {
            Driver::Secret => ("Secret", "secrets"),
            Driver::ConfigMap => ("ConfigMap", "configmaps"),
        };
        Kind {
            group: String::new(),
            version: "v1".to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            namespaced: true,
        }
    }

    /// `Secret` or `ConfigMap`, for messages.
    #[must_use]
    pub fn object_kind(self) -> &'static str {
        match self {
            Driver::Secret => "Secret",
            Driver::ConfigMap => "ConfigMap",
        }
    }
}

/// The storage object's name of one revision (`makeKey` in `storage.go`).
#[must_use]
pub fn key(name: &str, revision: u32) -> String {
    format!("sh.helm.release.v1.{name}.v{revision}")
}

/// Helm's encoding of a release: base64 of the gzipped JSON (`encodeRelease`).
pub fn encode(release: &Value) -> Result<String, String> {
    let json = serde_json::to_vec(release).map_err(|e| format!("encoding the release: {e}"))?;
    if json.len() > MAX_EXPANDED_BYTES {
        // It would be stored, but not read back (see `decode`).
        return Err(format!(
            "the release is {} bytes of JSON, more than the {} MiB a stored release may expand to; nothing was applied. Render less into the release",
            json.len(),
            MAX_EXPANDED_BYTES >> 20
        ));
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&json)
        .and_then(|()| gz.finish())
        .map(|bytes| base64::engine::general_purpose::STANDARD.encode(bytes))
        .map_err(|e| format!("compressing the release: {e}"))
}

/// The most a stored release may expand to when it is decompressed: 64 times what one
/// storage object holds. Real releases compress about 10:1 and a release of thousands of
/// near-identical templated objects about 130:1, so a release this large would be tens of
/// thousands of objects; a gzip bomb (1000:1) stops here instead of filling memory.
pub const MAX_EXPANDED_BYTES: usize = 64 * MAX_DATA_BYTES;

/// Helm's decoding (`decodeRelease`): base64, then gunzip when the gzip magic is there
/// (releases stored before compression are plain JSON). Decompression stops at
/// [`MAX_EXPANDED_BYTES`].
pub fn decode(text: &str) -> Result<Map<String, Value>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("not base64: {e}"))?;
    let json = if bytes.starts_with(&[0x1f, 0x8b, 0x08]) {
        let mut out = Vec::new();
        let limit = u64::try_from(MAX_EXPANDED_BYTES).unwrap_or(u64::MAX);
        flate2::read::GzDecoder::new(&bytes[..])
            .take(limit + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("not gzip: {e}"))?;
        if out.len() > MAX_EXPANDED_BYTES {
            return Err(format!(
                "expands to more than {} MiB, far more than any release (gzip bomb?)",
                MAX_EXPANDED_BYTES >> 20
            ));
        }
        out
    } else {
        bytes
    };
    serde_json::from_slice(&json).map_err(|e| format!("not a release: {e}"))
}

/// A storage object that holds no readable release, left out of what was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// `Secret` or `ConfigMap`.
    pub kind: &'static str,
    pub namespace: String,
    pub name: String,
    pub reason: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "skipped the unreadable release record {} {}/{}: {}",
            self.kind, self.namespace, self.name, self.reason
        )
    }
}

/// The revisions read, and the storage objects that could not be.
#[derive(Clone, Debug, Default)]
pub struct Listing {
    pub records: Vec<Record>,
    pub skipped: Vec<Skipped>,
}

impl Listing {
    /// The number of release `name`'s next revision: after every stored one, those that could
    /// not be read included (their number is in their object's name), so that a new revision
    /// never collides with an unreadable one.
    #[must_use]
    pub fn next_revision(&self, name: &str) -> u32 {
        let prefix = format!("sh.helm.release.v1.{name}.v");
        let unreadable = self
            .skipped
            .iter()
            .filter_map(|s| s.name.strip_prefix(&prefix)?.parse::<u32>().ok());
        self.records
            .iter()
            .filter(|r| r.name == name)
            .map(|r| r.revision)
            .chain(unreadable)
            .max()
            .map_or(1, |r| r.saturating_add(1))
    }
}

/// Why a revision could not be stored or read.
#[derive(Clone, Debug, thiserror::Error)]
pub enum StorageError {
    #[error("{0}")]
    Cluster(#[from] ClusterError),
    /// The revision is over what one storage object may hold.
    #[error(
        "release {release} revision {revision} would be stored as {bytes} bytes, but a {} holds at most {} bytes ({} of them kept for the run's outcome); nothing was applied. Render less into the release (large embedded files or ConfigMaps)",
        .driver.object_kind(),
        MAX_DATA_BYTES,
        OUTCOME_RESERVE
    )]
    TooLarge {
        release: String,
        revision: u32,
        bytes: usize,
        driver: Driver,
    },
    /// Another run created this revision first.
    #[error(
        "release {release} revision {revision} already exists: another operation on this release is running or just ran"
    )]
    Exists { release: String, revision: u32 },
    #[error("{0}")]
    Encoding(String),
}

/// A new revision's storage object, encoded and checked.
pub struct Prepared {
    object: Value,
    release: String,
    namespace: String,
    revision: u32,
}

/// A driver over a cluster.
#[derive(Clone, Copy)]
pub struct Storage<'a> {
    pub cluster: &'a dyn Cluster,
    pub driver: Driver,
}

impl Storage<'_> {
    /// The storage object for a revision, with Helm's labels.
    fn object(&self, record: &Record, stamp: &str) -> Result<Value, StorageError> {
        let text = encode(&record.to_json()).map_err(StorageError::Encoding)?;
        let mut labels: Map<String, Value> = record
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        labels.insert(stamp.to_owned(), json!(unix_now().to_string()));
        labels.insert("name".into(), json!(record.name));
        labels.insert("owner".into(), json!("helm"));
        labels.insert("status".into(), json!(record.status));
        labels.insert("version".into(), json!(record.revision.to_string()));
        let metadata = json!({
            "name": key(&record.name, record.revision),
            "namespace": record.namespace,
            "labels": labels,
        });
        Ok(match self.driver {
            Driver::Secret => json!({
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": metadata,
                "type": "helm.sh/release.v1",
                "data": {"release": base64::engine::general_purpose::STANDARD.encode(text)},
            }),
            Driver::ConfigMap => json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": metadata,
                "data": {"release": text},
            }),
        })
    }

    /// Encodes a new revision once, refusing it when it would not fit its storage object
    /// (with room for the run's outcome).
    pub fn prepare(&self, record: &Record) -> Result<Prepared, StorageError> {
        let object = self.object(record, "createdAt")?;
        let text = &object["data"]["release"];
        let bytes = match self.driver {
            // The Secret's data is the text base64-encoded once more; its size is the text's.
            Driver::Secret => text.as_str().map_or(0, |b| b.len() / 4 * 3),
            Driver::ConfigMap => text.as_str().map_or(0, str::len),
        };
        if bytes + OUTCOME_RESERVE > MAX_DATA_BYTES {
            return Err(StorageError::TooLarge {
                release: record.name.clone(),
                revision: record.revision,
                bytes,
                driver: self.driver,
            });
        }
        Ok(Prepared {
            object,
            release: record.name.clone(),
            namespace: record.namespace.clone(),
            revision: record.revision,
        })
    }

    /// Stores a new revision; an existing one of the same number is an error (two runs).
    pub async fn create(&self, prepared: &Prepared) -> Result<(), StorageError> {
        match self
            .cluster
            .create(
                &self.driver.kind(),
                Some(&prepared.namespace),
                &prepared.object,
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.kind == ErrorKind::Conflict => Err(StorageError::Exists {
                release: prepared.release.clone(),
                revision: prepared.revision,
            }),
            Err(e) => Err(e.into()),
        }
    }

    /// Rewrites a revision (its status changed).
    pub async fn update(&self, record: &Record) -> Result<(), StorageError> {
        let object = self.object(record, "modifiedAt")?;
        self.cluster
            .replace(
                &self.driver.kind(),
                Some(&record.namespace),
                &key(&record.name, record.revision),
                &object,
            )
            .await?;
        Ok(())
    }

    /// Deletes one revision's object.
    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        revision: u32,
    ) -> Result<(), StorageError> {
        self.cluster
            .delete(
                &self.driver.kind(),
                Some(namespace),
                &key(name, revision),
                None,
            )
            .await?;
        Ok(())
    }

    /// Every revision of a release, oldest first (Helm's `History`: `name=<n>,owner=helm`).
    pub async fn history(&self, namespace: &str, name: &str) -> Result<Listing, StorageError> {
        let mut listing = self
            .read(Some(namespace), &format!("name={name},owner=helm"))
            .await?;
        listing.records.retain(|r| r.name == name);
        listing.records.sort_by_key(|r| r.revision);
        Ok(listing)
    }

    /// Every revision of every release in a namespace (all namespaces with `None`), oldest
    /// first per release.
    pub async fn all(&self, namespace: Option<&str>) -> Result<Listing, StorageError> {
        let mut listing = self.read(namespace, "owner=helm").await?;
        listing.records.sort_by(|a, b| {
            (&a.namespace, &a.name, a.revision).cmp(&(&b.namespace, &b.name, b.revision))
        });
        Ok(listing)
    }

    /// Reads every storage object the labels select. One that holds no readable release
    /// (not base64, not gzip, too large expanded, not a release) is skipped and named, as
    /// Helm's drivers skip what they cannot decode: it never hides the others.
    async fn read(&self, namespace: Option<&str>, labels: &str) -> Result<Listing, StorageError> {
        let (objects, _) = self
            .cluster
            .list(&self.driver.kind(), namespace, labels)
            .await?;
        let mut listing = Listing {
            records: Vec::with_capacity(objects.len()),
            skipped: Vec::new(),
        };
        for object in objects {
            match self.record(&object) {
                Ok(record) => listing.records.push(record),
                Err(reason) => {
                    let meta = |key: &str| {
                        object["metadata"][key]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned()
                    };
                    listing.skipped.push(Skipped {
                        kind: self.driver.object_kind(),
                        namespace: meta("namespace"),
                        name: meta("name"),
                        reason,
                    });
                }
            }
        }
        Ok(listing)
    }

    /// The release one storage object holds.
    fn record(&self, object: &Value) -> Result<Record, String> {
        let data = object["data"]["release"]
            .as_str()
            .ok_or_else(|| "no release data".to_owned())?;
        let text = match self.driver {
            Driver::Secret => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .map_err(|e| format!("the Secret's data is not base64: {e}"))?;
                String::from_utf8(bytes).map_err(|_| "not base64: not text".to_owned())?
            }
            Driver::ConfigMap => data.to_owned(),
        };
        let json = decode(&text)?;
        let labels: BTreeMap<String, String> = object["metadata"]["labels"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| !SYSTEM_LABELS.contains(&k.as_str()))
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect();
        Record::from_json(json, labels)
    }

    /// Deletes the oldest revisions until `keep` remain, never the last deployed one (Helm's
    /// `removeLeastRecent`, run with `max - 1` before a new revision is created).
    pub async fn prune(&self, history: &[Record], keep: usize) -> Result<(), StorageError> {
        if history.len() <= keep {
            return Ok(());
        }
        let deployed = history
            .iter()
            .rev()
            .find(|r| r.status == "deployed")
            .map(|r| r.revision);
        let mut remaining = history.len();
        for r in history {
            if remaining == keep {
                break;
            }
            if Some(r.revision) == deployed {
                continue;
            }
            self.delete(&r.namespace, &r.name, r.revision).await?;
            remaining -= 1;
        }
        Ok(())
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_and_reads_uncompressed_records() {
        let release = json!({"name": "shop", "version": 3, "info": {"status": "deployed"}});
        let text = encode(&release).expect("encodes");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&text)
            .expect("base64");
        assert_eq!(&bytes[..3], &[0x1f, 0x8b, 0x08], "gzip");
        assert_eq!(Value::Object(decode(&text).expect("decodes")), release);
        let plain = base64::engine::general_purpose::STANDARD.encode(release.to_string());
        assert_eq!(Value::Object(decode(&plain).expect("decodes")), release);
        assert!(decode("%%%").is_err());
    }

    /// Base64 of gzip of `bytes` spaces (valid JSON whitespace), written a chunk at a time.
    fn bomb(bytes: usize) -> String {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let chunk = vec![b' '; 1 << 20];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len());
            gz.write_all(&chunk[..n]).expect("compresses");
            left -= n;
        }
        base64::engine::general_purpose::STANDARD.encode(gz.finish().expect("compresses"))
    }

    #[test]
    fn a_release_that_could_not_be_read_back_is_not_encoded() {
        let release = json!({"name": "huge", "manifest": " ".repeat(MAX_EXPANDED_BYTES)});
        let e = encode(&release).expect_err("too large");
        assert!(e.contains("more than the 64 MiB"), "{e}");
    }

    #[test]
    fn decompression_stops_at_the_bound() {
        let text = bomb(MAX_EXPANDED_BYTES + (1 << 20));
        let e = decode(&text).expect_err("a bomb is refused");
        assert!(e.contains("expands to more than 64 MiB"), "{e}");
        // Just within the bound: read (and found to be no release).
        let e = decode(&bomb(1 << 20)).expect_err("not a release");
        assert!(e.contains("not a release"), "{e}");
    }

    #[test]
    fn a_new_revision_follows_unreadable_ones_too() {
        let skipped = |name: &str| Skipped {
            kind: "Secret",
            namespace: "default".into(),
            name: name.into(),
            reason: "not base64".into(),
        };
        let mut listing = Listing::default();
        assert_eq!(listing.next_revision("shop"), 1);
        listing.skipped.push(skipped("sh.helm.release.v1.shop.v4"));
        listing
            .skipped
            .push(skipped("sh.helm.release.v1.shop-two.v9"));
        listing.skipped.push(skipped("sh.helm.release.v1.shop.vX"));
        assert_eq!(listing.next_revision("shop"), 5);
    }

    #[test]
    fn drivers_are_named_as_helm_names_them() {
        assert_eq!(Driver::from_name(""), Ok(Driver::Secret));
        assert_eq!(Driver::from_name("secrets"), Ok(Driver::Secret));
        assert_eq!(Driver::from_name("configmap"), Ok(Driver::ConfigMap));
        assert!(Driver::from_name("sql").is_err());
        assert!(Driver::from_name("etcd").is_err());
        assert_eq!(key("shop", 12), "sh.helm.release.v1.shop.v12");
    }
}
