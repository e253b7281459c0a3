//! Argo CD health checks written in Lua that the user hands chartseq (`apply --argo-health`):
//! which script judges a kind, and (cargo feature `apply`) running it as argo-cd runs it
//! (`util/lua/lua.go`).
//!
//! Two kinds of source, as argo-cd has them: a directory laid out like argo-cd's
//! `resource_customizations` (`<group>/<kind>/health.lua`, `<kind>/health.lua` for the core
//! group; a `_` in a directory name matches any run of characters but `/`), standing for
//! argo-cd's built-in scripts; and the `data` of an `argocd-cm` `ConfigMap` (keys
//! `resource.customizations.health.<group>_<kind>`, `resource.customizations.useOpenLibs.…`,
//! and the older `resource.customizations` block with `health.lua`), standing for an
//! installation's overrides. [`HealthScripts::find`] follows `GetHealthScript`: an override
//! for the exact `group/kind`, else a matching wildcard override (a glob: `*` any run of
//! characters, `?` one), else a directory's exact script, else the first matching wildcard
//! directory in name order. Sources are added in order and a later one replaces an earlier
//! one's script for the same key.
//!
//! The language is gopher-lua's: Lua 5.1 with Lua 5.2's `goto` (which argo-cd's own scripts
//! use), so chartseq runs Lua 5.2 with the 5.1 functions 5.2 dropped put back
//! (`unpack`, `loadstring`, `table.getn`, `table.maxn`). The VM follows `VM.runLua`: a script from a directory gets every standard library
//! (argo-cd opens them for its built-in scripts), an override only `base`, `package`, `table`
//! and an `os` holding just `time` and `date`, unless its `useOpenLibs` is true. The live object
//! is the global `obj`; the script's last returned value is its result. Each run is bounded
//! by [`TIME_LIMIT`] (argo-cd's own timeout) and [`MEMORY_LIMIT`]. `debug` is never opened
//! (chartseq's Lua runs in mlua's safe mode).

use std::collections::BTreeMap;

use serde_json::Value;

use super::argo::HealthStatus;

/// Wall-clock bound on one evaluation: argo-cd's (`context.WithTimeout(…, 1*time.Second)`).
pub const TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Memory one evaluation's Lua state may allocate, the live object included.
pub const MEMORY_LIMIT: usize = 64 * 1024 * 1024;

/// Bytes of one script.
pub const MAX_SCRIPT_BYTES: usize = 1024 * 1024;

/// One health script and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthScript {
    /// Where the script is: a file's path, or `path: key` for a `ConfigMap` key.
    pub origin: String,
    pub source: String,
    /// Every standard library (`useOpenLibs`; always for a directory's script).
    pub open_libs: bool,
}

/// An override as an `argocd-cm` `ConfigMap` holds it: a script and whether it opens every
/// library, either set by its own key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Override {
    health: Option<(String, String)>,
    open_libs: bool,
}

/// Every script the user gave, by `group/kind` key (`Kind` for the core group).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HealthScripts {
    /// argocd-cm's overrides, by key; a key may be a glob.
    overrides: BTreeMap<String, Override>,
    /// Directory scripts, by `group/kind` directory; `_` is a wildcard.
    builtin: BTreeMap<String, HealthScript>,
}

/// The result of one script, as gitops-engine's `HealthOverride` returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptHealth {
    /// A health status.
    Health(HealthStatus),
    /// No status (`nil`, an empty table or a field of the wrong type): argo-cd's empty
    /// `HealthStatus`, which a sync never counts done for a resource and counts succeeded for
    /// a hook.
    Empty,
}

