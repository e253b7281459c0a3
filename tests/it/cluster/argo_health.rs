//! `apply --dialect argo` waits by Argo CD's built-in health checks on the real control plane:
//! a `LoadBalancer` Service holds its wave until it has an ingress (the test writes it, as a
//! cloud controller would), a custom resource whose kind has no health check is not waited
//! for (HIP-0025's kstatus waits for the same object), and a Degraded resource fails the
//! deploy before the next wave is written. With `--argo-health`, a Lua health script the
//! user gives judges the custom resource it covers.

use std::time::Duration;

use super::dialects::{config_map, stream};
use super::{Audit, Ns, ok};

/// A CRD from `crds/` without a status subresource: the status written in a manifest is kept.
fn crd(group: &str, kind: &str, plural: &str) -> String {
    format!(
        "---
# Source: shop/crds/{plural}.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{kind: {kind}, plural: {plural}, singular: {singular}, listKind: {kind}List}}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}
",
        singular = kind.to_lowercase()
    )
}

fn after_wave() -> String {
    config_map("after", "\n    argocd.argoproj.io/sync-wave: \"1\"")
}

/// The successful status writes of `resource/name` by the tests, as their arrival times.
fn status_writes(audit: &Audit, resource: &str, name: &str) -> Vec<String> {
    audit
        .events
        .iter()
        .filter(|e| e.resource == resource && e.name == name && e.subresource == "status")
        .filter(|e| e.verb == "patch" && (200..300).contains(&e.code))
        .map(|e| e.received.clone())
        .collect()
}

/// Argo CD's Service check: a `LoadBalancer` Service is Progressing until its status has a
/// load balancer ingress; the next wave is written only after the test wrote one.
#[test]
fn argo_waits_for_a_load_balancer_service_until_it_has_an_ingress() {
    let Some(ns) = Ns::new("argo-lb") else {
        return;
    };
    let service = "apiVersion: v1
kind: Service
metadata:
  name: lb
spec:
  type: LoadBalancer
  selector: {app: lb}
  ports: [{port: 80}]
"
    .to_owned();
    let text = stream(&[("lb.yaml", service), ("after.yaml", after_wave())]);
    let path = ns.file("stream.yaml", &text);
    // Plays the cloud's load balancer controller, a second after the Service exists.
    let kubectl = ns.kubectl.clone();
    let kubeconfig = ns.cluster.kubeconfig.clone();
    let namespace = ns.name.clone();
    let cloud = std::thread::spawn(move || {
        let run = |args: &[&str]| {
            std::process::Command::new(&kubectl)
                .args(args)
                .arg("--kubeconfig")
                .arg(&kubeconfig)
                .args(["-n", &namespace])
                .env_remove("KUBECONFIG")
                .output()
                .is_ok_and(|o| o.status.success())
        };
        for _ in 0..1200 {
            if run(&["get", "service", "lb"]) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_secs(1));
        let assignment = r#"{"status":{"loadBalancer":{"ingress":[{"ip":"127.0.0.9"}]}}}"#;
        assert!(
            run(&[
                "patch",
                "service",
                "lb",
                "--subresource=status",
                "--type=merge",
                "-p",
                assignment
            ]),
            "the load balancer status is written"
        );
    });
    let out = ok(ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "argo",
        "--release",
        "shop",
        "--timeout",
        "2m",
    ]));
    cloud.join().expect("the status writer ends");
    assert!(out.contains("status deployed"), "{out}");
    let audit = ns.audit();
    let assigned = status_writes(&audit, "services", "lb");
    assert_eq!(assigned.len(), 1, "{audit}");
    let written = &audit.created("ConfigMap", "after").received;
    assert!(
        *written > assigned[0],
        "the next wave went out at {written}, before the Service had an ingress at {}:\n{audit}",
        assigned[0]
    );
}

