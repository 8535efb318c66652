//! Kubernetes, the production engine for sharded load (`iolab k8s`): the
//! manifests that run n shards of one attack plan as an Indexed Job and merge
//! them, written for `kubectl apply -f -`.
//!
//! - A PersistentVolumeClaim (ReadWriteMany) the pods share, unless the user
//!   names an existing claim.
//! - The Indexed Job: completions = parallelism = n; `backoffLimitPerIndex: 0`
//!   and `restartPolicy: Never`, so a failed shard is never sent twice (a
//!   retry would repeat its share of the load); `JOB_COMPLETION_INDEX` + 1
//!   is the shard; every pod starts at the same `--start-at`, as pods of a
//!   Job are not started together; results and HDR logs go to the volume.
//! - The merge Job: `iolab merge --wait` until every shard's file is there
//!   (or names the ones missing), writing `merged.json` beside them.
//!
//! Pure: a spec in, YAML text out; `iolab k8s` validates the attack flags
//! first and the tests validate the output against the Kubernetes schemas.

use std::time::Duration;

use serde_json::{json, Value};

/// Where the results volume comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// Create a ReadWriteMany claim of this size, in this storage class
    /// (`None` = the cluster's default class).
    New {
        /// Requested size, e.g. `1Gi`.
        size: String,
        /// Storage class; must offer ReadWriteMany (NFS, CephFS, EFS, ...).
        storage_class: Option<String>,
    },
    /// A claim that already exists.
    Existing(String),
}

/// Everything the manifests need.
#[derive(Debug, Clone)]
pub struct JobSpec {
    /// Job name (and prefix of the other objects); a DNS label.
    pub name: String,
    /// Namespace, if not the context's.
    pub namespace: Option<String>,
    /// Image holding `iolab` on its PATH, with `sh`.
    pub image: String,
    /// Shards (pods).
    pub shards: u32,
    /// The common start, Unix ms.
    pub start_at_unix_ms: u64,
    /// `iolab attack` arguments, URL first, without the shard flags.
    pub attack_args: Vec<String>,
    /// [`plan_hash`](iolab_loadgen::shard::plan_hash) of the plan, for a label.
    pub plan_hash: String,
    /// How long the merge waits for the shards.
    pub merge_wait: Duration,
    /// The results volume.
    pub claim: Claim,
    /// CPU each shard requests (e.g. `1`), if any.
    pub cpu: Option<String>,
}

/// Where the volume is mounted in every pod.
pub const RESULTS: &str = "/results";

/// The manifests as one multi-document YAML text.
pub fn manifest(spec: &JobSpec) -> String {
    let mut out = format!(
        "# iolab: {} shards of one plan ({}), starting together at Unix ms {}, then merged.\n\
         # Apply with: kubectl apply -f FILE; the merged result: {}/merged.json on the volume\n\
         # (kubectl logs job/{}-merge prints its summary).\n",
        spec.shards,
        spec.plan_hash,
        spec.start_at_unix_ms,
        run_dir(spec),
        spec.name
    );
    out.push_str(&super::yaml::documents(&documents(spec)));
    out
}

/// The objects, in the order they must be applied.
pub fn documents(spec: &JobSpec) -> Vec<Value> {
    let mut docs = Vec::new();
    let claim = match &spec.claim {
        Claim::Existing(name) => name.clone(),
        Claim::New {
            size,
            storage_class,
        } => {
            let name = format!("{}-results", spec.name);
            let mut pvc = json!({
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": metadata(spec, &name),
                "spec": {
                    "accessModes": ["ReadWriteMany"],
                    "resources": {"requests": {"storage": size}},
                },
            });
            if let Some(class) = storage_class {
                pvc["spec"]["storageClassName"] = json!(class);
            }
            docs.push(pvc);
            name
        }
    };
    docs.push(shards_job(spec, &claim));
    docs.push(merge_job(spec, &claim));
    docs
}

fn metadata(spec: &JobSpec, name: &str) -> Value {
    let mut m = json!({
        "name": name,
        "labels": {
            "app.kubernetes.io/name": "iolab",
            "app.kubernetes.io/instance": spec.name,
            "iolab/plan": spec.plan_hash.trim_start_matches("sha256:"),
        },
    });
    if let Some(ns) = &spec.namespace {
        m["namespace"] = json!(ns);
    }
    m
}