impl HealthScripts {
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.builtin.is_empty() && self.overrides.values().all(|o| o.health.is_none())
    }

    /// Compiles every script (cargo feature `apply`): the first that does not parse, named.
    #[cfg(feature = "apply")]
    pub fn check_all(&self) -> Result<(), String> {
        let overrides = self.overrides.values().filter_map(|o| {
            o.health.as_ref().map(|(origin, source)| HealthScript {
                origin: origin.clone(),
                source: source.clone(),
                open_libs: o.open_libs,
            })
        });
        for script in overrides.chain(self.builtin.values().cloned()) {
            check(&script)?;
        }
        Ok(())
    }

    /// Adds a directory's script for `key` (`group/kind`), replacing an earlier one.
    pub fn add_directory_script(&mut self, key: String, script: HealthScript) {
        self.builtin.insert(key, script);
    }

    /// Adds the `data` of an `argocd-cm` `ConfigMap`, as argo-cd's `GetResourceOverrides`
    /// reads it: the `resource.customizations` block first, then the split keys over it.
    /// Keys of other customization types are read past. `origin` names the file.
    pub fn add_config_map(
        &mut self,
        data: &BTreeMap<String, String>,
        origin: &str,
    ) -> Result<(), String> {
        let mut added: BTreeMap<String, Override> = BTreeMap::new();
        if let Some(block) = data.get(CUSTOMIZATIONS).filter(|b| !b.is_empty()) {
            for (key, health, open_libs) in parse_block(block)
                .map_err(|e| format!("{origin}: data key `{CUSTOMIZATIONS}`: {e}"))?
            {
                added.insert(
                    key.clone(),
                    Override {
                        health: health.map(|s| (format!("{origin}: {CUSTOMIZATIONS} {key}"), s)),
                        open_libs,
                    },
                );
            }
        }
        for (k, v) in data {
            if !k.starts_with(CUSTOMIZATIONS) {
                continue;
            }
            let parts: Vec<&str> = k.splitn(4, '.').collect();
            let [_, _, kind, group_kind] = parts[..] else {
                continue;
            };
            let key =
                override_key(group_kind).map_err(|e| format!("{origin}: data key `{k}`: {e}"))?;
            let entry = added.entry(key).or_default();
            match kind {
                "health" => entry.health = Some((format!("{origin}: {k}"), v.clone())),
                "useOpenLibs" => {
                    entry.open_libs = parse_go_bool(v).ok_or_else(|| {
                        format!("{origin}: data key `{k}`: {v:?} is not a boolean")
                    })?;
                }
                "actions" | "ignoreDifferences" | "ignoreResourceUpdates" | "knownTypeFields" => {}
                other => {
                    return Err(format!(
                        "{origin}: data key `{k}`: resource customization type {other} not supported"
                    ));
                }
            }
        }
        for (key, o) in added {
            let slot = self.overrides.entry(key).or_default();
            if o.health.is_some() {
                slot.health = o.health;
            }
            slot.open_libs = o.open_libs;
        }
        Ok(())
    }

    /// The script that judges `group`/`kind`, as `GetHealthScript` picks it.
    #[must_use]
    pub fn find(&self, group: &str, kind: &str) -> Option<HealthScript> {
        let key = if group.is_empty() {
            kind.to_owned()
        } else {
            format!("{group}/{kind}")
        };
        let scripted = |o: &Override| {
            o.health
                .as_ref()
                .filter(|(_, s)| !s.is_empty())
                .map(|(origin, source)| HealthScript {
                    origin: origin.clone(),
                    source: source.clone(),
                    open_libs: o.open_libs,
                })
        };
        if let Some(s) = self.overrides.get(&key).and_then(scripted) {
            return Some(s);
        }
        // NOTE: argo-cd tries wildcard overrides in Go's map order (its code says the pick
        // is not deterministic when several match); chartseq tries them in key order.
        if let Some(s) = self
            .overrides
            .iter()
            .filter(|(k, _)| glob(k.as_bytes(), key.as_bytes()))
            .find_map(|(_, o)| scripted(o))
        {
            return Some(s);
        }
        if let Some(s) = self.builtin.get(&key) {
            return Some(s.clone());
        }
        self.builtin
            .iter()
            .find(|(k, _)| k.contains('_') && super::argo::wildcard(k, &key))
            .map(|(_, s)| s.clone())
    }
}

const CUSTOMIZATIONS: &str = "resource.customizations";

/// `<group>_<kind>` or `<kind>` of a split key as a `group/kind` key (`convertToOverrideKey`);
/// `all` is every kind.
fn override_key(group_kind: &str) -> Result<String, String> {
    let parts: Vec<&str> = group_kind.split('_').collect();
    let key = match parts[..] {
        [group, kind] => format!("{group}/{kind}"),
        [kind] if !kind.is_empty() => kind.to_owned(),
        _ => {
            return Err(format!(
                "group kind should be in format `resource.customizations.<type>.<group_kind>` or `resource.customizations.<type>.<kind>`, got group kind: {group_kind:?}"
            ));
        }
    };
    Ok(if key == "all" { "*/*".to_owned() } else { key })
}

/// Go's `strconv.ParseBool`.
fn parse_go_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

