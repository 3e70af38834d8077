//! Shards of one run (`--shard K/N`) writing into one run directory: together they make
//! exactly the run one process makes; resumes run only what is missing; inconsistent shards
//! are refused with the difference named.

use std::path::{Path, PathBuf};

use bureau_run::{RunConfig, RunError, Shard};

fn lite() -> String {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/starter");
    format!("{}@lite", suite.display())
}

fn config(out: &Path, shard: Option<Shard>) -> RunConfig {
    let mut c = RunConfig::new(
        vec![lite()],
        vec!["oracle".into(), "null".into()],
        out.to_path_buf(),
    );
    c.epochs = 2;
    c.quiet = true;
    c.shard = shard;
    c
}

fn shard(k: u32, n: u32) -> Option<Shard> {
    Some(Shard { k, n })
}

/// Every verdicts.json under `out`, by path relative to it.
fn verdicts(out: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![out.join("trials")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                if e.file_name() != "attempts" {
                    stack.push(e.path());
                }
            } else if e.file_name() == "verdicts.json" {
                found.push((
                    e.path().strip_prefix(out).unwrap().to_path_buf(),
                    std::fs::read(e.path()).unwrap(),
                ));
            }
        }
    }
    found.sort();
    found
}

fn summary_without_times(out: &Path) -> serde_json::Value {
    let mut s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    for a in s["agents"].as_object_mut().unwrap().values_mut() {
        a.as_object_mut().unwrap().remove("wall_seconds_mean");
    }
    s
}

