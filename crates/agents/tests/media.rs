//! Pictures and sounds reach the model: a tool result's media go to a fake model API in each
//! wire format (OpenAI `image_url` data URIs and `input_audio` parts in a user message after
//! the tool messages; Anthropic `image` blocks inside the `tool_result`), byte for byte; a
//! model configured as text-only gets the description and a line saying what it was not
//! shown, and the trajectory notes it; trajectories keep media digests, the bytes go to the
//! trial's blob store once.

mod support;

use std::path::Path;

use bureau_core::trajectory::{Step, StepKind};
use serde_json::{Value, json};
use support::fake::{FakeServer, Wire, b64};
use support::script::{anthropic, openai, tokens};
use support::*;

fn agents(wire: Wire, base: &str, extra: &str) -> String {
    let (name, model) = match wire {
        Wire::OpenAi => ("gpt", "openai:gpt-4.1-mini"),
        Wire::Anthropic => ("claude", "anthropic:claude-sonnet-4-5"),
    };
    format!(
        r#"[agents.{name}]
kind = "llm"
model = "{model}"
base_url = "{base}"
api_key_env = "{KEY_ENV}"
max_output_tokens = 512
{extra}
[agents.{name}.retry]
initial_backoff_seconds = 0.01
max_backoff_seconds = 0.05
"#
    )
}

/// A receipt-like PNG: 300×120, dark text-ish bars on white.
fn receipt_png() -> Vec<u8> {
    let img = image::RgbImage::from_fn(300, 120, |x, y| {
        if (20..280).contains(&x) && (y / 10) % 3 == 1 && (x / 7) % 5 != 0 {
            image::Rgb([20, 20, 20])
        } else {
            image::Rgb([250, 250, 245])
        }
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

fn voicemail_wav() -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 8000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut out = Vec::new();
    let mut w = hound::WavWriter::new(std::io::Cursor::new(&mut out), spec).unwrap();
    for i in 0..8000u32 {
        w.write_sample(((i % 40) as i16 - 20) * 500).unwrap();
    }
    w.finalize().unwrap();
    out
}

/// The hello task with `name` holding `bytes` in its workspace.
fn task_with(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let task = write_hello_task(dir, 1, 10, 60);
    std::fs::write(task.join("world/files").join(name), bytes).unwrap();
    task
}

fn media_notes(steps: &[Step]) -> Vec<Value> {
    steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::Note { data } => data.get("media_not_sent").cloned(),
            _ => None,
        })
        .collect()
}

/// The trajectory keeps the digest, not the bytes; the trial's blob store keeps the bytes.
fn assert_kept_once(out: &Path, task: &str, agent: &str, bytes: &[u8]) {
    let steps = trajectory(out, task, agent);
    let (_, _, outcome) = steps.iter().find_map(Step::as_tool_call).unwrap();
    let m = &outcome.media()[0];
    assert!(m.data.is_empty(), "the trajectory holds media bytes");
    assert_eq!(m.blake3, blake3::hash(bytes).to_hex().to_string());
    assert_eq!(m.bytes, bytes.len() as u64);
    let dir = out.join("trials").join(task).join(agent);
    // The trial's trees are packed in its trial.zip.
    let stored = bureau_world::trial_files::TrialFiles::open(&dir.join("1")).unwrap();
    let blob = stored
        .read(&format!("world/blobs/{}", m.blake3), 1 << 26)
        .unwrap_or_else(|e| panic!("no blob {} in {}: {e}", m.blake3, dir.display()));
    assert_eq!(blob, bytes);
    // Recorded requests name the bytes by digest instead of carrying them.
    let raw = std::fs::read_to_string(
        walk(&dir)
            .into_iter()
            .find(|p| p.ends_with("trajectory.jsonl"))
            .unwrap(),
    )
    .unwrap();
    assert!(
        raw.contains(&format!("bureau-blob:{}", m.blake3)),
        "no blob reference in the recorded request"
    );
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    assert!(
        !raw.contains(&encoded[..64]),
        "the trajectory holds the picture's base64"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn openai_gets_the_picture_as_a_data_uri_after_the_tool_message() {
    let tmp = tempfile::tempdir().unwrap();
    let png = receipt_png();
    let task = task_with(&tmp.path().join("hello"), "receipt.png", &png);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![
            openai::calls(
                &[("call_1", "files_read", json!({"path": "receipt.png"}))],
                tokens(500, 0, 20),
            ),
            openai::text("Read it.", tokens(900, 0, 5)),
        ],
    );
    let agents = write_agents_file(tmp.path(), &agents(Wire::OpenAi, &server.base_url(), ""));
    let out = tmp.path().join("run");
    run(&task, &["gpt"], &catalog(&agents), &out);
    assert_eq!(server.violations(), Vec::<String>::new());

    let received = server.received();
    let messages = received[1].body["messages"].as_array().unwrap();
    let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
    let text = tool["content"].as_str().unwrap();
    assert!(
        text.contains("\"media\":\"image\"") && text.contains("300×120"),
        "{text}"
    );
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    let parts = last["content"].as_array().unwrap();
    assert!(
        parts[0]["text"]
            .as_str()
            .unwrap()
            .contains("receipt.png, 300×120 from tool call call_1")
    );
    let url = parts[1]["image_url"]["url"].as_str().unwrap();
    let data = url.strip_prefix("data:image/png;base64,").unwrap();
    assert_eq!(
        b64(data).unwrap(),
        png,
        "the model got other bytes than the file's"
    );
    assert!(media_notes(&trajectory(&out, "hello", "gpt")).is_empty());
    assert_kept_once(&out, "hello", "gpt", &png);
}

#[test]
fn anthropic_gets_the_picture_as_an_image_block_in_the_tool_result() {
    let tmp = tempfile::tempdir().unwrap();
    let png = receipt_png();
    let task = task_with(&tmp.path().join("hello"), "receipt.png", &png);
    let server = FakeServer::start(
        Wire::Anthropic,
        Some(SECRET),
        vec![
            anthropic::calls(
                None,
                &[("toolu_1", "files_read", json!({"path": "receipt.png"}))],
                tokens(500, 0, 20),
            ),
            anthropic::text("Read it.", tokens(900, 0, 5)),
        ],
    );
    let agents = write_agents_file(tmp.path(), &agents(Wire::Anthropic, &server.base_url(), ""));
    let out = tmp.path().join("run");
    run(&task, &["claude"], &catalog(&agents), &out);
    assert_eq!(server.violations(), Vec::<String>::new());

    let received = server.received();
    let last = received[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let result = &last["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_1");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"media\":\"image\"")
    );
    let source = &result["content"][1]["source"];
    assert_eq!(source["media_type"], "image/png");
    assert_eq!(b64(source["data"].as_str().unwrap()).unwrap(), png);
    assert_kept_once(&out, "hello", "claude", &png);
}

