//! LLM judges for rubric items written `judge = "<proposition>"`.
//!
//! The check crate owns everything about a judged item except the model call: the prompt
//! ([`judge_prompt`]: the task's prompts, the item, the relevant files rendered to text, a
//! digest of the trajectory), the answer's parsing ([`parse_answer`]: JSON
//! `{passed, confidence, evidence, error_type}` with Workspace-Bench's error types), the
//! verdict rules and the cache ([`CachedJudge`]). The model call is behind the [`Judge`]
//! trait; `bureau-agents` implements it over the OpenAI and Anthropic APIs.
//!
//! Verdict rules (issue 4, §4):
//! * an answer that parses → `passed` or `failed`, with the judge's evidence and error type;
//! * an answer that is missing or does not parse → `failed` (the judge did not find the
//!   proposition true), with the raw answer in the detail;
//! * a judge API failure after its retries → `error` (the item's score is unknown);
//! * no judge configured → `error`, saying how to configure one.
//!
//! Answers are cached by the hash of (model, prompt) — and, for an item with `judge_render`,
//! of the page images shown ([`seeing_hash`]): re-scoring a run with the same judge model
//! gives the same verdicts without calling the model again. Rendered pages are cached beside
//! the answers ([`Judge::page_cache`], see [`crate::judge_pages`]), so a re-scoring neither
//! renders again nor sees different pages.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use bureau_core::result::ModelTokens;
use bureau_core::task::{JudgeSpec, RubricItem, Task};
use bureau_core::tool::{Media, ToolOutcome};
use bureau_core::trajectory::{Step, StepKind};
use bureau_core::verdict::{JudgeErrorType, JudgeRecord, VerdictStatus};
use bureau_world::World;
use serde_json::Value;

/// Bytes of one file shown to the judge; longer files are cut with a note.
pub const MAX_FILE_CHARS: usize = 20_000;
/// Files shown to the judge at most (the rest are named only).
pub const MAX_FILES: usize = 12;
/// Tool calls listed in the trajectory digest at most (first and last ones kept).
pub const MAX_DIGEST_CALLS: usize = 120;

/// The instructions every judge gets.
pub const JUDGE_SYSTEM: &str = "You are a strict, fair grader of work done by an AI assistant in a simulated office. \
You are given the task the assistant received, one proposition about the result, the relevant files as they are now, \
and a digest of the assistant's actions. Decide whether the proposition is true of the actual state shown, not of the \
assistant's claims. Answer with one JSON object and nothing else: \
{\"passed\": true|false, \"confidence\": <0..1>, \"evidence\": \"<one or two sentences quoting what decided it>\", \
\"error_type\": null | \"Constraint\" | \"Missing Content\" | \"Reasoning\" | \"Process\" | \"Format\"}. \
error_type is null when passed; otherwise Constraint (a stated constraint or rule was broken), Missing Content \
(something required is absent), Reasoning (wrong figures, logic or conclusions), Process (the way of working was \
wrong: wrong tool, wrong recipient, wrong order), Format (right content, wrong form or file type).";

/// A model that answers judge prompts. Implementations call a model API with temperature 0
/// and return its text; `Err` is an API failure after the implementation's own retries.
pub trait Judge: Send + Sync {
    /// `provider:model`, recorded with every verdict.
    fn model(&self) -> String;
    /// The model's answer to (`system`, `user`), or why there is none.
    fn complete(&self, system: &str, user: &str) -> Result<String, String>;
    /// Whether the last answer for this prompt came from a cache (for [`JudgeRecord::cached`]).
    fn was_cached(&self, _system: &str, _user: &str) -> bool {
        false
    }
    /// [`Judge::complete`] with the calls and tokens it cost (zero from a cache; zero by
    /// default, for models that do not count).
    fn complete_counted(&self, system: &str, user: &str) -> Result<(String, ModelTokens), String> {
        self.complete(system, user)
            .map(|a| (a, ModelTokens::default()))
    }
    /// [`Judge::complete_counted`] with images shown after the user message (the rendered
    /// pages of `judge_render`, in order). A judge that cannot be shown images (the default)
    /// fails when there are any.
    fn complete_seeing(
        &self,
        system: &str,
        user: &str,
        images: &[Media],
    ) -> Result<(String, ModelTokens), String> {
        if images.is_empty() {
            return self.complete_counted(system, user);
        }
        Err(format!(
            "the judge {} cannot be shown images, and this item's `judge_render` pages must be seen; use a vision-capable judge model",
            self.model()
        ))
    }
    /// [`Judge::was_cached`] for [`Judge::complete_seeing`].
    fn was_cached_seeing(&self, system: &str, user: &str, images: &[Media]) -> bool {
        images.is_empty() && self.was_cached(system, user)
    }
    /// Where pages rendered for this judge are kept (`None`: rendered every time).
    fn page_cache(&self) -> Option<PathBuf> {
        None
    }
}

