//! A `command:` harness on a trial whose workspace is an overlay replica runs *inside* the
//! replica's namespaces: its working directory is the merged directory as seen inside (what
//! `pwd` prints), its files land in the replica, and its process group is still killed when
//! the turn ends.

#[path = "../../run/tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bureau_agents::harness::HarnessDef;
use bureau_agents::{Agent, Recorder, ToolSession, TurnInput, TurnLimits};
use bureau_core::task::Task;
use bureau_harness::CommandAgent;
use bureau_replica::{Backend, Baseline, Pool, PoolOptions};
use bureau_world::World;

use common::*;

fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s[s.rfind(')').unwrap() + 1..].trim_start().starts_with('Z'),
    }
}

#[test]
fn a_command_harness_runs_inside_the_replica_it_works_on() {
    let dir = tempfile::tempdir().unwrap();
    let task_dir = dir.path().join("memo");
    write_memo_task(&task_dir, "memo");
    let task = Task::load(&task_dir).unwrap();
    let mut world = World::build(&task, &dir.path().join("world")).unwrap();
    world.begin_turn(&task.turns[0]).unwrap();

    // The replica of the built workspace; the world is told to run processes in it.
    let baseline = Arc::new(Baseline::open(world.workspace()).unwrap());
    let pool = Pool::new(
        Arc::clone(&baseline),
        PoolOptions {
            capacity: 1,
            backend: Backend::Overlay,
            dir: Some(dir.path().join("pool")),
        },
    )
    .unwrap_or_else(|e| panic!("needs overlay replicas: {e}"));
    let mut lease = pool.acquire().unwrap();
    let entry = Arc::new(lease.entry().unwrap().unwrap());
    let inner = entry.inner_path().display().to_string();
    world.set_workspace_entry(Some(Arc::clone(&entry)));
    let world = Arc::new(Mutex::new(world));

    let pid_file = dir.path().join("background.pid");
    let def = HarnessDef {
        command: Some(vec![
            "sh".into(),
            "-c".into(),
            format!(
                "pwd; echo '{{workspace}}'; cat readme.txt; echo from-harness > made.txt; \
                 sleep 300 & echo $! > {}",
                pid_file.display()
            ),
        ]),
        format: Some("text".into()),
        env: BTreeMap::new(),
        ..HarnessDef::new("command")
    };
    let mut agent = CommandAgent::new("inside", def).unwrap();
    agent.start_trial(&task).unwrap();
    let recorder = Recorder::new();
    let session = ToolSession::new(
        Arc::clone(&world),
        recorder.clone(),
        1,
        TurnLimits {
            max_steps: 10,
            wall: Duration::from_secs(60),
        },
    );
    let t = &task.turns[0];
    let out = agent
        .run_turn(
            &TurnInput {
                index: 1,
                prompt: t.prompt.clone(),
                time: t.at,
                round: 0,
            },
            &session,
        )
        .unwrap();
    let text = out.final_message.clone().unwrap_or_default();
    let printed: Vec<&str> = text.lines().collect();
    assert_eq!(
        printed,
        [inner.as_str(), inner.as_str(), "Team folder."],
        "{out:?}"
    );

    // The file is in the replica (not in the world's own directory, nor the mount point).
    assert_eq!(
        std::fs::read_to_string(lease.path().join("made.txt")).unwrap(),
        "from-harness\n"
    );
    assert!(!entry.inner_path().join("made.txt").exists());
    let cs = lease.changes().unwrap();
    assert_eq!(cs.added, [std::path::PathBuf::from("made.txt")], "{cs:?}");

    // The harness's background child was killed with its process group at the end of the turn.
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while !gone(pid) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(gone(pid), "the background child {pid} outlived the turn");

    drop(agent);
    world.lock().unwrap().set_workspace_entry(None);
    drop(entry);
    lease.release().unwrap();
}