#[test]
fn three_shards_at_once_make_the_run_one_process_makes() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let sharded = tmp.path().join("sharded");
    bureau_run::run(&config(&whole, None)).unwrap();

    // Three shards started together on one directory: one writes run.json, the others compare.
    let outcomes: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..=3)
            .map(|k| {
                let c = config(&sharded, shard(k, 3));
                s.spawn(move || bureau_run::run(&c).unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // 4 tasks × 2 agents × 2 epochs, each trial in exactly one shard.
    assert_eq!(outcomes.iter().map(|o| o.ran).sum::<usize>(), 16);
    assert!(
        outcomes.iter().all(|o| o.ran >= 4),
        "balanced: {:?}",
        outcomes.iter().map(|o| o.ran).collect::<Vec<_>>()
    );
    // No shard wrote the run's summary: that is `bureau report`'s.
    assert!(!sharded.join("summary.json").exists());
    let status = bureau_run::status::status(&sharded).unwrap();
    assert!(status.complete, "{}", status.render());
    assert_eq!(status.shards.len(), 3);
    bureau_run::write_summary(&sharded).unwrap();

    assert_eq!(verdicts(&whole), verdicts(&sharded));
    assert_eq!(
        summary_without_times(&whole),
        summary_without_times(&sharded)
    );

    // A finished shard run again does nothing.
    let again = bureau_run::run(&config(&sharded, shard(2, 3))).unwrap();
    assert_eq!(again.ran, 0);

    // A lost shard: its trials' results are gone; running it again does only those.
    let lost: Vec<PathBuf> = verdicts(&sharded)
        .into_iter()
        .map(|(p, _)| sharded.join(p).with_file_name("result.json"))
        .take(3)
        .collect();
    for p in &lost {
        std::fs::remove_file(p).unwrap();
    }
    let mut rerun = 0;
    for k in 1..=3 {
        rerun += bureau_run::run(&config(&sharded, shard(k, 3))).unwrap().ran;
    }
    assert_eq!(rerun, lost.len());
    bureau_run::write_summary(&sharded).unwrap();
    assert_eq!(verdicts(&whole), verdicts(&sharded));
}

#[test]
fn shards_that_disagree_are_refused_with_the_difference_named() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    bureau_run::run(&config(&out, shard(1, 2))).unwrap();
    let refused = |c: RunConfig| match bureau_run::run(&c) {
        Err(RunError::OtherRun { what, .. }) => what,
        other => panic!("not refused: {other:?}"),
    };
    let mut c = config(&out, shard(2, 2));
    c.agents = vec!["oracle".into()];
    assert!(refused(c).contains("agents"));
    let mut c = config(&out, shard(2, 2));
    c.epochs = 3;
    assert!(refused(c).contains("epoch"));
    assert!(refused(config(&out, shard(1, 3))).contains("2 shards, not 3"));
    // Without --shard, adding epochs would move trials between shards: refused too.
    let mut c = config(&out, None);
    c.epochs = 3;
    assert!(refused(c).contains("split into 2 shards"));
    // The agents in another order are the same shard.
    let mut c = config(&out, shard(2, 2));
    c.agents.reverse();
    let o = bureau_run::run(&c).unwrap();
    assert!(o.ran > 0);
    assert!(bureau_run::status::status(&out).unwrap().complete);
}

/// Every result.json under `out`, counting those left in attempt directories too.
fn results(out: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![out.join("trials")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else if e.file_name() == "result.json" {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn one_shard_started_twice_at_once_plays_each_trial_once() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    // Shard 1 of 2, started twice (a requeued array element whose first instance still
    // runs): the claims let each trial be played by exactly one of them.
    let outcomes: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let mut c = config(&out, shard(1, 2));
                c.concurrency = 2;
                s.spawn(move || bureau_run::run(&c).unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let status = bureau_run::status::status(&out).unwrap();
    let mine = status.shards[0].trials;
    let played: usize = outcomes.iter().map(|o| o.ran).sum();
    let held: usize = outcomes.iter().map(|o| o.held_elsewhere).sum();
    let skipped: usize = outcomes.iter().map(|o| o.skipped).sum();
    assert_eq!(played, mine, "each trial played once: {outcomes:?}");
    assert_eq!(played + held + skipped, 2 * mine);
    assert_eq!(status.shards[0].done, mine);
    assert_eq!(results(&out), mine, "no trial has two results");
    // No claim is left behind.
    assert_eq!(status.shards[0].running, 0);
}

#[test]
fn a_claim_left_by_a_killed_process_does_not_block_the_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    bureau_run::run(&config(&out, None)).unwrap();
    // A trial whose process died mid-run (kill -9): no result, its claim file still there.
    let (first, _) = verdicts(&out).into_iter().next().unwrap();
    let trial = out.join(first).parent().unwrap().to_path_buf();
    let before = std::fs::read(trial.join("verdicts.json")).unwrap();
    std::fs::remove_file(trial.join("result.json")).unwrap();
    let host = bureau_run::claim::host();
    let dead = bureau_run::claim::ClaimRecord {
        host: host.clone(),
        pid: 4_194_305, // above any pid_max: no such process
        generation: 1,
    };
    bureau_run::rundir::write_json(&trial.join("claim.1.json"), &dead).unwrap();
    let status = bureau_run::status::status(&out).unwrap();
    assert_eq!(status.shards[0].running, 0, "a dead process is not running");
    assert_eq!(status.shards[0].started, 1);
    // A live claim from another machine is honoured (it is running there)…
    let elsewhere = bureau_run::claim::ClaimRecord {
        host: format!("{host}-other"),
        pid: 1,
        generation: 2,
    };
    bureau_run::rundir::write_json(&trial.join("claim.2.json"), &elsewhere).unwrap();
    let held = bureau_run::run(&config(&out, None)).unwrap();
    assert_eq!((held.ran, held.held_elsewhere), (0, 1));
    assert_eq!(
        bureau_run::status::status(&out).unwrap().shards[0].running,
        1
    );
    // …until it goes stale; then the resume takes it over and plays it once.
    let mut c = config(&out, None);
    c.claim_stale_after = std::time::Duration::ZERO;
    let resumed = bureau_run::run(&c).unwrap();
    assert_eq!((resumed.ran, resumed.held_elsewhere), (1, 0));
    assert_eq!(std::fs::read(trial.join("verdicts.json")).unwrap(), before);
    let left: Vec<_> = std::fs::read_dir(&trial)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("claim."))
        .collect();
    assert!(
        left.is_empty(),
        "claims are removed once the result is written"
    );
}