/// The judge's answer, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeAnswer {
    pub passed: bool,
    pub confidence: Option<f64>,
    pub evidence: String,
    pub error_type: Option<JudgeErrorType>,
}

/// Hash of (model, system, user): the cache key and the verdict's `prompt_hash`.
pub fn prompt_hash(model: &str, system: &str, user: &str) -> String {
    let mut h = blake3::Hasher::new();
    for part in [model, system, user] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().to_hex().to_string()
}

/// [`prompt_hash`] extended with the images shown (their MIME types and blake3 digests, in
/// order); equal to [`prompt_hash`] when there are none, so text-only items keep their keys.
pub fn seeing_hash(model: &str, system: &str, user: &str, images: &[Media]) -> String {
    if images.is_empty() {
        return prompt_hash(model, system, user);
    }
    let mut h = blake3::Hasher::new();
    h.update(prompt_hash(model, system, user).as_bytes());
    for m in images {
        for part in [m.mime_type.as_str(), m.blake3.as_str()] {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
    }
    h.finalize().to_hex().to_string()
}

/// Parse a judge's text: the first JSON object in it (code fences and prose around it are
/// tolerated). `passed` must be a boolean; `confidence` is clamped to 0–1; an unknown
/// `error_type` is dropped.
pub fn parse_answer(text: &str) -> Result<JudgeAnswer, String> {
    let start = text
        .find('{')
        .ok_or_else(|| "the answer holds no JSON object".to_string())?;
    let mut de = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    let value = match de.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => return Err(format!("the answer's JSON does not parse: {e}")),
        None => return Err("the answer holds no JSON object".into()),
    };
    let obj = value
        .as_object()
        .ok_or_else(|| "the answer's JSON is not an object".to_string())?;
    let passed = match obj.get("passed") {
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(format!("`passed` is {other}, not true or false")),
        None => return Err("the answer has no `passed`".into()),
    };
    let confidence = obj
        .get("confidence")
        .and_then(Value::as_f64)
        .map(|c| c.clamp(0.0, 1.0));
    let evidence = obj
        .get("evidence")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    let error_type = if passed {
        None
    } else {
        obj.get("error_type")
            .and_then(Value::as_str)
            .and_then(JudgeErrorType::parse)
    };
    Ok(JudgeAnswer {
        passed,
        confidence,
        evidence,
        error_type,
    })
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max).collect();
    format!(
        "{kept}\n[… cut: the file has {} characters]",
        text.chars().count()
    )
}

/// The files a judge sees for `spec`: those it names, else the trial's collected outputs
/// ([`crate::outputs`]): first the files the agent changed or that sit where the task expects
/// outputs, then those only named in its messages, each group by path. The prompt shows at
/// most [`MAX_FILES`] of them, each cut at [`MAX_FILE_CHARS`].
fn judge_files(spec: &JudgeSpec, task: &Task, world: &World, trajectory: &[Step]) -> Vec<String> {
    if !spec.files.is_empty() {
        return spec.files.clone();
    }
    let collected = crate::outputs::collect_outputs(task, world, trajectory);
    let (named_only, strong): (Vec<_>, Vec<_>) = collected
        .outputs
        .into_iter()
        .partition(|o| o.reasons == [crate::outputs::OutputReason::NamedInMessage]);
    strong
        .into_iter()
        .chain(named_only)
        .map(|o| o.path)
        .collect()
}

