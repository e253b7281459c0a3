//! The simulated controllers: after the scenario's delay each workload gets the status its
//! real controller would write (ready, or failed), Jobs start, Pods run, CRDs become
//! established and their versions served.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::discovery::ResourceType;
use super::{Server, now_rfc3339};

/// Runs the simulated controller of one object after its scenario delay.
pub(super) fn schedule_controller(
    server: &Arc<Server>,
    ty: &ResourceType,
    ns: Option<&str>,
    name: &str,
) {
    let default = server.scenario.default_delay_ms.unwrap_or(50);
    let entry = server
        .scenario
        .entry(&ty.kind, ns, name)
        .cloned()
        .unwrap_or_default();
    let (generation, kind) = {
        let st = server.lock();
        let key = (
            ty.group.clone(),
            ty.plural.clone(),
            ns.map(str::to_owned),
            name.to_owned(),
        );
        let Some(s) = st.objects.get(&key) else {
            return;
        };
        (
            s.object["metadata"]["generation"].as_i64().unwrap_or(1),
            ty.kind.clone(),
        )
    };
    for timed in &entry.status {
        let server = server.clone();
        let (ty, ns, name, value, after) = (
            ty.clone(),
            ns.map(str::to_owned),
            name.to_owned(),
            timed.value.clone(),
            timed.after_ms,
        );
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(after)).await;
            set_status(&server, &ty, ns.as_deref(), &name, None, |_, _| Some(value));
        });
    }
    // Immediate effects: a Job starts, a Pod runs.
    match kind.as_str() {
        "Job" => set_status(server, ty, ns, name, Some(generation), |_, _| {
            Some(json!({"startTime": now_rfc3339(), "active": 1, "ready": 0}))
        }),
        "Pod" => set_status(server, ty, ns, name, None, |_, _| {
            Some(json!({"phase": "Pending"}))
        }),
        _ => {}
    }
    let has_controller = matches!(
        kind.as_str(),
        "Deployment"
            | "StatefulSet"
            | "DaemonSet"
            | "ReplicaSet"
            | "Job"
            | "Pod"
            | "PersistentVolumeClaim"
            | "CustomResourceDefinition"
            | "Service"
    );
    if !has_controller || entry.never {
        return;
    }
    let delay = entry.ready_after_ms.unwrap_or(default);
    let fail = entry.fail;
    let server = server.clone();
    let (ty, ns, name) = (ty.clone(), ns.map(str::to_owned), name.to_owned());
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(delay)).await;
        set_status(
            &server,
            &ty,
            ns.as_deref(),
            &name,
            Some(generation),
            |obj, ty| controller_status(obj, ty, fail),
        );
        if ty.kind == "CustomResourceDefinition" && !fail {
            register_crd(&server, &name);
        }
    });
}

