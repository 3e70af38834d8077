//! The office over MCP, from an MCP client's side (rmcp's client): HTTP trial endpoints with
//! their tokens, stdio framing, the bridge, and play mode.

// The task fixtures are shared with bureau-run's tests.
#[path = "../../run/tests/common/mod.rs"]
mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bureau_agents::{Recorder, ToolSession, TurnLimits};
use bureau_core::log::Actor;
use bureau_core::result::TrialStatus;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_core::trajectory::StepKind;
use bureau_core::verdict::{TurnRef, VerdictStatus};
use bureau_mcp::{NO_TURN, Office, PLAY_TOOLS, Play, TrialEndpoint, bridge_io};
use bureau_world::World;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tempfile::TempDir;

use common::*;

/// A memo task's world at the start of turn 1.
struct Trial {
    _dir: TempDir,
    task: Task,
    world: Arc<Mutex<World>>,
    recorder: Recorder,
}

fn trial(max_steps: u32) -> Trial {
    let dir = tempfile::tempdir().unwrap();
    write_memo_task_with(&dir.path().join("task"), "memo", max_steps, MEMO_SOLUTION_1);
    let task = Task::load(&dir.path().join("task")).unwrap();
    let mut world = World::build(&task, &dir.path().join("world")).unwrap();
    world.begin_turn(&task.turns[0]).unwrap();
    Trial {
        _dir: dir,
        task,
        world: Arc::new(Mutex::new(world)),
        recorder: Recorder::new(),
    }
}

impl Trial {
    fn session(&self, turn: u32) -> Arc<ToolSession> {
        Arc::new(ToolSession::new(
            self.world.clone(),
            self.recorder.clone(),
            turn,
            TurnLimits::from(&self.task.limits),
        ))
    }
}

async fn connect(url: &str, token: &str) -> RunningService<RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
    );
    ().serve(transport).await.unwrap()
}

fn call_params(tool: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().unwrap().clone())
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    client.call_tool(call_params(tool, args)).await.unwrap()
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The status of a raw `POST /mcp` (an MCP initialize) with the given Authorization header.
fn http_status(addr: SocketAddr, authorization: Option<&str>) -> u16 {
    http_status_as(addr, &addr.to_string(), authorization)
}