type BlockEntry = (String, Option<String>, bool);

/// The `resource.customizations` block: a YAML mapping of `group/kind` to its
/// customizations, `health.lua` and `health.lua.useOpenLibs` among them.
fn parse_block(block: &str) -> Result<Vec<BlockEntry>, String> {
    let node = crate::parse::parse_document(block, 0, crate::parse::Limits::default())
        .map_err(|e| format!("byte {}: {}", e.offset, e.message))?;
    let Some(node) = node else {
        return Ok(Vec::new());
    };
    let json = node.to_json();
    let Some(map) = json.as_object() else {
        return Err(format!(
            "expected a mapping of group/kind to customizations, got {}",
            node.describe()
        ));
    };
    let mut out = Vec::new();
    for (key, value) in map {
        let health = match value.get("health.lua") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => return Err(format!("{key}: health.lua must be a string, got {other}")),
        };
        let open_libs = match value.get("health.lua.useOpenLibs").cloned() {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => b,
            Some(other) => {
                return Err(format!(
                    "{key}: health.lua.useOpenLibs must be a boolean, got {other}"
                ));
            }
        };
        out.push((key.clone(), health, open_libs));
    }
    Ok(out)
}

/// A glob as argo-cd's `glob.Match` without separators: `*` any run of characters, `?` one,
/// `\` escapes the next; every other character stands for itself.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    // Iterative with one backtrack point: linear in practice, never exponential.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
                continue;
            }
            Some(b'?') => {
                p += 1;
                t += 1;
                continue;
            }
            Some(b'\\') if pattern.get(p + 1) == Some(&text[t]) => {
                p += 2;
                t += 1;
                continue;
            }
            Some(c) if *c != b'\\' && *c == text[t] => {
                p += 1;
                t += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, st)) => {
                p = sp + 1;
                t = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|c| *c == b'*')
}

#[cfg(feature = "apply")]
/// Turns what a script returned into a health, as `ExecuteHealthLua` does with the JSON it
/// encodes the returned table to. `fields`: the table's `status` and `message` when it is a
/// table with string keys (`None`: an empty table or a list, which encode as a JSON array).
fn health_of(fields: Option<(FieldValue, FieldValue)>) -> ScriptHealth {
    use super::argo::Health;
    let Some((status, message)) = fields else {
        return ScriptHealth::Empty;
    };
    // A field of another JSON type is an unmarshal type error, which argo-cd takes for an
    // empty table.
    let (FieldValue::Absent | FieldValue::Text(_), FieldValue::Absent | FieldValue::Text(_)) =
        (&status, &message)
    else {
        return ScriptHealth::Empty;
    };
    let text = |f: FieldValue| match f {
        FieldValue::Text(s) => s,
        _ => String::new(),
    };
    let (status, message) = (text(status), text(message));
    let status = match status.as_str() {
        "Healthy" => Health::Healthy,
        "Progressing" => Health::Progressing,
        "Suspended" => Health::Suspended,
        "Degraded" => Health::Degraded,
        "Missing" => Health::Missing,
        "Unknown" => Health::Unknown,
        _ => {
            return ScriptHealth::Health(HealthStatus {
                status: Health::Unknown,
                message: format!("Lua returned an invalid health status {status:?}"),
            });
        }
    };
    ScriptHealth::Health(HealthStatus { status, message })
}

/// A field of the returned table, as JSON would see it.
#[cfg(feature = "apply")]
#[derive(Debug)]
enum FieldValue {
    Absent,
    Text(String),
    Other,
}

#[cfg(feature = "apply")]
mod vm {
    use std::time::Instant;

    use mlua::{Lua, LuaOptions, LuaSerdeExt, StdLib, Value as LuaValue};
    use serde_json::Value;

    use super::{FieldValue, HealthScript, MEMORY_LIMIT, ScriptHealth, TIME_LIMIT, health_of};

    /// The chunk name Lua's messages start with (Lua cuts longer names); every message
    /// chartseq shows names the script's file or key in full before it.
    const CHUNK: &str = "=health.lua";

    /// What gopher-lua's Lua 5.1 has and Lua 5.2 dropped (argo-cd's own scripts call
    /// `table.getn`).
    const LUA51_FUNCTIONS: &str = "
        unpack = unpack or table.unpack
        loadstring = loadstring or load
        table.getn = table.getn or function(t) return #t end
        table.maxn = table.maxn or function(t)
          local n = 0
          for k in pairs(t) do
            if type(k) == 'number' and k > n then n = k end
          end
          return n
        end
    ";

