//! What serving the office over MCP costs per tool call: the same `files_read` called in
//! process through the tool session, through an [`Office`], over MCP's stdio framing (an
//! in-memory pipe) and over streamable HTTP on loopback with the bearer-token check.
//!
//! Run: `cargo bench -p bureau-mcp --bench calls -- --warm-up-time 1 --measurement-time 5`.
//! Figures go to docs/mcp.md.

#[path = "../../run/tests/common/mod.rs"]
mod common;

use std::sync::{Arc, Mutex};

use bureau_agents::{Recorder, ToolSession, TurnLimits};
use bureau_core::task::Task;
use bureau_mcp::{Office, TrialEndpoint};
use bureau_world::World;
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    // No step limit worth the name: the benchmark makes many calls in one "turn".
    common::write_memo_task_with(
        &dir.path().join("task"),
        "memo",
        u32::MAX,
        common::MEMO_SOLUTION_1,
    );
    let task = Task::load(&dir.path().join("task")).unwrap();
    let mut world = World::build(&task, &dir.path().join("world")).unwrap();
    world.begin_turn(&task.turns[0]).unwrap();
    let world = Arc::new(Mutex::new(world));
    let session = Arc::new(ToolSession::new(
        world.clone(),
        Recorder::new(),
        1,
        TurnLimits::from(&task.limits),
    ));
    let args = json!({"path": "readme.txt"});
    let params =
        CallToolRequestParams::new("files_read").with_arguments(args.as_object().unwrap().clone());

    let mut g = c.benchmark_group("files_read call");
    g.bench_function("in process: ToolSession::call", |b| {
        b.iter(|| session.call("files_read", args.clone()).unwrap())
    });

    let office = Office::new(world.clone());
    office.set_session(Some(session.clone())).unwrap();
    g.bench_function("in process: Office::call", |b| {
        b.iter(|| office.call("files_read", args.clone()))
    });

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    let stdio_client = rt.block_on(async {
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (sr, sw) = tokio::io::split(server_io);
        let served = office.clone();
        tokio::spawn(async move { served.serve_io(sr, sw).await });
        let (cr, cw) = tokio::io::split(client_io);
        ().serve((cr, cw)).await.unwrap()
    });
    g.bench_function("MCP stdio framing (in-memory pipe)", |b| {
        b.iter(|| rt.block_on(stdio_client.call_tool(params.clone())).unwrap())
    });

    let endpoint = TrialEndpoint::start(world.clone()).unwrap();
    endpoint.set_session(Some(session.clone())).unwrap();
    let http_client = rt.block_on(async {
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(endpoint.url.as_str())
                .auth_header(endpoint.token.as_str()),
        );
        ().serve(transport).await.unwrap()
    });
    g.bench_function("MCP streamable HTTP on loopback (bearer token)", |b| {
        b.iter(|| rt.block_on(http_client.call_tool(params.clone())).unwrap())
    });
    g.finish();

    rt.block_on(async {
        let _ = stdio_client.cancel().await;
        let _ = http_client.cancel().await;
    });
    endpoint.shutdown();
}

criterion_group!(benches, bench);
criterion_main!(benches);