/// A file as text for the judge: text files as they are, office files through the
/// document readers, anything else named as binary.
fn render_file(world: &World, path: &str) -> String {
    match world.files().read_bytes(path) {
        Err(e) => format!("(cannot be read: {e})"),
        Ok(bytes) => match std::str::from_utf8(&bytes) {
            Ok(text) if !bureau_world::files::is_binary(&bytes) => cut(text, MAX_FILE_CHARS),
            _ => format!("(a binary file of {} bytes)", bytes.len()),
        },
    }
}

fn short(v: &Value, max: usize) -> String {
    let s = v.to_string();
    if s.chars().count() <= max {
        s
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

/// A digest of the trajectory up to now: prompts, tool calls (arguments and outcomes cut
/// short) and the agent's messages.
pub fn trajectory_digest(trajectory: &[Step]) -> String {
    let lines: Vec<String> = trajectory
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::ToolCall {
                tool,
                args,
                outcome,
            } => Some(match outcome {
                ToolOutcome::Ok { value, .. } => format!(
                    "[turn {}] {tool}({}) → {}",
                    s.turn,
                    short(args, 300),
                    short(value, 200)
                ),
                ToolOutcome::Error { message } => format!(
                    "[turn {}] {tool}({}) → error: {}",
                    s.turn,
                    short(args, 300),
                    message.chars().take(200).collect::<String>()
                ),
            }),
            StepKind::Message { text } => Some(format!(
                "[turn {}] assistant said: {}",
                s.turn,
                text.chars().take(400).collect::<String>()
            )),
            _ => None,
        })
        .collect();
    if lines.len() <= MAX_DIGEST_CALLS {
        return lines.join("\n");
    }
    let head = MAX_DIGEST_CALLS / 2;
    let tail = MAX_DIGEST_CALLS - head;
    let mut out: Vec<String> = lines[..head].to_vec();
    out.push(format!(
        "[… {} actions left out …]",
        lines.len() - head - tail
    ));
    out.extend_from_slice(&lines[lines.len() - tail..]);
    out.join("\n")
}

/// The user message of a judge prompt for `item`.
pub fn judge_prompt(
    task: &Task,
    world: &World,
    trajectory: &[Step],
    item: &RubricItem,
    spec: &JudgeSpec,
) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "# Task\n\n{} — the assistant acts as {} <{}>.\n\n",
        task.title, task.user.name, task.user.email
    ));
    for t in &task.turns {
        out.push_str(&format!(
            "## Turn {} prompt\n\n{}\n\n",
            t.index,
            t.prompt.trim()
        ));
    }
    out.push_str(&format!(
        "# Proposition to judge\n\n{}\n\n(Rubric item `{}`: {})\n\n",
        spec.proposition, item.id, item.description
    ));
    let files = judge_files(spec, task, world, trajectory);
    out.push_str("# Files\n\n");
    if files.is_empty() {
        out.push_str("(the assistant created or changed no files)\n\n");
    }
    for (i, f) in files.iter().enumerate() {
        if i >= MAX_FILES {
            out.push_str(&format!(
                "(and {} more files not shown: {})\n\n",
                files.len() - MAX_FILES,
                files[MAX_FILES..].join(", ")
            ));
            break;
        }
        if world.files().exists(f) {
            out.push_str(&format!(
                "## {f}\n\n```\n{}\n```\n\n",
                render_file(world, f)
            ));
        } else {
            out.push_str(&format!("## {f}\n\n(does not exist)\n\n"));
        }
    }
    out.push_str("# What the assistant did\n\n");
    let digest = trajectory_digest(trajectory);
    out.push_str(if digest.is_empty() {
        "(no actions)"
    } else {
        &digest
    });
    out.push('\n');
    out
}

