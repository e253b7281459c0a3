//! Reads the Argo CD Lua health scripts `apply --argo-health` names
//! ([`crate::readiness::argo_script`]): each path a directory laid out like argo-cd's
//! `resource_customizations`, or a YAML file holding an `argocd-cm` `ConfigMap`. Later paths
//! replace earlier ones' scripts for the same key.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Error;
use crate::readiness::argo_script::{HealthScript, HealthScripts, MAX_SCRIPT_BYTES};

/// The script file argo-cd reads in each `<group>/<kind>` directory.
const HEALTH_FILE: &str = "health.lua";

/// Reads every source, in order.
pub fn load(paths: &[impl AsRef<Path>]) -> Result<HealthScripts, Error> {
    let mut scripts = HealthScripts::default();
    for path in paths {
        let path = path.as_ref();
        let meta = std::fs::metadata(path)
            .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
        if meta.is_dir() {
            read_directory(path, &mut scripts)?;
        } else {
            read_config_map(path, &mut scripts)?;
        }
    }
    Ok(scripts)
}

fn entries(dir: &Path) -> Result<Vec<std::fs::DirEntry>, Error> {
    let what = || format!("cannot read directory {}", dir.display());
    let mut entries = std::fs::read_dir(dir)
        .map_err(|e| Error::io(what(), e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::io(what(), e))?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    Ok(entries)
}

/// `<kind>/health.lua` (the core group) and `<group>/<kind>/health.lua`, as argo-cd keys its
/// embedded scripts; everything else (actions, test data) is passed over.
fn read_directory(dir: &Path, scripts: &mut HealthScripts) -> Result<(), Error> {
    for first in entries(dir)? {
        let first_path = first.path();
        if !first_path.is_dir() {
            continue;
        }
        let first_name = first.file_name().to_string_lossy().into_owned();
        let direct = first_path.join(HEALTH_FILE);
        if direct.is_file() {
            scripts.add_directory_script(first_name.clone(), read_script(&direct)?);
        }
        for second in entries(&first_path)? {
            let file = second.path().join(HEALTH_FILE);
            if second.path().is_dir() && file.is_file() {
                let key = format!("{first_name}/{}", second.file_name().to_string_lossy());
                scripts.add_directory_script(key, read_script(&file)?);
            }
        }
    }
    Ok(())
}

fn read_text(path: &Path) -> Result<String, Error> {
    let len = std::fs::metadata(path)
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?
        .len();
    if usize::try_from(len).map_or(true, |l| l > MAX_SCRIPT_BYTES) {
        return Err(Error::invalid(format!(
            "{}: {len} bytes, more than the {} MiB a health script source may have",
            path.display(),
            MAX_SCRIPT_BYTES / (1024 * 1024)
        )));
    }
    std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))
}

fn read_script(path: &Path) -> Result<HealthScript, Error> {
    Ok(HealthScript {
        origin: path.display().to_string(),
        source: read_text(path)?,
        // argo-cd opens every library for its built-in scripts.
        open_libs: true,
    })
}

/// An `argocd-cm` `ConfigMap`: its `data` keys.
fn read_config_map(path: &Path, scripts: &mut HealthScripts) -> Result<(), Error> {
    let text = read_text(path)?;
    let origin = path.display().to_string();
    let node =
        crate::parse::parse_document(&text, 0, crate::parse::Limits::default()).map_err(|e| {
            let before = text.get(..e.offset as usize).unwrap_or(&text);
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            Error::invalid(format!(
                "{origin}:{line}:{column}: not an argocd-cm ConfigMap: {}",
                e.message
            ))
        })?;
    let not_config_map = || {
        Error::invalid(format!(
            "{origin}: not a directory of health scripts nor an argocd-cm ConfigMap with a `data` mapping"
        ))
    };
    let data = node
        .as_ref()
        .and_then(|n| n.get("data"))
        .and_then(crate::parse::Node::as_map)
        .ok_or_else(not_config_map)?;
    let mut map = BTreeMap::new();
    for (k, v) in data {
        let (Some(k), Some(v)) = (k.as_scalar(), v.as_scalar()) else {
            return Err(Error::invalid(format!(
                "{origin}: every `data` key and value of a ConfigMap is a string"
            )));
        };
        map.insert(k.to_owned(), v.to_owned());
    }
    scripts
        .add_config_map(&map, &origin)
        .map_err(Error::invalid)
}