/// [`http_status`] with a chosen `Host` header.
fn http_status_as(addr: SocketAddr, host: &str, authorization: Option<&str>) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let auth = authorization
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n{auth}\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).unwrap();
    let line = String::from_utf8_lossy(&head).into_owned();
    line[9..12].parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_is_the_worlds_tool_specs() {
    let t = trial(100);
    let ep = TrialEndpoint::start(t.world.clone()).unwrap();
    let client = connect(&ep.url, &ep.token).await;
    let tools = client.list_all_tools().await.unwrap();
    let specs = World::tool_specs_for(&memo_apps());
    assert_eq!(tools.len(), specs.len());
    for (tool, spec) in tools.iter().zip(&specs) {
        assert_eq!(tool.name, spec.name);
        // Every world tool says what it does (MCP annotations), for harnesses' approval
        // policies.
        let a = tool.annotations.as_ref().unwrap();
        let want = spec.annotations.unwrap();
        assert_eq!(a.read_only_hint, Some(want.read_only_hint), "{}", tool.name);
        assert_eq!(
            a.destructive_hint,
            Some(want.destructive_hint),
            "{}",
            tool.name
        );
        assert_eq!(
            a.idempotent_hint,
            Some(want.idempotent_hint),
            "{}",
            tool.name
        );
        assert_eq!(a.open_world_hint, Some(false), "{}", tool.name);
        assert_eq!(tool.description.as_deref(), Some(spec.description.as_str()));
        assert_eq!(
            Value::Object((*tool.input_schema).clone()),
            spec.input_schema
        );
    }
    let by_name = |n: &str| tools.iter().find(|t| t.name == n).unwrap();
    let read = by_name("files_read").annotations.clone().unwrap();
    assert_eq!(read.read_only_hint, Some(true));
    let delete = by_name("files_delete").annotations.clone().unwrap();
    assert_eq!(
        (delete.read_only_hint, delete.destructive_hint),
        (Some(false), Some(true))
    );
    let send = by_name("mail_send").annotations.clone().unwrap();
    assert_eq!(
        (
            send.read_only_hint,
            send.destructive_hint,
            send.idempotent_hint
        ),
        (Some(false), Some(false), Some(false))
    );
    let info = client.peer_info().unwrap();
    let instructions = info.instructions.clone().unwrap();
    assert!(
        instructions.contains("Ada Admin <ada@corp.test>"),
        "{instructions}"
    );
    assert!(instructions.contains("Europe/Berlin"), "{instructions}");
    // the office's date and time, from the world's clock
    assert!(
        instructions.contains("Monday 2 March 2026, 09:00 (Europe/Berlin, UTC+01:00)"),
        "{instructions}"
    );
    client.cancel().await.unwrap();
    // A client connecting on a later day is told that day.
    t.world
        .lock()
        .unwrap()
        .begin_turn(&t.task.turns[1])
        .unwrap();
    let client = connect(&ep.url, &ep.token).await;
    let later = client.peer_info().unwrap().instructions.clone().unwrap();
    assert!(later.contains("Tuesday 3 March 2026"), "{later}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_recorded_in_the_trajectory_and_the_world_log() {
    let t = trial(100);
    let ep = TrialEndpoint::start(t.world.clone()).unwrap();
    ep.set_session(Some(t.session(1))).unwrap();
    let client = connect(&ep.url, &ep.token).await;

    let r = call(
        &client,
        "files_write",
        json!({"path": "memo.md", "content": "Friday.\n"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(
        r.structured_content,
        Some(json!({"path": "memo.md", "size": 8, "created": true}))
    );
    assert_eq!(text(&r), "created: true\npath: memo.md\nsize: 8");

    let steps = t.recorder.steps();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].turn, 1);
    let (tool, args, outcome) = steps[0].as_tool_call().unwrap();
    assert_eq!(tool, "files_write");
    assert_eq!(args, &json!({"path": "memo.md", "content": "Friday.\n"}));
    assert!(!outcome.is_error());

    {
        let w = t.world.lock().unwrap();
        let by_agent: Vec<_> = w.log().iter().filter(|e| e.actor == Actor::Agent).collect();
        assert_eq!(by_agent.len(), 1);
        assert_eq!(by_agent[0].service, "files");
        assert_eq!(by_agent[0].payload["path"], "memo.md");
        assert_eq!(
            std::fs::read_to_string(w.workspace().join("memo.md")).unwrap(),
            "Friday.\n"
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_errors_are_results_flagged_as_errors_and_also_recorded() {
    let t = trial(100);
    let ep = TrialEndpoint::start(t.world.clone()).unwrap();
    ep.set_session(Some(t.session(1))).unwrap();
    let client = connect(&ep.url, &ep.token).await;
    for (tool, args) in [
        ("files_read", json!({"path": "../outside.txt"})),
        ("files_read", json!({"path": "missing.txt"})),
        ("files_read", json!({"path": "readme.txt", "extra": 1})),
        ("no_such_tool", json!({})),
    ] {
        let r = call(&client, tool, args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{tool} {args}");
        assert!(!text(&r).is_empty());
        assert_eq!(r.structured_content, None);
    }
    assert_eq!(t.recorder.len(), 4);
    assert!(t.recorder.steps().iter().all(|s| matches!(
        &s.kind,
        StepKind::ToolCall {
            outcome: ToolOutcome::Error { .. },
            ..
        }
    )));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_between_turns_are_refused_and_not_recorded() {
    let t = trial(100);
    let ep = TrialEndpoint::start(t.world.clone()).unwrap();
    let client = connect(&ep.url, &ep.token).await;

    let before = call(&client, "files_list", json!({})).await;
    assert_eq!(before.is_error, Some(true));
    assert!(text(&before).starts_with(NO_TURN), "{}", text(&before));

    ep.set_session(Some(t.session(1))).unwrap();
    let during = call(&client, "files_list", json!({})).await;
    assert_eq!(during.is_error, Some(false), "{}", text(&during));

    ep.set_session(None).unwrap();
    let after = call(
        &client,
        "files_write",
        json!({"path": "x.txt", "content": "x"}),
    )
    .await;
    assert_eq!(after.is_error, Some(true));
    assert!(text(&after).starts_with(NO_TURN), "{}", text(&after));
    assert!(text(&after).contains("turn is over"), "{}", text(&after));

    assert_eq!(t.recorder.len(), 1, "only the call during the turn");
    assert!(!t.world.lock().unwrap().workspace().join("x.txt").exists());
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_reached_is_a_tool_error_naming_the_limit() {
    let t = trial(2);
    let ep = TrialEndpoint::start(t.world.clone()).unwrap();
    ep.set_session(Some(t.session(1))).unwrap();
    let client = connect(&ep.url, &ep.token).await;
    for _ in 0..2 {
        let r = call(&client, "files_list", json!({})).await;
        assert_eq!(r.is_error, Some(false));
    }
    for _ in 0..2 {
        let r = call(&client, "files_list", json!({})).await;
        assert_eq!(r.is_error, Some(true));
        assert!(
            text(&r).starts_with("max_steps limit reached"),
            "{}",
            text(&r)
        );
    }
    let limits: Vec<_> = t
        .recorder
        .steps()
        .into_iter()
        .filter(|s| matches!(s.kind, StepKind::LimitReached { .. }))
        .collect();
    assert_eq!(limits.len(), 1, "the first refusal is recorded once");
    client.cancel().await.unwrap();
}

#[test]
fn a_missing_or_wrong_token_is_refused_before_mcp() {
    let a = trial(100);
    let b = trial(100);
    let ep_a = TrialEndpoint::start(a.world.clone()).unwrap();
    let ep_b = TrialEndpoint::start(b.world.clone()).unwrap();
    assert_ne!(ep_a.token, ep_b.token);
    assert_ne!(ep_a.addr(), ep_b.addr());
    assert!(ep_a.addr().ip().is_loopback());

    assert_eq!(http_status(ep_a.addr(), None), 401);
    assert_eq!(http_status(ep_a.addr(), Some("Bearer ")), 401);
    assert_eq!(
        http_status(ep_a.addr(), Some(&format!("Basic {}", ep_a.token))),
        401
    );
    let mut wrong = ep_a.token.clone();
    wrong.replace_range(0..1, if wrong.starts_with('0') { "1" } else { "0" });
    assert_eq!(
        http_status(ep_a.addr(), Some(&format!("Bearer {wrong}"))),
        401
    );
    // One trial's token never opens another trial's endpoint.
    assert_eq!(http_status(ep_a.addr(), Some(&ep_b.authorization())), 401);
    assert_eq!(http_status(ep_b.addr(), Some(&ep_a.authorization())), 401);
    // The right token reaches MCP.
    assert_eq!(http_status(ep_a.addr(), Some(&ep_a.authorization())), 200);
    assert_eq!(http_status(ep_b.addr(), Some(&ep_b.authorization())), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_with_another_trials_token_cannot_connect() {
    let a = trial(100);
    let b = trial(100);
    let ep_a = TrialEndpoint::start(a.world.clone()).unwrap();
    let ep_b = TrialEndpoint::start(b.world.clone()).unwrap();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(ep_a.url.as_str())
            .auth_header(ep_b.token.as_str()),
    );
    assert!(().serve(transport).await.is_err());
}

#[test]
fn a_session_of_another_world_is_refused() {
    let a = trial(100);
    let b = trial(100);
    let ep = TrialEndpoint::start(a.world.clone()).unwrap();
    let err = ep.set_session(Some(b.session(1))).unwrap_err();
    assert!(matches!(err, bureau_mcp::McpError::ForeignSession), "{err}");
    assert!(ep.office().session().is_none());
    ep.set_session(Some(a.session(1))).unwrap();
    assert_eq!(ep.office().session().unwrap().turn(), 1);
}

#[test]
fn the_client_config_names_the_url_and_the_bearer_token() {
    let t = trial(100);
    let ep = TrialEndpoint::start(t.world.clone()).unwrap();
    assert!(ep.url.starts_with("http://127.0.0.1:"), "{}", ep.url);
    assert!(ep.url.ends_with("/mcp"));
    assert_eq!(
        ep.mcp_config_json(),
        json!({"mcpServers": {"bureau": {
            "type": "http",
            "url": ep.url,
            "headers": {"Authorization": format!("Bearer {}", ep.token)}
        }}})
    );
    assert!(
        !format!("{ep:?}").contains(&ep.token),
        "Debug never shows the token"
    );
}

#[test]
fn requests_for_another_host_name_are_refused_even_with_the_token() {
    // A page on another site that resolves its name to 127.0.0.1 (DNS rebinding) sends its
    // own host name.
    let t = trial(100);
    let ep = TrialEndpoint::start(t.world.clone()).unwrap();
    let status = http_status_as(ep.addr(), "attacker.example", Some(&ep.authorization()));
    assert!((400..500).contains(&status), "{status}");
    let port = ep.addr().port();
    let local = http_status_as(
        ep.addr(),
        &format!("localhost:{port}"),
        Some(&ep.authorization()),
    );
    assert_eq!(local, 200);
}

#[test]
fn a_shut_down_endpoint_stops_listening() {
    let t = trial(100);
    let ep = TrialEndpoint::start(t.world.clone()).unwrap();
    let addr = ep.addr();
    assert_eq!(http_status(addr, Some(&ep.authorization())), 200);
    ep.shutdown();
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn endpoints_listen_on_loopback_only() {
    let t = trial(100);
    let err = TrialEndpoint::start_on(t.world.clone(), "0.0.0.0:0".parse().unwrap()).unwrap_err();
    assert!(err.to_string().contains("loopback"), "{err}");
}

/// Serve `office` over an in-memory pipe and connect rmcp's client to it: the stdio framing.
async fn over_pipe(office: &Office) -> RunningService<RoleClient, ()> {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (sr, sw) = tokio::io::split(server_io);
    let office = office.clone();
    tokio::spawn(async move { office.serve_io(sr, sw).await });
    let (cr, cw) = tokio::io::split(client_io);
    ().serve((cr, cw)).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_tools_are_served_over_stdio_framing() {
    let t = trial(100);
    let office = Office::new(t.world.clone());
    office.set_session(Some(t.session(1))).unwrap();
    let client = over_pipe(&office).await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    let specs: Vec<String> = World::tool_specs_for(&memo_apps())
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, specs);
    let r = call(&client, "files_read", json!({"path": "readme.txt"})).await;
    assert_eq!(
        r.structured_content.as_ref().unwrap()["text"],
        "Team folder.\n"
    );
    assert_eq!(t.recorder.len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_forwards_stdio_to_a_trial_endpoint() {
    let t = trial(100);
    let ep = TrialEndpoint::start(t.world.clone()).unwrap();
    ep.set_session(Some(t.session(1))).unwrap();

    let (client_io, bridge_io_end) = tokio::io::duplex(1 << 16);
    let (br, bw) = tokio::io::split(bridge_io_end);
    let (url, token) = (ep.url.clone(), ep.token.clone());
    let bridge = tokio::spawn(async move { bridge_io(&url, &token, br, bw).await });
    let (cr, cw) = tokio::io::split(client_io);
    let client = ().serve((cr, cw)).await.unwrap();

    assert_eq!(
        client.list_all_tools().await.unwrap().len(),
        World::tool_specs_for(&memo_apps()).len()
    );
    let r = call(
        &client,
        "files_write",
        json!({"path": "b.txt", "content": "via bridge"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let e = call(&client, "files_read", json!({"path": "nope.txt"})).await;
    assert_eq!(e.is_error, Some(true));
    assert_eq!(t.recorder.len(), 2, "calls through the bridge are recorded");
    client.cancel().await.unwrap();
    bridge.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_fails_cleanly_on_a_wrong_token() {
    let t = trial(100);
    let ep = TrialEndpoint::start(t.world.clone()).unwrap();
    let (_client_io, end) = tokio::io::duplex(1 << 16);
    let (br, bw) = tokio::io::split(end);
    let err = bridge_io(&ep.url, "not-the-token", br, bw)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is the token its token"), "{err}");
}

fn play(dir: &Path, max_steps: u32) -> (Task, Play) {
    write_memo_task_with(&dir.join("task"), "memo", max_steps, MEMO_SOLUTION_1);
    let task = Task::load(&dir.join("task")).unwrap();
    let p = Play::start(task.clone(), Some(&dir.join("play"))).unwrap();
    (task, p)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_played_through_mcp_is_scored_like_a_trial() {
    let dir = tempfile::tempdir().unwrap();
    let (task, p) = play(dir.path(), 100);
    let client = over_pipe(p.office()).await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    for tool in PLAY_TOOLS {
        assert!(names.contains(&tool.to_string()));
    }
    assert_eq!(
        names.len(),
        World::tool_specs_for(&memo_apps()).len() + PLAY_TOOLS.len()
    );

    let prompt = call(&client, "task_prompt", json!({})).await;
    let v = prompt.structured_content.unwrap();
    assert_eq!(v["turn"], 1);
    assert_eq!(v["turns"], 2);
    assert_eq!(v["prompt"], task.turns[0].prompt.as_str());
    assert_eq!(v["time"], "2026-03-02T09:00:00+01:00");

    for c in &task.solution[0] {
        let r = call(&client, &c.tool, c.args.clone()).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
    }
    let next = call(&client, "task_next_turn", json!({})).await;
    let v = next.structured_content.unwrap();
    assert_eq!(v["turn"], 2);
    assert_eq!(v["scored_items_of_previous_turn"], 2);
    assert_eq!(p.turn(), Some(2));
    for c in &task.solution[1] {
        let r = call(&client, &c.tool, c.args.clone()).await;
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
    }
    let last = call(&client, "task_next_turn", json!({})).await;
    assert_eq!(last.is_error, Some(true));
    assert!(text(&last).contains("task_finish"), "{}", text(&last));

    let args = call(&client, "task_finish", json!({"now": true})).await;
    assert_eq!(args.is_error, Some(true), "play tools take no arguments");
    let finish = call(&client, "task_finish", json!({})).await;
    assert_eq!(finish.is_error, Some(false), "{}", text(&finish));
    let v = finish.structured_content.unwrap();
    assert_eq!(v["status"], "passed");
    assert_eq!(v["score"]["weighted"], 1.0);
    assert_eq!(v["verdicts"].as_array().unwrap().len(), 3);

    let o = p.outcome().unwrap();
    assert_eq!(o.status, TrialStatus::Passed);
    assert!(o.verdicts.iter().all(|v| v.passed()));
    assert_eq!(p.turn(), None);
    // Finishing again gives the same answer; world tools are closed.
    let again = call(&client, "task_finish", json!({})).await;
    assert_eq!(again.structured_content.unwrap()["status"], "passed");
    let closed = call(&client, "files_list", json!({})).await;
    assert!(text(&closed).starts_with(NO_TURN), "{}", text(&closed));

    // The play keeps a trial's files.
    let root = dir.path().join("play");
    assert!(root.join("snapshots/turn-1.json").is_file());
    assert!(root.join("snapshots/turn-2.json").is_file());
    let verdicts = json(&root.join("verdicts.json"));
    assert_eq!(verdicts.as_array().unwrap().len(), 3);
    let trajectory = read(&root.join("trajectory.jsonl"));
    let prompts = trajectory
        .lines()
        .filter(|l| l.contains(r#""type":"prompt""#))
        .count();
    assert_eq!(prompts, 2);
    assert_eq!(
        p.recorder().len(),
        2 + task.solution[0].len() + task.solution[1].len()
    );
    client.cancel().await.unwrap();
}

#[test]
fn finishing_early_fails_the_items_of_unplayed_turns() {
    let dir = tempfile::tempdir().unwrap();
    write_memo_task(&dir.path().join("task"), "memo");
    // The budget item belongs to turn 2 here (it is a final item in the shared fixture).
    let toml = dir.path().join("task/task.toml");
    let text = read(&toml).replace(
        "id = \"budget-in-memo\"\n",
        "id = \"budget-in-memo\"\nturn = 2\n",
    );
    std::fs::write(&toml, text).unwrap();
    let task = Task::load(&dir.path().join("task")).unwrap();
    let p = Play::start(task.clone(), Some(&dir.path().join("play"))).unwrap();
    for c in &task.solution[0] {
        assert!(!p.office().call(&c.tool, c.args.clone()).is_error());
    }
    let out = p.office().call("task_finish", json!({}));
    assert!(!out.is_error(), "{out:?}");
    let o = p.outcome().unwrap();
    assert_eq!(o.status, TrialStatus::Failed);
    let by_id = |id: &str| o.verdicts.iter().find(|v| v.id == id).unwrap();
    assert_eq!(by_id("memo-written").status, VerdictStatus::Passed);
    assert_eq!(by_id("bob-told").status, VerdictStatus::Passed);
    let budget = by_id("budget-in-memo");
    assert_eq!(budget.turn, TurnRef::Turn(2));
    assert_eq!(budget.status, VerdictStatus::Failed);
    assert_eq!(
        budget.detail.as_deref(),
        Some("turn 2 was not played: task_finish was called during turn 1")
    );
    assert_eq!(o.score.items_total, 3);
    assert_eq!(o.score.items_passed, 2);
    assert!(!dir.path().join("play/snapshots/turn-2.json").exists());
}

#[test]
fn play_needs_an_empty_directory() {
    let dir = tempfile::tempdir().unwrap();
    write_memo_task(&dir.path().join("task"), "memo");
    std::fs::create_dir_all(dir.path().join("busy")).unwrap();
    std::fs::write(dir.path().join("busy/keep.txt"), "mine").unwrap();
    let task = Task::load(&dir.path().join("task")).unwrap();
    let err = Play::start(task.clone(), Some(&dir.path().join("busy"))).unwrap_err();
    assert!(err.to_string().contains("not an empty directory"), "{err}");
    // Without a directory the play builds its world in a temporary one, removed on drop.
    let p = Play::start(task, None).unwrap();
    let root = p.root().to_path_buf();
    assert!(root.join("world/workspace/readme.txt").is_file());
    drop(p);
    assert!(!root.exists());
}

/// The apps of the memo task (files, mail): the tools its office offers.
fn memo_apps() -> Vec<String> {
    vec!["files".to_string(), "mail".to_string()]
}