#[test]
fn a_text_only_model_gets_the_description_and_the_trajectory_says_what_it_missed() {
    let tmp = tempfile::tempdir().unwrap();
    let png = receipt_png();
    let task = task_with(&tmp.path().join("hello"), "receipt.png", &png);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![
            openai::calls(
                &[("call_1", "files_read", json!({"path": "receipt.png"}))],
                tokens(500, 0, 20),
            ),
            openai::text("Read it.", tokens(900, 0, 5)),
        ],
    );
    let agents = write_agents_file(
        tmp.path(),
        &agents(Wire::OpenAi, &server.base_url(), "modalities = [\"text\"]"),
    );
    let out = tmp.path().join("run");
    run(&task, &["gpt"], &catalog(&agents), &out);
    assert_eq!(server.violations(), Vec::<String>::new());

    let received = server.received();
    let messages = received[1].body["messages"].as_array().unwrap();
    assert!(
        !serde_json::to_string(messages)
            .unwrap()
            .contains("image_url"),
        "a text-only model was sent a picture"
    );
    let tool = messages.last().unwrap();
    assert_eq!(tool["role"], "tool");
    let text = tool["content"].as_str().unwrap();
    assert!(text.contains("A PNG image, 300×120 pixels"), "{text}");
    assert!(
        text.contains(
            "[receipt.png, 300×120 not shown: this model is configured without image input"
        ),
        "{text}"
    );
    let notes = media_notes(&trajectory(&out, "hello", "gpt"));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["tool"], "files_read");
    assert_eq!(notes[0]["modalities"], json!(["text"]));
}

#[test]
fn audio_goes_to_an_openai_model_that_takes_it_and_is_described_to_anthropic() {
    let wav = voicemail_wav();
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let tmp = tempfile::tempdir().unwrap();
        let task = task_with(&tmp.path().join("hello"), "voicemail.wav", &wav);
        let script = match wire {
            Wire::OpenAi => vec![
                openai::calls(
                    &[("call_1", "files_read", json!({"path": "voicemail.wav"}))],
                    tokens(500, 0, 20),
                ),
                openai::text("Heard it.", tokens(900, 0, 5)),
            ],
            Wire::Anthropic => vec![
                anthropic::calls(
                    None,
                    &[("toolu_1", "files_read", json!({"path": "voicemail.wav"}))],
                    tokens(500, 0, 20),
                ),
                anthropic::text("Heard it.", tokens(900, 0, 5)),
            ],
        };
        let server = FakeServer::start(wire, Some(SECRET), script);
        let file = agents(
            wire,
            &server.base_url(),
            "modalities = [\"text\", \"image\", \"audio\"]",
        );
        let agents = write_agents_file(tmp.path(), &file);
        let out = tmp.path().join("run");
        let name = if wire == Wire::OpenAi {
            "gpt"
        } else {
            "claude"
        };
        run(&task, &[name], &catalog(&agents), &out);
        assert_eq!(server.violations(), Vec::<String>::new());
        let body = server.received()[1].body.clone();
        let notes = media_notes(&trajectory(&out, "hello", name));
        match wire {
            Wire::OpenAi => {
                let last = body["messages"].as_array().unwrap().last().unwrap().clone();
                let audio = &last["content"][1]["input_audio"];
                assert_eq!(audio["format"], "wav");
                assert_eq!(b64(audio["data"].as_str().unwrap()).unwrap(), wav);
                assert!(notes.is_empty());
            }
            Wire::Anthropic => {
                let text = serde_json::to_string(&body).unwrap();
                assert!(
                    text.contains("the Anthropic Messages API takes no audio"),
                    "{text}"
                );
                assert!(text.contains("1.0 s long"), "{text}");
                assert_eq!(notes.len(), 1);
            }
        }
    }
}