    /// VM instructions between two checks of the clock.
    const CHECK_EVERY: u32 = 1000;

    /// A fresh Lua state set up as argo-cd's `runLua` sets up its own.
    fn state(open_libs: bool) -> Result<Lua, String> {
        let libs = if open_libs {
            StdLib::ALL_SAFE
        } else {
            StdLib::TABLE | StdLib::PACKAGE | StdLib::OS
        };
        let lua = Lua::new_with(libs, LuaOptions::new()).map_err(|e| e.to_string())?;
        lua.set_memory_limit(MEMORY_LIMIT)
            .map_err(|e| e.to_string())?;
        lua.load(LUA51_FUNCTIONS)
            .exec()
            .map_err(|e| e.to_string())?;
        if !open_libs {
            // argo-cd's safe `os`: `time` and `date` only, also what `require("os")` gives.
            let safe = (|| -> mlua::Result<()> {
                let globals = lua.globals();
                let os: mlua::Table = globals.get("os")?;
                let safe = lua.create_table()?;
                safe.set("time", os.get::<LuaValue>("time")?)?;
                safe.set("date", os.get::<LuaValue>("date")?)?;
                globals.set("os", &safe)?;
                let loaded: mlua::Table = globals.get::<mlua::Table>("package")?.get("loaded")?;
                loaded.set("os", safe)?;
                Ok(())
            })();
            safe.map_err(|e| e.to_string())?;
        }
        Ok(lua)
    }

    /// Compiles a script without running it: a syntax error is found before anything is
    /// deployed.
    pub fn check(script: &HealthScript) -> Result<(), String> {
        let lua = state(script.open_libs)?;
        lua.load(script.source.as_str())
            .set_name(CHUNK)
            .into_function()
            .map(drop)
            .map_err(|e| format!("health script {}: {e}", script.origin))
    }

    /// Runs a script on a live object.
    pub fn run(script: &HealthScript, object: &Value) -> Result<ScriptHealth, String> {
        let lua = state(script.open_libs)?;
        let started = Instant::now();
        lua.set_hook(
            mlua::HookTriggers::new().every_nth_instruction(CHECK_EVERY),
            move |_, _| {
                if started.elapsed() > TIME_LIMIT {
                    Err(mlua::Error::runtime(format!(
                        "the script ran longer than {}",
                        crate::duration::go_duration(TIME_LIMIT)
                    )))
                } else {
                    Ok(mlua::VmState::Continue)
                }
            },
        )
        .map_err(|e| e.to_string())?;
        let options = mlua::serde::SerializeOptions::new()
            .serialize_none_to_null(false)
            .serialize_unit_to_null(false)
            .set_array_metatable(false);
        let obj = lua
            .to_value_with(object, options)
            .map_err(|e| format!("the object cannot be given to Lua: {e}"))?;
        lua.globals().set("obj", obj).map_err(|e| e.to_string())?;
        let values: mlua::MultiValue = lua
            .load(script.source.as_str())
            .set_name(CHUNK)
            .eval()
            .map_err(|e| match e {
                mlua::Error::MemoryError(_) => format!(
                    "the script needed more than {} MiB of memory",
                    MEMORY_LIMIT / (1024 * 1024)
                ),
                other => first_line(&other.to_string()),
            })?;
        match values.into_iter().last().unwrap_or(LuaValue::Nil) {
            LuaValue::Nil => Ok(ScriptHealth::Empty),
            LuaValue::Table(t) => {
                if t.raw_len() > 0 || t.pairs::<LuaValue, LuaValue>().next().is_none() {
                    return Ok(health_of(None));
                }
                let field = |name: &str| match t.raw_get::<LuaValue>(name) {
                    Ok(LuaValue::Nil) => FieldValue::Absent,
                    Ok(LuaValue::String(s)) => FieldValue::Text(s.to_string_lossy()),
                    _ => FieldValue::Other,
                };
                Ok(health_of(Some((field("status"), field("message")))))
            }
            // Lua 5.1 and 5.2 have one number type; mlua reads whole ones as integers.
            LuaValue::Integer(_) | LuaValue::Number(_) => {
                Err("expect table output from Lua script, not number".to_owned())
            }
            other => Err(format!(
                "expect table output from Lua script, not {}",
                other.type_name()
            )),
        }
    }