/// The status a controller writes once the object has converged (or failed).
pub(super) fn controller_status(obj: &Value, ty: &ResourceType, fail: bool) -> Option<Value> {
    let generation = obj["metadata"]["generation"].as_i64().unwrap_or(1);
    let replicas = obj["spec"]["replicas"].as_i64().unwrap_or(1);
    let now = now_rfc3339();
    let cond = |t: &str, s: &str, reason: &str| json!({"type": t, "status": s, "reason": reason, "lastTransitionTime": now, "lastUpdateTime": now, "message": ""});
    Some(match ty.kind.as_str() {
        "Deployment" if fail => {
            json!({"observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas, "unavailableReplicas": replicas,
            "conditions": [cond("Available", "False", "MinimumReplicasUnavailable"), cond("Progressing", "False", "ProgressDeadlineExceeded")]})
        }
        "Deployment" => {
            json!({"observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
            "conditions": [cond("Available", "True", "MinimumReplicasAvailable"), cond("Progressing", "True", "NewReplicaSetAvailable")]})
        }
        "StatefulSet" => {
            json!({"observedGeneration": generation, "replicas": replicas, "readyReplicas": replicas, "currentReplicas": replicas, "updatedReplicas": replicas,
            "availableReplicas": replicas, "currentRevision": "r1", "updateRevision": "r1"})
        }
        "ReplicaSet" => {
            json!({"observedGeneration": generation, "replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas, "fullyLabeledReplicas": replicas})
        }
        "DaemonSet" => {
            json!({"observedGeneration": generation, "desiredNumberScheduled": 1, "currentNumberScheduled": 1, "updatedNumberScheduled": 1, "numberAvailable": 1, "numberReady": 1, "numberMisscheduled": 0})
        }
        "Job" if fail => json!({"startTime": obj["status"]["startTime"], "failed": 1, "active": 0,
            "conditions": [cond("FailureTarget", "True", "BackoffLimitExceeded"), cond("Failed", "True", "BackoffLimitExceeded")]}),
        "Job" => {
            json!({"startTime": obj["status"]["startTime"], "completionTime": now, "succeeded": 1, "active": 0, "ready": 0,
            "conditions": [cond("SuccessCriteriaMet", "True", "CompletionsReached"), cond("Complete", "True", "CompletionsReached")]})
        }
        "Pod" => {
            let once = matches!(
                obj["spec"]["restartPolicy"].as_str(),
                Some("Never" | "OnFailure")
            );
            match (once, fail) {
                (_, true) => json!({"phase": "Failed"}),
                (true, false) => json!({"phase": "Succeeded"}),
                (false, false) => {
                    json!({"phase": "Running", "conditions": [cond("Ready", "True", ""), cond("ContainersReady", "True", "")]})
                }
            }
        }
        "PersistentVolumeClaim" => json!({"phase": "Bound"}),
        "Service" if obj["spec"]["type"] == "LoadBalancer" => {
            json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}})
        }
        "Service" => return None,
        "CustomResourceDefinition" if fail => {
            json!({"conditions": [cond("NamesAccepted", "False", "NameConflict")]})
        }
        "CustomResourceDefinition" => {
            json!({"acceptedNames": obj["spec"]["names"], "storedVersions": [obj["spec"]["versions"][0]["name"]],
            "conditions": [cond("NamesAccepted", "True", "NoConflicts"), cond("Established", "True", "InitialNamesAccepted")]})
        }
        _ => return None,
    })
}

/// Writes `.status` through the status path; skips when the object moved on to a newer
/// generation (its own controller run will follow).
pub(super) fn set_status(
    server: &Arc<Server>,
    ty: &ResourceType,
    ns: Option<&str>,
    name: &str,
    generation: Option<i64>,
    make: impl FnOnce(&Value, &ResourceType) -> Option<Value>,
) {
    let mut st = server.lock();
    let key = (
        ty.group.clone(),
        ty.plural.clone(),
        ns.map(str::to_owned),
        name.to_owned(),
    );
    let Some(stored) = st.objects.get(&key) else {
        return;
    };
    if generation.is_some_and(|g| stored.object["metadata"]["generation"].as_i64() != Some(g))
        || !stored.object["metadata"]["deletionTimestamp"].is_null()
    {
        return;
    }
    let Some(status) = make(&stored.object, ty) else {
        return;
    };
    let mut obj = stored.object.clone();
    obj["status"] = status;
    let managers = stored.managers.clone();
    server.record(&mut st, "ready", &obj, false);
    server.store(&mut st, ty, ns, name, obj, managers, false);
}

/// Serves the versions of an established CRD.
pub(super) fn register_crd(server: &Arc<Server>, name: &str) {
    let mut st = server.lock();
    let key = (
        String::from("apiextensions.k8s.io"),
        String::from("customresourcedefinitions"),
        None,
        name.to_owned(),
    );
    let Some(stored) = st.objects.get(&key) else {
        return;
    };
    let spec = stored.object["spec"].clone();
    let group = spec["group"].as_str().unwrap_or_default().to_owned();
    let names = &spec["names"];
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let mut added = Vec::new();
    for v in spec["versions"].as_array().into_iter().flatten() {
        if v["served"].as_bool() == Some(false) {
            continue;
        }
        added.push(ResourceType {
            group: group.clone(),
            version: v["name"].as_str().unwrap_or("v1").to_owned(),
            kind: names["kind"].as_str().unwrap_or_default().to_owned(),
            plural: names["plural"].as_str().unwrap_or_default().to_owned(),
            namespaced,
            status: v["subresources"]["status"].is_object(),
            crd: Some(name.to_owned()),
        });
    }
    st.types.retain(|t| t.crd.as_deref() != Some(name));
    st.types.extend(added);
}