/// A custom resource of a kind Argo CD has no health check for counts as healthy once it is
/// applied: its wave does not wait for it, though its status says it is not ready (which
/// HIP-0025's kstatus waits for).
#[test]
fn argo_does_not_wait_for_a_custom_resource_without_a_health_check() {
    let Some(ns) = Ns::new("argo-no-health") else {
        return;
    };
    let group = format!("{}.example.com", ns.name);
    ns.owns("customresourcedefinition", &format!("gadgets.{group}"));
    let gadget = format!(
        "apiVersion: {group}/v1
kind: Gadget
metadata:
  name: g
spec: {{size: 1}}
status:
  conditions: [{{type: Ready, status: \"False\", reason: Provisioning, message: never}}]
"
    );
    let text = format!(
        "{}{}",
        crd(&group, "Gadget", "gadgets"),
        stream(&[("gadget.yaml", gadget), ("after.yaml", after_wave())])
    );
    let path = ns.file("stream.yaml", &text);
    let (code, out, err) = ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "argo",
        "--release",
        "shop",
        "--readiness-timeout",
        "60s",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(ns.get("ConfigMap", "after").is_some());
    let gadget = ns
        .get(&format!("gadgets.{group}"), "g")
        .expect("the Gadget");
    assert_eq!(gadget["status"]["conditions"][0]["status"], "False");
    // HIP-0025 waits for the same Gadget by kstatus, and times out.
    let (code, _, err) = ns.chartseq(&[
        "apply",
        &path,
        "--release",
        "hip",
        "--take-ownership",
        "--readiness-timeout",
        "2s",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("timed out") && err.contains("Gadget/g"),
        "{err}"
    );
}

/// A Degraded resource fails the sync (Argo CD's Workflow check: phase `Failed`): the deploy
/// fails naming it and Argo's health message, and the next wave is never written.
#[test]
fn argo_fails_the_deploy_on_a_degraded_resource() {
    let Some(ns) = Ns::new("argo-degraded") else {
        return;
    };
    ns.owns("customresourcedefinition", "workflows.argoproj.io");
    let workflow = "apiVersion: argoproj.io/v1
kind: Workflow
metadata:
  name: wf
spec: {entrypoint: main}
status: {phase: Failed, message: child 'main' failed}
"
    .to_owned();
    let text = format!(
        "{}{}",
        crd("argoproj.io", "Workflow", "workflows"),
        stream(&[("wf.yaml", workflow), ("after.yaml", after_wave())])
    );
    let path = ns.file("stream.yaml", &text);
    let (code, out, err) = ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "argo",
        "--release",
        "shop",
        "--readiness-timeout",
        "60s",
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Workflow/wf") && err.contains("Argo CD health Degraded: child 'main' failed"),
        "{err}"
    );
    assert!(!ns.audit().written("ConfigMap", "after"), "{err}");
}

/// A hook is judged by the same checks: a `PreSync` Pod that restarts always is done once it
/// is Ready (Argo CD's Pod check says Healthy), where a hook run to completion would wait for
/// it to succeed, which it never does.
#[test]
fn argo_counts_a_running_ready_hook_pod_done() {
    let Some(ns) = Ns::new("argo-hook-pod") else {
        return;
    };
    let pod = "apiVersion: v1
kind: Pod
metadata:
  name: warmup
  annotations:
    argocd.argoproj.io/hook: PreSync
    pod-ready.stage.kwok.x-k8s.io/delay: 1s
spec:
  restartPolicy: Always
  containers: [{name: c, image: warmup:1}]
"
    .to_owned();
    let text = stream(&[
        ("warmup.yaml", pod),
        ("config.yaml", config_map("config", "")),
        ("after.yaml", after_wave()),
    ]);
    let path = ns.file("stream.yaml", &text);
    let (code, out, err) = ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "argo",
        "--release",
        "shop",
        "--readiness-timeout",
        "60s",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let live = ns.get("Pod", "warmup").expect("the hook Pod");
    assert_eq!(live["status"]["phase"], "Running", "{live:#}");
    let audit = ns.audit();
    assert!(
        audit.created("ConfigMap", "config").received > audit.created("Pod", "warmup").received,
        "{audit}"
    );
}

/// A custom resource judged by a Lua health script given with `--argo-health`
/// (`fixtures/argo-health/customizations/health.chartseq.example/Widget/health.lua`: Healthy
/// once `.status.phase` is `Ready`): its wave holds until the test, playing the operator,
/// writes that phase, and the next wave's `ConfigMap` is created only after that write.
#[test]
fn argo_waits_for_a_custom_resource_by_the_lua_health_script_given() {
    let Some(ns) = Ns::new("argo-lua") else {
        return;
    };
    let group = "health.chartseq.example";
    ns.owns("customresourcedefinition", &format!("widgets.{group}"));
    let crd = crd(group, "Widget", "widgets").replace(
        "    storage: true\n",
        "    storage: true\n    subresources: {status: {}}\n",
    );
    let widget = format!(
        "apiVersion: {group}/v1
kind: Widget
metadata:
  name: w
spec: {{size: 1}}
"
    );
    let text = format!(
        "{crd}{}",
        stream(&[("widget.yaml", widget), ("after.yaml", after_wave())])
    );
    let path = ns.file("stream.yaml", &text);
    let scripts = crate::fixture("argo-health/customizations");
    let kubectl = ns.kubectl_for_operator();
    let resource = format!("widgets.{group}");
    let operator = std::thread::spawn(move || {
        super::wait_until_found(&kubectl, &[&resource, "w"]);
        std::thread::sleep(Duration::from_secs(2));
        let status = |phase: &str| format!(r#"{{"status":{{"phase":"{phase}"}}}}"#);
        let write_phase = |phase: &str| {
            kubectl(&[
                "patch",
                &resource,
                "w",
                "--subresource=status",
                "--type=merge",
                "-p",
                &status(phase),
            ])
        };
        // A phase the script calls Progressing first, then the one it calls Healthy.
        assert!(write_phase("Provisioning"), "the first status is written");
        std::thread::sleep(Duration::from_secs(1));
        assert!(write_phase("Ready"), "the Ready status is written");
    });
    let out = ok(ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "argo",
        "--release",
        "shop",
        "--argo-health",
        &scripts.to_string_lossy(),
        "--readiness-timeout",
        "90s",
        "--timeout",
        "2m",
    ]));
    operator.join().expect("the operator ends");
    assert!(out.contains("status deployed"), "{out}");
    let audit = ns.audit();
    let writes = status_writes(&audit, "widgets", "w");
    assert_eq!(writes.len(), 2, "{audit}");
    let written = &audit.created("ConfigMap", "after").received;
    assert!(
        *written > writes[1],
        "the next wave went out at {written}, before the Widget was Ready at {}:\n{audit}",
        writes[1]
    );
    // A rollback waits by the same script: once the operator says Failed, rolling back to
    // revision 1 fails on the Widget with the script's message.
    ok(ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "argo",
        "--release",
        "shop",
        "--argo-health",
        &scripts.to_string_lossy(),
    ]));
    let failed = r#"{"status":{"phase":"Failed","reason":"out of gears"}}"#;
    let (code, _, err) = ns.kubectl(&[
        "patch",
        "widgets.health.chartseq.example",
        "w",
        "--subresource=status",
        "--type=merge",
        "-p",
        failed,
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = ns.chartseq(&[
        "rollback",
        "shop",
        "1",
        "--argo-health",
        &scripts.to_string_lossy(),
        "--readiness-timeout",
        "60s",
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Widget/w")
            && err.contains("Argo CD health Degraded: widget failed: out of gears"),
        "{err}"
    );
}

/// A script that does not parse stops the deploy before anything is sent, naming its file.
#[test]
fn argo_refuses_a_lua_health_script_that_does_not_parse() {
    let Some(ns) = Ns::new("argo-lua-syntax") else {
        return;
    };
    let path = ns.file("stream.yaml", &stream(&[("after.yaml", after_wave())]));
    let scripts = crate::fixture("argo-health/broken");
    let (code, out, err) = ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "argo",
        "--release",
        "shop",
        "--argo-health",
        &scripts.to_string_lossy(),
    ]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(
        err.contains("--argo-health: health script ") && err.contains("Syntax/health.lua"),
        "{err}"
    );
    assert!(!ns.audit().written("ConfigMap", "after"), "{err}");
}
