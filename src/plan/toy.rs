//! A toy sequencing system, compiled for tests only: the proof that a new system is one module
//! and one row of [`super::system::SYSTEMS`] (with its [`Dialect`] variant), and that `plan`,
//! `lint` and `apply` then take it with no other change.
//!
//! Its one ordering key, `toy.chartseq.dev/rank`, an integer (a resource without it is rank
//! 0), orders the whole release: one step per rank, ascending, each after the one before; each
//! object is waited for until it exists. A rank that is not an integer is refused.

use std::collections::BTreeMap;

use crate::model::{Content, DocId, Model};
use crate::plan::system::System;
use crate::plan::{Dialect, Plan, PlanError, PlanIssue, Step, Wait};

/// The toy's ordering key.
pub const RANK: &str = "toy.chartseq.dev/rank";

/// The toy's row.
pub const SYSTEM: System = System {
    dialect: Dialect::Toy,
    name: "toy",
    tool: "Toy",
    named: "the toy",
    summary: "A toy system's ranks",
    release_wide: true,
    hooks_are_resources: false,
    generated_hooks: false,
    foreign: true,
    owns_key: |key| key == RANK,
    configuration: |_| None,
    never_created: |_| None,
    uninstall_keeps_on_removal: false,
    reference_fix: "the toy has no references",
    plan,
    analyze: |model| super::system::from_result(Dialect::Toy, plan(model)),
    uninstall: None,
};