    /// A Lua error's message without its stack traceback.
    fn first_line(message: &str) -> String {
        message
            .split("\nstack traceback:")
            .next()
            .unwrap_or(message)
            .trim_end()
            .to_owned()
    }
}

#[cfg(feature = "apply")]
pub use vm::check;

#[cfg(feature = "apply")]
impl super::argo::HealthOverride for HealthScripts {
    fn resource_health(&self, object: &Value) -> Option<Result<ScriptHealth, String>> {
        let at = |k: &str| object.get(k).and_then(Value::as_str).unwrap_or("");
        let api_version = at("apiVersion");
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        let script = self.find(group, at("kind"))?;
        Some(vm::run(&script, object).map_err(|e| format!("health script {}: {e}", script.origin)))
    }
}

/// The scripts are the repository's own (`fixtures/argo-health/`), written for these tests.
#[cfg(all(test, feature = "apply"))]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;
    use std::time::{Duration, Instant, SystemTime};

    use serde_json::{Value, json};

    use super::*;
    use crate::readiness::argo::{ArgoHealth, HealthOverride};
    use crate::readiness::{Condition, Status};

    fn fixture(path: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/argo-health")
            .join(path)
    }

    fn load(paths: &[&str]) -> HealthScripts {
        let paths: Vec<PathBuf> = paths.iter().map(|p| fixture(p)).collect();
        crate::source::argo_health::load(&paths).expect("fixtures load")
    }

    fn object(api_version: &str, kind: &str, status: &Value) -> Value {
        json!({
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": "w", "namespace": "ns"},
            "status": status,
        })
    }

    fn judge(scripts: &HealthScripts, hook: bool, object: &Value) -> (Status, String) {
        let argo = ArgoHealth {
            hook,
            scripts: Some(Arc::new(scripts.clone()) as Arc<dyn HealthOverride>),
        };
        let j = argo.judge(object, SystemTime::UNIX_EPOCH);
        (j.status, j.reason)
    }

    fn widget(status: &Value) -> Value {
        object("health.chartseq.example/v1", "Widget", status)
    }

    #[test]
    fn a_directory_script_decides_healthy_progressing_degraded() {
        let scripts = load(&["customizations"]);
        let (status, reason) = judge(&scripts, false, &widget(&json!({"phase": "Ready"})));
        assert_eq!(status, Status::Ready);
        assert_eq!(reason, "Argo CD health Healthy: widget is ready");
        let (status, reason) = judge(&scripts, false, &widget(&json!({"phase": "Pending"})));
        assert_eq!(status, Status::InProgress);
        assert_eq!(reason, "Argo CD health Progressing: waiting for the widget");
        // No status at all: the script checks, as argo-cd's own scripts do.
        let bare = json!({"apiVersion": "health.chartseq.example/v1", "kind": "Widget"});
        assert_eq!(judge(&scripts, false, &bare).0, Status::InProgress);
        let failed = widget(&json!({"phase": "Failed", "reason": "out of gears"}));
        let (status, reason) = judge(&scripts, false, &failed);
        assert_eq!(status, Status::Failed);
        assert_eq!(
            reason,
            "Argo CD health Degraded: widget failed: out of gears"
        );
    }

    /// gopher-lua's language: Lua 5.1 with `goto`, `table.getn` still there.
    #[test]
    fn goto_and_lua_5_1_functions_work_as_in_gopher_lua() {
        let scripts = load(&["customizations"]);
        let gauge = |readings: Value| {
            object(
                "health.chartseq.example/v1",
                "Gauge",
                &json!({ "readings": readings }),
            )
        };
        let (status, reason) = judge(
            &scripts,
            false,
            &gauge(json!([{"value": 12}, {"value": 30}])),
        );
        assert_eq!(
            (status, reason.as_str()),
            (Status::Ready, "Argo CD health Healthy: 2 readings in range")
        );
        let (status, reason) = judge(
            &scripts,
            false,
            &gauge(json!([{"value": 12}, {"value": 3}])),
        );
        assert_eq!(
            (status, reason.as_str()),
            (
                Status::Failed,
                "Argo CD health Degraded: 1 readings too low"
            )
        );
        assert_eq!(
            judge(&scripts, false, &gauge(json!([]))).0,
            Status::InProgress
        );
    }

    #[test]
    fn a_wildcard_directory_matches_any_group_and_kind_under_it() {
        let scripts = load(&["customizations"]);
        let ready = json!({"conditions": [{"type": "Ready", "status": "True"}]});
        let (status, reason) = judge(
            &scripts,
            false,
            &object("db.chartseq.example/v1alpha1", "Database", &ready),
        );
        assert_eq!(
            (status, reason.as_str()),
            (Status::Ready, "Argo CD health Healthy: w is ready")
        );
        assert!(scripts.find("chartseq.example", "Database").is_none());
        assert!(
            scripts
                .find("db.chartseq.example.org", "Database")
                .is_none()
        );
        // The exact directory comes before the wildcard.
        let widget = scripts
            .find("health.chartseq.example", "Widget")
            .expect("a script");
        assert!(
            widget
                .origin
                .ends_with("health.chartseq.example/Widget/health.lua")
        );
        // A kind nobody scripted keeps the built-in check: a Service is healthy at once.
        let service = json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "ClusterIP"}});
        assert_eq!(judge(&scripts, false, &service).0, Status::Ready);
    }

    #[test]
    fn argocd_cm_overrides_win_over_directories_whatever_the_order() {
        for order in [
            ["customizations", "argocd-cm.yaml"],
            ["argocd-cm.yaml", "customizations"],
        ] {
            let scripts = load(&order);
            let (status, reason) = judge(&scripts, false, &widget(&json!({"phase": "Ready"})));
            assert_eq!(status, Status::InProgress, "{order:?}");
            assert_eq!(
                reason,
                "Argo CD health Progressing: not running yet, says argocd-cm"
            );
            assert_eq!(
                judge(&scripts, false, &widget(&json!({"phase": "Running"}))).0,
                Status::Ready
            );
        }
    }

    #[test]
    fn the_older_block_with_glob_keys_and_restricted_libraries() {
        let scripts = load(&["argocd-cm.yaml"]);
        let gadget = |spec: Value| {
            let mut o = object("a.chartseq.example/v1", "Gadget", &json!({}));
            o["spec"] = spec;
            o
        };
        let (status, reason) = judge(&scripts, false, &gadget(json!({})));
        assert_eq!(
            (status, reason.as_str()),
            (
                Status::InProgress,
                "Argo CD health Suspended: gadget parked"
            )
        );
        // Restricted libraries: no `string` table, so the script fails; a resource keeps
        // waiting with the error as its reason, a hook fails.
        let (status, reason) = judge(&scripts, false, &gadget(json!({"useFormat": true})));
        assert_eq!(status, Status::InProgress);
        assert!(
            reason.starts_with("Argo CD health Unknown: health script "),
            "{reason}"
        );
        assert!(
            reason.contains("argocd-cm.yaml: resource.customizations *.chartseq.example/Gadget"),
            "{reason}"
        );
        assert!(reason.contains("string"), "{reason}");
        assert_eq!(
            judge(&scripts, true, &gadget(json!({"useFormat": true}))).0,
            Status::Failed
        );
        // useOpenLibs opens them.
        let gizmo = object("b.chartseq.example/v1", "Gizmo", &json!({}));
        assert_eq!(
            judge(&scripts, false, &gizmo),
            (Status::Ready, "Argo CD health Healthy: gizmo w".to_owned())
        );
    }

    #[test]
    fn a_later_source_replaces_an_earlier_ones_script() {
        let mut first = BTreeMap::new();
        first.insert(
            "resource.customizations.health.x.chartseq.example_Thing".to_owned(),
            "return { status = 'Degraded' }".to_owned(),
        );
        let mut second = BTreeMap::new();
        second.insert(
            "resource.customizations.health.x.chartseq.example_Thing".to_owned(),
            "return { status = 'Healthy' }".to_owned(),
        );
        let mut scripts = HealthScripts::default();
        scripts.add_config_map(&first, "first.yaml").expect("valid");
        scripts
            .add_config_map(&second, "second.yaml")
            .expect("valid");
        let found = scripts
            .find("x.chartseq.example", "Thing")
            .expect("a script");
        assert_eq!(
            found.origin,
            "second.yaml: resource.customizations.health.x.chartseq.example_Thing"
        );
        assert!(!found.open_libs);
    }

    fn broken(kind: &str, hook: bool) -> (Status, String) {
        let scripts = load(&["broken"]);
        judge(
            &scripts,
            hook,
            &object("errors.chartseq.example/v1", kind, &json!({})),
        )
    }

    #[test]
    fn a_script_error_names_the_script_and_never_passes() {
        for kind in ["Error", "NilIndex"] {
            let (status, reason) = broken(kind, false);
            assert_eq!(status, Status::InProgress, "{kind}: {reason}");
            assert!(
                reason.starts_with("Argo CD health Unknown: health script "),
                "{reason}"
            );
            assert!(
                reason.contains(&format!("errors.chartseq.example/{kind}/health.lua")),
                "{reason}"
            );
            assert!(!reason.contains("stack traceback"), "{reason}");
            assert_eq!(broken(kind, true).0, Status::Failed, "{kind}");
        }
        assert!(broken("Error", false).1.contains("the widget exploded"));
        assert!(broken("NilIndex", false).1.contains("attempt to index"));
    }

    #[test]
    fn garbage_and_unknown_statuses_are_unknown() {
        let (status, reason) = broken("Garbage", true);
        assert_eq!(status, Status::Failed);
        assert!(
            reason.ends_with("Garbage/health.lua: expect table output from Lua script, not number"),
            "{reason}"
        );
        let (status, reason) = broken("BadStatus", false);
        assert_eq!(status, Status::InProgress);
        assert_eq!(
            reason,
            "Argo CD health Unknown: Lua returned an invalid health status \"Great\""
        );
        assert_eq!(broken("BadStatus", true).0, Status::Failed);
        // No status: a resource keeps waiting, a hook is done (argo-cd's empty HealthStatus).
        for kind in ["Empty", "Hook"] {
            assert_eq!(broken(kind, false).0, Status::InProgress, "{kind}");
            assert_eq!(broken(kind, true).0, Status::Ready, "{kind}");
        }
    }

    #[test]
    fn an_endless_script_is_stopped() {
        let started = Instant::now();
        let (status, reason) = broken("Loop", true);
        // A generous bound that only catches a hang.
        assert!(started.elapsed() < Duration::from_secs(30));
        assert_eq!(status, Status::Failed);
        assert!(reason.contains("the script ran longer than 1s"), "{reason}");
    }

    #[test]
    fn a_script_wanting_too_much_memory_is_stopped() {
        let (status, reason) = broken("Memory", true);
        assert_eq!(status, Status::Failed);
        assert!(reason.contains("more than 64 MiB of memory"), "{reason}");
    }

    #[test]
    fn a_syntax_error_is_found_before_anything_runs() {
        let scripts = load(&["broken"]);
        let syntax = scripts
            .find("errors.chartseq.example", "Syntax")
            .expect("a script");
        let err = check(&syntax).expect_err("does not parse");
        assert!(err.contains("Syntax/health.lua"), "{err}");
        let fine = scripts
            .find("errors.chartseq.example", "Error")
            .expect("a script");
        assert!(check(&fine).is_ok());
    }

    #[test]
    fn bad_config_maps_are_refused_with_their_key() {
        let mut data = BTreeMap::new();
        data.insert(
            "resource.customizations.health.a_b_c".to_owned(),
            String::new(),
        );
        let err = HealthScripts::default()
            .add_config_map(&data, "cm.yaml")
            .expect_err("refused");
        assert!(
            err.starts_with("cm.yaml: data key `resource.customizations.health.a_b_c`"),
            "{err}"
        );
        let mut data = BTreeMap::new();
        data.insert(
            "resource.customizations.useOpenLibs.a_B".to_owned(),
            "yes".to_owned(),
        );
        assert!(
            HealthScripts::default()
                .add_config_map(&data, "cm.yaml")
                .is_err()
        );
    }

    #[test]
    fn globs_match_as_argo_cds_do() {
        assert!(glob(b"*/*", b"apps/Deployment"));
        assert!(glob(
            b"*.chartseq.example/Gadget",
            b"a.b.chartseq.example/Gadget"
        ));
        assert!(!glob(
            b"*.chartseq.example/Gadget",
            b"chartseq.example/Gadget"
        ));
        assert!(glob(b"apps/?eployment", b"apps/Deployment"));
        assert!(!glob(b"apps/Deployment", b"apps/Deployments"));
        assert!(glob(b"a\\*", b"a*"));
        assert!(!glob(b"a\\*", b"ab"));
        let long = vec![b'a'; 10_000];
        assert!(!glob(b"*a*a*a*a*b", &long));
    }
}