/// Judge one item: the verdict's status, detail and judge record.
pub(crate) fn run_judge(
    task: &Task,
    world: &World,
    trajectory: &[Step],
    item: &RubricItem,
    spec: &JudgeSpec,
    judge: Option<&dyn Judge>,
) -> (VerdictStatus, Option<String>, Option<JudgeRecord>) {
    let Some(judge) = judge else {
        return (
            VerdictStatus::Error,
            Some("this item needs an LLM judge and none is configured — run with `--judge provider:model` (e.g. --judge openai:gpt-4.1-mini)".into()),
            None,
        );
    };
    let mut user = judge_prompt(task, world, trajectory, item, spec);
    let pages = match crate::judge_pages::pages_for(world, spec, judge.page_cache()) {
        Ok(p) => p,
        Err(e) => return (VerdictStatus::Error, Some(e), None),
    };
    user.push_str(&pages.section);
    let images = pages.images;
    let model = judge.model();
    let hash = seeing_hash(&model, JUDGE_SYSTEM, &user, &images);
    match judge.complete_seeing(JUDGE_SYSTEM, &user, &images) {
        Err(e) => (
            VerdictStatus::Error,
            Some(format!("the judge ({model}) failed: {e}")),
            None,
        ),
        Ok((text, _)) => {
            let cached = judge.was_cached_seeing(JUDGE_SYSTEM, &user, &images);
            match parse_answer(&text) {
                Ok(a) => {
                    let status = if a.passed {
                        VerdictStatus::Passed
                    } else {
                        VerdictStatus::Failed
                    };
                    let mut detail = format!(
                        "judge {model}: {}",
                        if a.passed { "passed" } else { "failed" }
                    );
                    if let Some(t) = a.error_type {
                        detail.push_str(&format!(" ({})", t.as_str()));
                    }
                    if !a.evidence.is_empty() {
                        detail.push_str(&format!(" — {}", a.evidence));
                    }
                    (
                        status,
                        Some(detail),
                        Some(JudgeRecord {
                            model,
                            prompt_hash: hash,
                            confidence: a.confidence,
                            evidence: a.evidence,
                            error_type: a.error_type,
                            cached,
                        }),
                    )
                }
                Err(why) => (
                    VerdictStatus::Failed,
                    Some(format!(
                        "the judge's answer is not a verdict ({why}); counted as not passed. Answer: {}",
                        text.chars().take(300).collect::<String>()
                    )),
                    Some(JudgeRecord {
                        model,
                        prompt_hash: hash,
                        confidence: None,
                        evidence: String::new(),
                        error_type: None,
                        cached,
                    }),
                ),
            }
        }
    }
}

/// A judge whose answers are kept in a directory, one JSON file per (model, prompt) hash.
/// A cached answer is returned without calling the inner judge; API failures are not cached.
pub struct CachedJudge<J> {
    inner: J,
    dir: PathBuf,
    /// Prompt hashes whose latest answer came from the cache.
    hits: Mutex<BTreeSet<String>>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct CacheEntry {
    model: String,
    answer: String,
}

impl<J: Judge> CachedJudge<J> {
    pub fn new(inner: J, dir: impl Into<PathBuf>) -> CachedJudge<J> {
        CachedJudge {
            inner,
            dir: dir.into(),
            hits: Mutex::new(BTreeSet::new()),
        }
    }

    fn hits(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.hits.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lookup(&self, path: &Path) -> Option<String> {
        let bytes = std::fs::read(path).ok()?;
        let entry: CacheEntry = serde_json::from_slice(&bytes).ok()?;
        (entry.model == self.inner.model()).then_some(entry.answer)
    }
}

impl<J: Judge> Judge for CachedJudge<J> {
    fn model(&self) -> String {
        self.inner.model()
    }

    fn complete(&self, system: &str, user: &str) -> Result<String, String> {
        self.complete_counted(system, user).map(|(a, _)| a)
    }

    fn complete_counted(&self, system: &str, user: &str) -> Result<(String, ModelTokens), String> {
        self.complete_seeing(system, user, &[])
    }

    fn complete_seeing(
        &self,
        system: &str,
        user: &str,
        images: &[Media],
    ) -> Result<(String, ModelTokens), String> {
        let hash = seeing_hash(&self.inner.model(), system, user, images);
        let path = self.dir.join(format!("{hash}.json"));
        if let Some(answer) = self.lookup(&path) {
            self.hits().insert(hash);
            return Ok((answer, ModelTokens::default()));
        }
        self.hits().remove(&hash);
        let (answer, tokens) = if images.is_empty() {
            self.inner.complete_counted(system, user)?
        } else {
            self.inner.complete_seeing(system, user, images)?
        };
        let entry = CacheEntry {
            model: self.inner.model(),
            answer: answer.clone(),
        };
        // A cache that cannot be written only costs a model call next time.
        if std::fs::create_dir_all(&self.dir).is_ok()
            && let Ok(json) = serde_json::to_vec_pretty(&entry)
        {
            let tmp = path.with_extension("json.tmp");
            if std::fs::write(&tmp, json).is_ok() {
                let _ = std::fs::rename(&tmp, &path);
            }
        }
        Ok((answer, tokens))
    }

