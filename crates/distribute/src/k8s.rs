//! Kubernetes: an Indexed Job whose completion index picks the shard, and a report Job.
//!
//! The manifests are typed structs serialised with serde_yaml (a subset of batch/v1 Job).
//! API keys are referenced through a Secret (`envFrom: secretRef`), never written here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, RunSpec, shell_join, shell_quote, write};

/// What the pods get besides the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct K8sOptions {
    /// The container image holding `bureau` (and the suites, unless they are on the volume).
    pub image: String,
    /// The PersistentVolumeClaim holding the run directory (ReadWriteMany for several nodes).
    pub pvc: Option<String>,
    /// Where the claim is mounted in each pod.
    pub mount: String,
    /// A Secret whose keys become environment variables (API keys, by reference).
    pub secret: Option<String>,
    /// CPU request and limit per pod (e.g. `2`, `500m`).
    pub cpu: Option<String>,
    /// Memory request and limit per pod (e.g. `4Gi`).
    pub memory: Option<String>,
    /// The namespace of the Jobs.
    pub namespace: Option<String>,
    /// Pods at once [default: every shard].
    pub parallelism: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: JobSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_mode: Option<String>,
    pub completions: u32,
    pub parallelism: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit_per_index: Option<u32>,
    pub template: PodTemplate,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplate {
    pub metadata: PodMeta,
    pub spec: PodSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodMeta {
    pub labels: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    pub restart_policy: String,
    pub containers: Vec<Container>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    pub name: String,
    pub image: String,
    pub command: Vec<String>,
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_from: Vec<EnvFrom>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_mounts: Vec<VolumeMount>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvFrom {
    pub secret_ref: SecretRef,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecretRef {
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    pub requests: BTreeMap<String, String>,
    pub limits: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMount {
    pub name: String,
    pub mount_path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    pub name: String,
    pub persistent_volume_claim: PvcSource,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PvcSource {
    pub claim_name: String,
}

const VOLUME: &str = "runs";

fn check(spec: &RunSpec, opts: &K8sOptions) -> Result<(), Error> {
    spec.check()?;
    if opts.image.trim().is_empty() {
        return Err(Error::Input(
            "--image: the container image holding bureau is required".into(),
        ));
    }
    if opts.parallelism == Some(0) {
        return Err(Error::Input(
            "--parallelism 0: at least one pod must run".into(),
        ));
    }
    if opts.pvc.is_some() && !opts.mount.starts_with('/') {
        return Err(Error::Input(format!(
            "--mount {}: the claim's mount path must be absolute",
            opts.mount
        )));
    }
    Ok(())
}

fn container(opts: &K8sOptions, name: &str, script: String) -> Container {
    let mut resources = BTreeMap::new();
    if let Some(c) = &opts.cpu {
        resources.insert("cpu".to_string(), c.clone());
    }
    if let Some(m) = &opts.memory {
        resources.insert("memory".to_string(), m.clone());
    }
    Container {
        name: name.into(),
        image: opts.image.clone(),
        command: vec!["sh".into(), "-c".into()],
        args: vec![script],
        env_from: opts
            .secret
            .iter()
            .map(|s| EnvFrom {
                secret_ref: SecretRef { name: s.clone() },
            })
            .collect(),
        resources: (!resources.is_empty()).then(|| Resources {
            requests: resources.clone(),
            limits: resources,
        }),
        volume_mounts: opts
            .pvc
            .iter()
            .map(|_| VolumeMount {
                name: VOLUME.into(),
                mount_path: opts.mount.clone(),
            })
            .collect(),
    }
}

fn job(spec: &RunSpec, opts: &K8sOptions, name: String, indexed: bool, script: String) -> Job {
    let labels: BTreeMap<String, String> =
        [("app.kubernetes.io/name".to_string(), "bureau".to_string())].into();
    let mut pod_labels = labels.clone();
    pod_labels.insert("bureau/job".into(), name.clone());
    let (completions, parallelism) = if indexed {
        (
            spec.shards,
            opts.parallelism.unwrap_or(spec.shards).min(spec.shards),
        )
    } else {
        (1, 1)
    };
    Job {
        api_version: "batch/v1".into(),
        kind: "Job".into(),
        metadata: ObjectMeta {
            name: name.clone(),
            namespace: opts.namespace.clone(),
            labels,
        },
        spec: JobSpec {
            completion_mode: indexed.then(|| "Indexed".to_string()),
            completions,
            parallelism,
            // Indexed: each shard retried on its own (Kubernetes 1.29+); a retry resumes the
            // shard's missing trials.
            backoff_limit: (!indexed).then_some(2),
            backoff_limit_per_index: indexed.then_some(2),
            template: PodTemplate {
                metadata: PodMeta { labels: pod_labels },
                spec: PodSpec {
                    restart_policy: "Never".into(),
                    containers: vec![container(opts, "bureau", script)],
                    volumes: opts
                        .pvc
                        .iter()
                        .map(|claim| Volume {
                            name: VOLUME.into(),
                            persistent_volume_claim: PvcSource {
                                claim_name: claim.clone(),
                            },
                        })
                        .collect(),
                },
            },
        },
    }
}

/// The Indexed Job: pod with completion index I runs shard I+1 of N.
pub fn shards_job(spec: &RunSpec, opts: &K8sOptions) -> Result<Job, Error> {
    check(spec, opts)?;
    let mut cmd = vec![spec.bureau.clone()];
    cmd.extend(spec.run_args());
    let script = format!(
        "exec {} --shard \"$((JOB_COMPLETION_INDEX + 1))/{}\" --quiet",
        shell_join(&cmd),
        spec.shards
    );
    Ok(job(spec, opts, spec.job_name(), true, script))
}

/// The report Job (apply it once the shards' Job is complete).
pub fn report_job(spec: &RunSpec, opts: &K8sOptions) -> Result<Job, Error> {
    check(spec, opts)?;
    let script = format!(
        "exec {} report {} --html",
        shell_quote(&spec.bureau),
        shell_quote(&spec.out)
    );
    Ok(job(
        spec,
        opts,
        format!("{}-report", spec.job_name()),
        false,
        script,
    ))
}

/// The two manifests of a sharded run, and where they were written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct K8sFiles {
    pub job: PathBuf,
    pub report: PathBuf,
    pub job_text: String,
    pub report_text: String,
}

/// Writes `<dir>/job.yaml` and `<dir>/report.yaml`.
pub fn write_manifests(spec: &RunSpec, opts: &K8sOptions, dir: &Path) -> Result<K8sFiles, Error> {
    let job_text = serde_yaml::to_string(&shards_job(spec, opts)?)?;
    let report_text = serde_yaml::to_string(&report_job(spec, opts)?)?;
    let files = K8sFiles {
        job: dir.join("job.yaml"),
        report: dir.join("report.yaml"),
        job_text,
        report_text,
    };
    write(&files.job, &files.job_text)?;
    write(&files.report, &files.report_text)?;
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{spec, words_via_sh};
    use serde_yaml::Value;

    fn opts() -> K8sOptions {
        K8sOptions {
            image: "registry.example/bureau:1.0".into(),
            pvc: Some("bureau-runs".into()),
            mount: "/runs".into(),
            secret: Some("model-keys".into()),
            cpu: Some("2".into()),
            memory: Some("4Gi".into()),
            namespace: Some("evals".into()),
            parallelism: None,
        }
    }

    fn get<'a>(v: &'a Value, path: &str) -> &'a Value {
        let mut cur = v;
        for key in path.split('.') {
            cur = match key.parse::<usize>() {
                Ok(i) => &cur[i],
                Err(_) => &cur[key],
            };
            assert!(!cur.is_null(), "{path}: no {key} in\n{v:?}");
        }
        cur
    }

    #[test]
    fn the_indexed_job_has_the_batch_v1_shape() {
        // A key set in this process's environment must not reach the manifest.
        let secret_value = "sk-test-bureau-must-never-appear-0123456789";
        // SAFETY: no other test of this crate reads or writes the environment.
        unsafe { std::env::set_var("OPENAI_API_KEY", secret_value) };
        let tmp = tempfile::tempdir().unwrap();
        let mut sp = spec("/runs/sweep");
        sp.bureau = "bureau".into();
        let files = write_manifests(&sp, &opts(), tmp.path()).unwrap();
        let text = std::fs::read_to_string(&files.job).unwrap();
        assert!(!text.contains(secret_value));
        assert!(!files.report_text.contains(secret_value));
        let v: Value = serde_yaml::from_str(&text).unwrap();
        // The Job schema's required fields and what we rely on.
        assert_eq!(get(&v, "apiVersion"), "batch/v1");
        assert_eq!(get(&v, "kind"), "Job");
        assert_eq!(get(&v, "metadata.name"), "bureau-sweep");
        assert_eq!(get(&v, "metadata.namespace"), "evals");
        assert_eq!(get(&v, "spec.completionMode"), "Indexed");
        assert_eq!(get(&v, "spec.completions"), 4);
        assert_eq!(get(&v, "spec.parallelism"), 4);
        let pod = get(&v, "spec.template.spec");
        assert_eq!(get(pod, "restartPolicy"), "Never");
        let c = get(pod, "containers.0");
        assert_eq!(get(c, "name"), "bureau");
        assert_eq!(get(c, "image"), "registry.example/bureau:1.0");
        assert_eq!(
            get(c, "command"),
            &serde_yaml::to_value(["sh", "-c"]).unwrap()
        );
        let script = get(c, "args.0").as_str().unwrap();
        assert!(
            script.contains("$((JOB_COMPLETION_INDEX + 1))/4"),
            "{script}"
        );
        // Index 2 is shard 3/4, as a shell expands it.
        let line = script
            .strip_prefix("exec ")
            .unwrap()
            .replace("$((JOB_COMPLETION_INDEX + 1))", "$((2 + 1))");
        let words = words_via_sh(&line);
        assert_eq!(
            words,
            [
                "bureau",
                "run",
                "suites/starter",
                "--agent",
                "oracle",
                "--agent",
                "null",
                "--epochs",
                "3",
                "--out",
                "/runs/sweep",
                "--shard",
                "3/4",
                "--quiet"
            ]
        );
        // The claim is a volume, mounted where --out points.
        assert_eq!(get(pod, "volumes.0.name"), "runs");
        assert_eq!(
            get(pod, "volumes.0.persistentVolumeClaim.claimName"),
            "bureau-runs"
        );
        assert_eq!(get(c, "volumeMounts.0.name"), "runs");
        assert_eq!(get(c, "volumeMounts.0.mountPath"), "/runs");
        // Keys by reference only: envFrom a Secret, no `env` values at all.
        assert_eq!(get(c, "envFrom.0.secretRef.name"), "model-keys");
        assert!(c.get("env").is_none());
        assert_eq!(get(c, "resources.requests.cpu"), "2");
        assert_eq!(get(c, "resources.limits.memory"), "4Gi");
        // The text round-trips through the typed structs.
        let typed: Job = serde_yaml::from_str(&text).unwrap();
        assert_eq!(typed, shards_job(&sp, &opts()).unwrap());

        let r: Value = serde_yaml::from_str(&files.report_text).unwrap();
        assert_eq!(get(&r, "kind"), "Job");
        assert_eq!(get(&r, "spec.completions"), 1);
        assert!(r["spec"].get("completionMode").is_none());
        let rs = get(&r, "spec.template.spec.containers.0.args.0")
            .as_str()
            .unwrap();
        assert_eq!(rs, "exec bureau report /runs/sweep --html");
    }

    #[test]
    fn bad_input_is_refused() {
        let sp = spec("/runs/x");
        let mut o = opts();
        o.image = String::new();
        assert!(shards_job(&sp, &o).is_err());
        let mut o = opts();
        o.mount = "runs".into();
        assert!(shards_job(&sp, &o).is_err());
        let mut o = opts();
        o.parallelism = Some(0);
        assert!(shards_job(&sp, &o).is_err());
        let mut o = opts();
        o.parallelism = Some(2);
        assert_eq!(shards_job(&sp, &o).unwrap().spec.parallelism, 2);
    }
}