/// Plans the release by rank, or every rank that is not an integer.
pub fn plan(model: &Model) -> Result<Plan, PlanError> {
    let mut plan = Plan {
        dialect: Dialect::Toy,
        ..Plan::default()
    };
    let mut issues = Vec::new();
    let mut ranks: BTreeMap<i64, Vec<DocId>> = BTreeMap::new();
    for (doc, d) in model.documents.iter().enumerate() {
        match &d.content {
            Content::Empty => plan.comments.push(doc),
            Content::Resource(r) => {
                let mut rank = 0;
                if let Some(a) = r.annotations.iter().find(|a| a.key == RANK) {
                    let written = a.value.as_str().unwrap_or_default();
                    match written.trim().parse() {
                        Ok(value) => rank = value,
                        Err(_) => issues.push(PlanIssue::InvalidDialectValue {
                            dialect: Dialect::Toy,
                            key: RANK.to_owned(),
                            value: written.to_owned(),
                            reason: "a rank is an integer".to_owned(),
                            loc: a.value_loc,
                        }),
                    }
                }
                ranks.entry(rank).or_default().push(doc);
                plan.waits.insert(doc, Wait::Exists);
            }
            Content::Invalid { .. } | Content::NotAnObject { .. } => {}
        }
    }
    if !issues.is_empty() {
        return Err(PlanError { issues });
    }
    for (rank, resources) in ranks {
        let after = plan.steps.len().checked_sub(1).into_iter().collect();
        plan.steps.push(Step {
            chart: 0,
            group: Some(format!("rank={rank}")),
            resources,
            after,
        });
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load_stream;
    use crate::plan::output::{PlanFormat, write_plan};

    fn object(kind: &str, name: &str, rank: Option<&str>) -> String {
        let annotation = rank.map_or(String::new(), |r| {
            format!("  annotations:\n    {RANK}: \"{r}\"\n")
        });
        format!(
            "---\n# Source: toy/templates/{name}.yaml\napiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n{annotation}data:\n  a: b\n"
        )
    }

    fn model(stream: &[String]) -> Model {
        load_stream(
            "toy.yaml",
            stream.concat().into_bytes(),
            crate::parse::Limits::default(),
        )
    }

    fn chart() -> Model {
        model(&[
            object("ConfigMap", "late", Some("2")),
            object("ConfigMap", "early", Some("-1")),
            object("ConfigMap", "plain", None),
        ])
    }

    #[test]
    fn the_toy_plans_by_rank_in_every_format_and_is_chosen_by_auto() {
        let model = chart();
        assert_eq!(crate::plan::detect::auto(&model), Ok(Dialect::Toy));
        assert_eq!(Dialect::from_name("toy"), Some(Dialect::Toy));
        let plan = crate::plan::plan_in(&model, Dialect::Toy).expect("plans");
        let names: Vec<(&str, Vec<&str>)> = plan
            .steps
            .iter()
            .map(|s| {
                let resources = s
                    .resources
                    .iter()
                    .filter_map(|&d| model.resource(d).map(|r| r.id.name.as_str()))
                    .collect();
                (s.group.as_deref().unwrap_or("-"), resources)
            })
            .collect();
        assert_eq!(
            names,
            [
                ("rank=-1", vec!["early"]),
                ("rank=0", vec!["plain"]),
                ("rank=2", vec!["late"]),
            ]
        );
        assert_eq!(plan.steps[2].after, [1]);
        let mut json = Vec::new();
        write_plan(&mut json, &model, &plan, PlanFormat::Json, false, false).expect("writes");
        let json: serde_json::Value = serde_json::from_slice(&json).expect("JSON");
        assert_eq!(json["dialect"], "toy");
        let mut text = Vec::new();
        write_plan(&mut text, &model, &plan, PlanFormat::Text, false, false).expect("writes");
        let text = String::from_utf8(text).expect("UTF-8");
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} in {text}"));
        assert!(
            at("rank=-1") < at("rank=0") && at("rank=0") < at("rank=2"),
            "{text}"
        );
        assert_eq!(
            plan.wait_of(&model, plan.steps[0].resources[0]),
            Some(Wait::Exists)
        );
    }

    #[test]
    fn lint_reports_the_toys_keys_and_the_rank_it_refuses() {
        let model = model(&[
            object("ConfigMap", "a", Some("1")),
            object("ConfigMap", "b", Some("first")),
        ]);
        let report = crate::lint::run(&model, &crate::lint::Settings::default());
        let found: Vec<(&str, &str)> = report
            .findings
            .iter()
            .map(|f| (f.code, f.message.as_str()))
            .collect();
        assert!(
            found
                .iter()
                .any(|(code, m)| *code == "CS601" && m.contains("ordering annotations of Toy")),
            "{found:?}"
        );
        assert!(
            found.iter().any(|(code, m)| *code == "CS602"
                && m.contains("first")
                && m.contains("a rank is an integer")),
            "{found:?}"
        );
        assert!(crate::plan::plan_in(&model, Dialect::Toy).is_err());
    }

    /// Deploys the toy's plan on the test cluster (`CHARTSEQ_TEST_KUBECONFIG`, with
    /// `CHARTSEQ_KUBECTL` to make its namespace): its steps run in rank order and the release
    /// records the toy's order, read back as such.
    #[cfg(feature = "apply")]
    #[test]
    #[expect(clippy::print_stderr, reason = "says that the test was skipped")]
    fn the_toy_deploys_in_its_order_and_its_release_reads_back() {
        let (Ok(kubeconfig), Ok(kubectl)) = (
            std::env::var("CHARTSEQ_TEST_KUBECONFIG"),
            std::env::var("CHARTSEQ_KUBECTL"),
        ) else {
            assert!(
                std::env::var("CHARTSEQ_REQUIRE_TOOLS").as_deref() != Ok("1"),
                "CHARTSEQ_TEST_KUBECONFIG and CHARTSEQ_KUBECTL are required"
            );
            eprintln!("skipped: no test cluster (CHARTSEQ_TEST_KUBECONFIG)");
            return;
        };
        let namespace = format!("toy-{}", std::process::id());
        let created = std::process::Command::new(&kubectl)
            .args([
                "--kubeconfig",
                &kubeconfig,
                "create",
                "namespace",
                &namespace,
            ])
            .output()
            .expect("runs kubectl");
        assert!(
            created.status.success(),
            "{}",
            String::from_utf8_lossy(&created.stderr)
        );
        let model = chart();
        let plan = crate::plan::plan_in(&model, Dialect::Toy).expect("plans");
        let record = crate::apply::release::record_from_plan(&model, &plan, "toy", &namespace)
            .expect("records");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let (started, history) = runtime.block_on(async {
            let connection = crate::apply::cluster::Connection {
                kubeconfig: Some(kubeconfig.clone().into()),
                ..Default::default()
            };
            let cluster = std::sync::Arc::new(
                crate::apply::cluster::KubeCluster::connect(&connection)
                    .await
                    .expect("connects"),
            );
            let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
            let (_cancel, cancelled) = tokio::sync::watch::channel(false);
            let ctx = crate::apply::Context {
                cluster: cluster.clone(),
                judge: std::sync::Arc::new(crate::apply::judge::Engine),
                settings: crate::apply::deploy::RunSettings {
                    timeout: std::time::Duration::from_secs(120),
                    readiness_timeout: std::time::Duration::from_secs(60),
                    wait_for_jobs: false,
                    dry_run: false,
                    force_conflicts: false,
                    take_ownership: false,
                    argo_health: None,
                },
                atomic: false,
                events,
                cancel: cancelled,
                driver: crate::apply::storage::Driver::Secret,
                history_max: 0,
            };
            let outcome = crate::apply::install(&ctx, record).await;
            assert!(outcome.is_ok(), "{:?}", outcome.err());
            drop(ctx);
            let mut started = Vec::new();
            while let Some(event) = received.recv().await {
                if let crate::apply::deploy::Event::Started { step, .. } = event {
                    started.push(step);
                }
            }
            let history = crate::apply::history(
                cluster.as_ref(),
                crate::apply::storage::Driver::Secret,
                &namespace,
                "toy",
            )
            .await
            .expect("reads the release");
            (started, history)
        });
        let ranks: Vec<&String> = started.iter().filter(|s| s.contains("rank=")).collect();
        assert_eq!(ranks.len(), 3, "{started:?}");
        assert!(
            ranks[0].contains("rank=-1") && ranks[2].contains("rank=2"),
            "{started:?}"
        );
        let last = history.records.last().expect("a revision");
        assert_eq!(last.dialect, Some(Dialect::Toy));
        let live = std::process::Command::new(&kubectl)
            .args(["--kubeconfig", &kubeconfig, "-n", &namespace])
            .args(["get", "configmaps", "early", "plain", "late", "-o", "name"])
            .output()
            .expect("runs kubectl");
        assert_eq!(
            String::from_utf8_lossy(&live.stdout),
            "configmap/early\nconfigmap/plain\nconfigmap/late\n",
            "{}",
            String::from_utf8_lossy(&live.stderr)
        );
        let _ = std::process::Command::new(&kubectl)
            .args([
                "--kubeconfig",
                &kubeconfig,
                "delete",
                "namespace",
                &namespace,
            ])
            .arg("--wait=false")
            .output();
    }
}