    fn was_cached(&self, system: &str, user: &str) -> bool {
        self.was_cached_seeing(system, user, &[])
    }

    fn was_cached_seeing(&self, system: &str, user: &str, images: &[Media]) -> bool {
        self.hits()
            .contains(&seeing_hash(&self.inner.model(), system, user, images))
    }

    /// `<cache>/pages/`: pages rendered for a judge are kept with its answers, so a
    /// re-scoring shows the judge the very pages it saw (and the answer is a cache hit).
    fn page_cache(&self) -> Option<PathBuf> {
        Some(self.dir.join(crate::judge_pages::PAGE_CACHE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_with_fences_and_prose_around_them() {
        let a = parse_answer("Here you go:\n```json\n{\"passed\": false, \"confidence\": 1.7, \"evidence\": \"No total.\", \"error_type\": \"missing_content\"}\n```").unwrap();
        assert!(!a.passed);
        assert_eq!(a.confidence, Some(1.0));
        assert_eq!(a.evidence, "No total.");
        assert_eq!(a.error_type, Some(JudgeErrorType::MissingContent));
        let a = parse_answer("{\"passed\": true, \"error_type\": \"Format\"}").unwrap();
        assert!(a.passed);
        assert_eq!(a.error_type, None, "a passed item has no error type");
    }

    #[test]
    fn unparsable_answers_are_errors_with_a_reason() {
        assert!(
            parse_answer("I think it passed.")
                .unwrap_err()
                .contains("no JSON")
        );
        assert!(
            parse_answer("{\"passed\": \"yes\"}")
                .unwrap_err()
                .contains("not true or false")
        );
        assert!(
            parse_answer("{\"confidence\": 1}")
                .unwrap_err()
                .contains("no `passed`")
        );
        assert!(
            parse_answer("{\"passed\": tru")
                .unwrap_err()
                .contains("does not parse")
        );
    }

    #[test]
    fn error_types_accept_the_taxonomys_spellings() {
        for t in JudgeErrorType::ALL {
            assert_eq!(JudgeErrorType::parse(t.as_str()), Some(t));
        }
        assert_eq!(
            JudgeErrorType::parse("MISSING-CONTENT"),
            Some(JudgeErrorType::MissingContent)
        );
        assert_eq!(JudgeErrorType::parse("style"), None);
    }

    #[test]
    fn the_seeing_hash_is_the_prompt_hash_without_images_and_follows_each_image() {
        let img = |digest: &str| Media {
            kind: bureau_core::tool::MediaKind::Image,
            mime_type: "image/png".into(),
            label: "p".into(),
            data: String::new(),
            bytes: 1,
            blake3: digest.into(),
        };
        assert_eq!(seeing_hash("m", "s", "u", &[]), prompt_hash("m", "s", "u"));
        let one = seeing_hash("m", "s", "u", &[img("aa")]);
        assert_ne!(one, prompt_hash("m", "s", "u"));
        assert_ne!(one, seeing_hash("m", "s", "u", &[img("ab")]));
        assert_ne!(
            seeing_hash("m", "s", "u", &[img("aa"), img("bb")]),
            seeing_hash("m", "s", "u", &[img("bb"), img("aa")])
        );
        // The label is for people: it does not change the key.
        let mut relabelled = img("aa");
        relabelled.label = "other".into();
        assert_eq!(one, seeing_hash("m", "s", "u", &[relabelled]));
    }

    #[test]
    fn the_prompt_hash_separates_its_parts() {
        assert_ne!(prompt_hash("m", "ab", "c"), prompt_hash("m", "a", "bc"));
        assert_eq!(prompt_hash("m", "a", "b"), prompt_hash("m", "a", "b"));
        assert_ne!(prompt_hash("m1", "a", "b"), prompt_hash("m2", "a", "b"));
    }
}
