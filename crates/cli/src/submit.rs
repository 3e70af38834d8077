//! `bureau submit slurm|k8s`: a sharded run through Slurm or Kubernetes (bureau-distribute).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use bureau_distribute::{Error as DistError, RunSpec, k8s, slurm};
use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum SubmitCommand {
    /// Write a Slurm job array (one element per shard, each `bureau run --shard K/N`) and a report job that waits for it into <OUT>/slurm/, then submit both with sbatch (--dry-run: print them instead).
    Slurm(SlurmArgs),
    /// Write a Kubernetes Indexed Job (completion index → shard) and a report Job into <OUT>/k8s/ for `kubectl apply -f`. Nothing is applied.
    K8s(K8sArgs),
}

/// The run every shard does (as for `bureau run`).
#[derive(Debug, Args)]
pub struct SubmitRunArgs {
    /// Suite or task directories (`suite@subset` for a named subset), on storage every node sees.
    #[arg(required = true, value_name = "SUITE_OR_TASK")]
    targets: Vec<String>,
    /// Agent to run, as for `bureau run --agent`. Repeatable.
    #[arg(long = "agent", required = true, value_name = "KIND")]
    agents: Vec<String>,
    /// Agents file (agents.toml) declaring named agents.
    #[arg(long, value_name = "FILE")]
    agents_file: Option<PathBuf>,
    /// The model of `llm` (provider:model).
    #[arg(long, value_name = "PROVIDER:MODEL")]
    model: Option<String>,
    /// LLM judge of rubric items written `judge = "..."`.
    #[arg(long, value_name = "PROVIDER:MODEL")]
    judge: Option<String>,
    /// Instances per parametrised task.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    variants: Option<u32>,
    /// The variant seed the instances are drawn from.
    #[arg(long, value_name = "SEED")]
    variant_seed: Option<u64>,
    /// Epochs (repetitions of each task × agent).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    epochs: u32,
    /// Trials at once within each shard.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    concurrency: u32,
    /// At most N trials of one agent at once over ALL shards together: N or SPEC=N (repeatable); each shard takes its part (as for `bureau run`).
    #[arg(long, value_name = "[SPEC=]N", value_parser = crate::limits::parse_agent_limit)]
    agent_concurrency: Vec<(Option<String>, u32)>,
    /// At most N model requests per minute from one agent over ALL shards together: N or SPEC=N (repeatable); each shard takes its part.
    #[arg(long, value_name = "[SPEC=]N", value_parser = crate::limits::parse_agent_limit)]
    rpm: Vec<(Option<String>, u32)>,
    /// Extra attempts for a trial whose harness failed (as for `bureau run`).
    #[arg(long, value_name = "N")]
    retries: Option<u32>,
    /// Any other `bureau run` option, passed to every shard verbatim (repeatable; e.g. --run-arg=--feedback --run-arg=1).
    #[arg(long = "run-arg", value_name = "ARG", allow_hyphen_values = true)]
    run_args: Vec<String>,
    /// The run directory every shard writes into, on shared storage (NFS or a cluster file system).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Shards: the run's trials are split into N parts, one job (array element or pod) each.
    #[arg(long, value_name = "N")]
    shards: u32,
    /// Write and print the files, submit nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, Args)]
pub struct SlurmArgs {
    #[command(flatten)]
    run: SubmitRunArgs,
    /// The bureau binary the nodes run [default: this program's absolute path].
    #[arg(long, value_name = "PATH")]
    bureau: Option<PathBuf>,
    /// sbatch --partition.
    #[arg(long, value_name = "P")]
    partition: Option<String>,
    /// sbatch --time: each shard's time limit (e.g. 4:00:00).
    #[arg(long, value_name = "T")]
    time: Option<String>,
    /// sbatch --cpus-per-task.
    #[arg(long, value_name = "C")]
    cpus: Option<u32>,
    /// sbatch --mem (e.g. 8G).
    #[arg(long, value_name = "M")]
    mem: Option<String>,
    /// Another sbatch option for both jobs, one #SBATCH line each (repeatable; e.g. --sbatch-arg=--account=lab).
    #[arg(long = "sbatch-arg", value_name = "ARG", allow_hyphen_values = true)]
    sbatch_args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct K8sArgs {
    #[command(flatten)]
    run: SubmitRunArgs,
    /// The container image holding bureau (and the suites, unless they are on the volume).
    #[arg(long, value_name = "IMAGE")]
    image: String,
    /// The bureau program inside the image.
    #[arg(long, value_name = "PATH", default_value = "bureau")]
    bureau: String,
    /// The PersistentVolumeClaim holding the run directory (ReadWriteMany when pods spread over nodes).
    #[arg(long, value_name = "NAME")]
    pvc: Option<String>,
    /// Where the claim is mounted in each pod; the pods' run directory is <MOUNT>/<last component of --out>.
    #[arg(long, value_name = "PATH", default_value = "/runs")]
    mount: String,
    /// A Secret whose keys become the pods' environment variables (API keys by reference, never inline).
    #[arg(long, value_name = "NAME")]
    secret: Option<String>,
    /// CPU request and limit per pod (e.g. 2 or 500m).
    #[arg(long, value_name = "CPU")]
    cpu: Option<String>,
    /// Memory request and limit per pod (e.g. 4Gi).
    #[arg(long, value_name = "MEM")]
    memory: Option<String>,
    /// The Jobs' namespace.
    #[arg(long, value_name = "NS")]
    namespace: Option<String>,
    /// Pods at once [default: --shards].
    #[arg(long, value_name = "N")]
    parallelism: Option<u32>,
}

fn path_text(p: &Path, what: &str) -> anyhow::Result<String> {
    p.to_str()
        .map(String::from)
        .with_context(|| format!("{what} {}: not valid UTF-8", p.display()))
}

/// A target made absolute when it names an existing local path (`dir@subset` keeps its subset).
fn absolute_target(t: &str) -> String {
    let (path, subset) = match t.rsplit_once('@') {
        Some((p, s)) if !Path::new(t).exists() => (p, Some(s)),
        _ => (t, None),
    };
    let abs = match std::path::absolute(path) {
        Ok(abs) if Path::new(path).exists() => abs.to_string_lossy().into_owned(),
        _ => path.to_string(),
    };
    match subset {
        Some(s) => format!("{abs}@{s}"),
        None => abs,
    }
}

/// Refuses targets that do not load, as `bureau run` would, before anything is written.
fn check_targets(run: &SubmitRunArgs) -> anyhow::Result<()> {
    let plan = bureau_variants::Plan {
        count: run.variants.unwrap_or(1),
        seed: run.variant_seed,
    };
    bureau_run::load_with_checks(&run.targets, &plan)?;
    Ok(())
}

fn spec(
    run: &SubmitRunArgs,
    bureau: String,
    out: String,
    absolute: bool,
) -> anyhow::Result<RunSpec> {
    let mut options = vec![];
    if let Some(f) = &run.agents_file {
        let f = if absolute {
            std::path::absolute(f).unwrap_or_else(|_| f.clone())
        } else {
            f.clone()
        };
        options.push("--agents-file".to_string());
        options.push(path_text(&f, "--agents-file")?);
    }
    let mut push = |flag: &str, v: Option<String>| {
        if let Some(v) = v {
            options.push(flag.to_string());
            options.push(v);
        }
    };
    push("--model", run.model.clone());
    push("--judge", run.judge.clone());
    push("--variants", run.variants.map(|v| v.to_string()));
    push("--variant-seed", run.variant_seed.map(|v| v.to_string()));
    push("--epochs", Some(run.epochs.to_string()));
    push("--concurrency", Some(run.concurrency.to_string()));
    push("--retries", run.retries.map(|v| v.to_string()));
    for (flag, limits) in [
        ("--agent-concurrency", &run.agent_concurrency),
        ("--rpm", &run.rpm),
    ] {
        for (spec, n) in limits {
            push(
                flag,
                Some(match spec {
                    Some(s) => format!("{s}={n}"),
                    None => n.to_string(),
                }),
            );
        }
    }
    options.extend(run.run_args.iter().cloned());
    let targets = if absolute {
        run.targets.iter().map(|t| absolute_target(t)).collect()
    } else {
        run.targets.clone()
    };
    Ok(RunSpec {
        bureau,
        targets,
        agents: run.agents.clone(),
        run_options: options,
        out,
        shards: run.shards,
    })
}

fn absolute_out(run: &SubmitRunArgs) -> anyhow::Result<PathBuf> {
    std::path::absolute(&run.out).with_context(|| format!("--out {}", run.out.display()))
}

pub fn cmd_submit(cmd: SubmitCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        SubmitCommand::Slurm(a) => cmd_slurm(a),
        SubmitCommand::K8s(a) => cmd_k8s(a),
    }
}

fn bad_input(e: DistError) -> anyhow::Result<ExitCode> {
    eprintln!("error: {e}");
    Ok(ExitCode::from(crate::EXIT_BAD_INPUT))
}

fn cmd_slurm(a: SlurmArgs) -> anyhow::Result<ExitCode> {
    let out = absolute_out(&a.run)?;
    let bureau = match &a.bureau {
        Some(b) => std::path::absolute(b).with_context(|| format!("--bureau {}", b.display()))?,
        None => std::env::current_exe().context("finding this program's path for --bureau")?,
    };
    let spec = spec(
        &a.run,
        path_text(&bureau, "--bureau")?,
        path_text(&out, "--out")?,
        true,
    )?;
    if let Err(e) = spec.check() {
        return bad_input(e);
    }
    check_targets(&a.run)?;
    if !a.run.dry_run && !slurm::sbatch_available() {
        return bad_input(DistError::NoSbatch);
    }
    let opts = slurm::SlurmOptions {
        partition: a.partition,
        time: a.time,
        cpus: a.cpus,
        mem: a.mem,
        extra: a.sbatch_args,
    };
    let files = match slurm::write_scripts(&spec, &opts) {
        Ok(f) => f,
        Err(e @ DistError::Input(_)) => return bad_input(e),
        Err(e) => return Err(e.into()),
    };
    if a.run.dry_run {
        println!("# {}", files.shards.display());
        print!("{}", files.shards_text);
        println!();
        println!("# {}", files.report.display());
        print!("{}", files.report_text);
        eprintln!(
            "dry run: nothing submitted. To submit: cd {} && id=$(sbatch --parsable slurm/shards.sbatch) && sbatch --dependency=afterany:$id slurm/report.sbatch",
            bureau_distribute::shell_quote(&spec.out)
        );
        return Ok(ExitCode::SUCCESS);
    }
    let ids = match slurm::submit(&spec, &files) {
        Ok(ids) => ids,
        Err(e @ DistError::NoSbatch) => return bad_input(e),
        Err(e) => return Err(e.into()),
    };
    println!("shards: job {} (array 1-{})", ids.array, spec.shards);
    println!("report: job {} (after the array)", ids.report);
    eprintln!(
        "follow with: squeue -j {},{}   and   {} status {}",
        ids.array,
        ids.report,
        bureau_distribute::shell_quote(&spec.bureau),
        bureau_distribute::shell_quote(&spec.out)
    );
    Ok(ExitCode::SUCCESS)
}

fn cmd_k8s(a: K8sArgs) -> anyhow::Result<ExitCode> {
    let local = absolute_out(&a.run)?;
    let name = local
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into());
    // Inside the pods the run directory is on the claim.
    let pod_out = format!("{}/{name}", a.mount.trim_end_matches('/'));
    let spec = spec(&a.run, a.bureau.clone(), pod_out, false)?;
    if let Err(e) = spec.check() {
        return bad_input(e);
    }
    check_targets(&a.run)?;
    let opts = k8s::K8sOptions {
        image: a.image,
        pvc: a.pvc,
        mount: a.mount,
        secret: a.secret,
        cpu: a.cpu,
        memory: a.memory,
        namespace: a.namespace,
        parallelism: a.parallelism,
    };
    let files = match k8s::write_manifests(&spec, &opts, &local.join("k8s")) {
        Ok(f) => f,
        Err(e @ DistError::Input(_)) => return bad_input(e),
        Err(e) => return Err(e.into()),
    };
    if a.run.dry_run {
        println!("# {}", files.job.display());
        print!("{}", files.job_text);
        println!("---");
        println!("# {}", files.report.display());
        print!("{}", files.report_text);
    }
    let ns = opts
        .namespace
        .as_deref()
        .map(|n| format!(" -n {}", bureau_distribute::shell_quote(n)))
        .unwrap_or_default();
    eprintln!(
        "wrote {} and {}",
        files.job.display(),
        files.report.display()
    );
    eprintln!(
        "next: kubectl apply{ns} -f {job} && kubectl wait{ns} --for=condition=complete --timeout=24h job/{name} ; kubectl apply{ns} -f {report}",
        job = bureau_distribute::shell_quote(&files.job.to_string_lossy()),
        report = bureau_distribute::shell_quote(&files.report.to_string_lossy()),
        name = spec.job_name(),
    );
    Ok(ExitCode::SUCCESS)
}