/// A pod template running `command` with the volume mounted.
fn pod(spec: &JobSpec, claim: &str, container: &str, command: Vec<String>) -> Value {
    let mut c = json!({
        "name": container,
        "image": spec.image,
        "command": command,
        "volumeMounts": [{"name": "results", "mountPath": RESULTS}],
    });
    if let Some(cpu) = &spec.cpu {
        c["resources"] = json!({"requests": {"cpu": cpu}});
    }
    json!({
        "metadata": {"labels": metadata(spec, "")["labels"].clone()},
        "spec": {
            "restartPolicy": "Never",
            "containers": [c],
            "volumes": [{"name": "results", "persistentVolumeClaim": {"claimName": claim}}],
        },
    })
}

fn shards_job(spec: &JobSpec, claim: &str) -> Value {
    let n = spec.shards;
    // The attack's arguments go to sh as "$@", never into the script text,
    // so no quoting of the user's URL or flags can break it.
    let dir = run_dir(spec);
    let script = format!(
        "i=$((JOB_COMPLETION_INDEX + 1)); mkdir -p {dir} && exec iolab attack \"$@\" --shard \"$i/{n}\" \
         --start-at {at} --out \"{dir}/shard-$i.json\" --hdr \"{dir}/shard-$i.hdr\" --quiet",
        at = format_start(spec.start_at_unix_ms)
    );
    let mut command = vec!["sh".to_string(), "-c".into(), script, "iolab-shard".into()];
    command.extend(spec.attack_args.iter().cloned());
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(spec, &spec.name),
        "spec": {
            "completionMode": "Indexed",
            "completions": n,
            "parallelism": n,
            "backoffLimitPerIndex": 0,
            "template": pod(spec, claim, "shard", command),
        },
    })
}

fn merge_job(spec: &JobSpec, claim: &str) -> Value {
    let dir = run_dir(spec);
    let command = [
        "iolab",
        "merge",
        &dir,
        "--wait",
        &format!("{}s", spec.merge_wait.as_secs().max(1)),
        "--out",
        &format!("{dir}/merged.json"),
        "--hdr",
        &format!("{dir}/merged.hdr"),
    ]
    .map(String::from)
    .to_vec();
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(spec, &format!("{}-merge", spec.name)),
        "spec": {
            "backoffLimit": 0,
            "template": pod(spec, claim, "merge", command),
        },
    })
}

/// This run's folder on the volume: named by Job and start, so a merge never
/// takes the shards of an earlier run left on a reused claim for this one's.
pub fn run_dir(spec: &JobSpec) -> String {
    format!("{RESULTS}/{}-{}", spec.name, spec.start_at_unix_ms / 1000)
}

/// Unix ms as `--start-at` takes it: whole seconds, or with a fraction.
fn format_start(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        format!("{}.{:03}", ms / 1000, ms % 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> JobSpec {
        JobSpec {
            name: "iolab-demo".into(),
            namespace: Some("load".into()),
            image: "registry.example/iolab:1".into(),
            shards: 4,
            start_at_unix_ms: 1_800_000_000_500,
            attack_args: vec![
                "http://svc:8080/work?steps=sleep:100".into(),
                "--rate".into(),
                "400".into(),
            ],
            plan_hash: "sha256:0123456789abcdef".into(),
            merge_wait: Duration::from_secs(300),
            claim: Claim::New {
                size: "1Gi".into(),
                storage_class: None,
            },
            cpu: Some("1".into()),
        }
    }

    #[test]
    fn an_indexed_job_that_never_resends_a_shard_and_a_merge() {
        let docs = documents(&spec());
        assert_eq!(docs.len(), 3);
        let job = &docs[1]["spec"];
        assert_eq!(job["completionMode"], "Indexed");
        assert_eq!(
            (job["completions"].as_u64(), job["parallelism"].as_u64()),
            (Some(4), Some(4))
        );
        assert_eq!(job["backoffLimitPerIndex"], 0);
        let c = &job["template"]["spec"]["containers"][0];
        let script = c["command"][2].as_str().unwrap();
        assert!(
            script.contains("--shard \"$i/4\" --start-at 1800000000.500"),
            "{script}"
        );
        assert!(
            script.contains("--out \"/results/iolab-demo-1800000000/shard-$i.json\""),
            "{script}"
        );
        assert_eq!(c["command"][4], "http://svc:8080/work?steps=sleep:100");
        let merge = &docs[2]["spec"]["template"]["spec"]["containers"][0]["command"];
        assert_eq!(merge[3], "--wait");
        assert_eq!(merge[4], "300s");
        let text = manifest(&spec());
        assert_eq!(text.matches("\n---\n").count(), 2);
        let existing = JobSpec {
            claim: Claim::Existing("shared".into()),
            ..spec()
        };
        assert_eq!(documents(&existing).len(), 2);
    }
}
