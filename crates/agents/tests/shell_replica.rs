//! `shell_run` on a world whose workspace is an overlay replica: `ToolSession::
//! call_with_workspace` hands the tool the world's replica entry, and the command runs inside
//! the replica (its `pwd` is the merged directory as seen inside, its files land in the
//! replica). Needs the confined shell and unprivileged overlay mounts on this machine.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bureau_agents::llm::shell::{self, ShellSettings};
use bureau_agents::{Recorder, ToolSession, TurnLimits};
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_core::trajectory::StepKind;
use bureau_replica::{Backend, Baseline, Pool, PoolOptions};
use bureau_world::World;
use serde_json::json;
use support::*;

#[test]
fn shell_run_enters_the_replica_the_world_is_on() {
    let confined = shell::confinement()
        .unwrap_or_else(|e| panic!("this test needs the confined shell on this machine: {e}"));
    let tmp = tempfile::tempdir().unwrap();
    let task = Task::load(&write_hello_task(&tmp.path().join("hello"), 1, 10, 60)).unwrap();
    let mut world = World::build(&task, &tmp.path().join("world")).unwrap();
    world.begin_turn(&task.turns[0]).unwrap();
    let baseline = Arc::new(Baseline::open(world.workspace()).unwrap());
    let pool = Pool::new(
        baseline,
        PoolOptions {
            capacity: 1,
            backend: Backend::Overlay,
            dir: Some(tmp.path().join("pool")),
        },
    )
    .unwrap_or_else(|e| panic!("this test needs overlay replicas: {e}"));
    let mut lease = pool.acquire().unwrap();
    let entry = Arc::new(lease.entry().unwrap().unwrap());
    let inner = entry.inner_path().display().to_string();
    world.set_workspace_entry(Some(Arc::clone(&entry)));
    let world = Arc::new(Mutex::new(world));
    let recorder = Recorder::new();
    let tools = ToolSession::new(
        world,
        recorder.clone(),
        1,
        TurnLimits {
            max_steps: 10,
            wall: Duration::from_secs(60),
        },
    );
    let args = json!({"command": "pwd; echo hi > hello.txt; python3 -c 'import os; print(os.path.abspath(\"hello.txt\"))'"});
    let outcome = tools
        .call_with_workspace("shell_run", args, |args, ws| {
            assert!(ws.entry.is_some(), "the entry reaches the tool");
            shell::run(
                &confined,
                &ShellSettings::default(),
                args,
                ws.path,
                ws.entry,
                Duration::from_secs(30),
            )
        })
        .unwrap();
    let ToolOutcome::Ok { value, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(value["exit_code"], 0, "{value}");
    assert_eq!(
        value["stdout"],
        format!("{inner}\n{inner}/hello.txt\n"),
        "{value}"
    );
    assert_eq!(
        std::fs::read_to_string(lease.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    assert_eq!(
        lease.changes().unwrap().added,
        [std::path::PathBuf::from("hello.txt")]
    );
    let steps = recorder.steps();
    assert_eq!(steps.len(), 1);
    assert!(
        matches!(steps[0].kind, StepKind::ToolCall { .. }),
        "{steps:?}"
    );
    drop(tools);
    drop(entry);
    lease.release().unwrap();
}
