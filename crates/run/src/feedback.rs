//! The simulated user of AgencyBench's feedback rounds (`bureau run --feedback <n>`).
//!
//! After a turn's rubric items are evaluated (the last turn together with the `final` items),
//! a turn whose weighted score is below the threshold gets a reply from the user naming the
//! items still failed, and the agent goes on with the same turn, in the same conversation, on
//! the same (not reset) world; the items are then evaluated again. At most `rounds` replies
//! per turn. The message is a fixed template ([`template_message`]) unless a model writes it
//! ([`model_message`], temperature 0, answers cached in `<run>/feedback-cache/`). Either way
//! the user only says what a person checking the work could see — item descriptions and the
//! verdicts' details — never the check code.
//!
//! Pass@k (the share of turns that met the threshold within k tries) and the rise are
//! computed by `bureau_check::summary` from the [`FeedbackRecord`] each trial keeps in
//! `result.json`. The full reference is `docs/feedback.md`.

use bureau_check::Judge;
use bureau_check::metrics::weighted_score;
use bureau_core::result::{ModelTokens, RoundScore};
use bureau_core::task::Task;
use bureau_core::verdict::Verdict;

/// AgencyBench's pass threshold: 60 % of the rubric.
pub const DEFAULT_THRESHOLD: f64 = 0.6;

/// Tolerance when comparing a score with the threshold (weights are floats).
const EPS: f64 = 1e-9;

/// The run's feedback setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeedbackSettings {
    /// Feedback rounds per turn; 0 = no simulated user.
    pub rounds: u32,
    /// Weighted score (0–1) of a turn's items that satisfies the user.
    pub threshold: f64,
}

impl Default for FeedbackSettings {
    fn default() -> Self {
        FeedbackSettings {
            rounds: 0,
            threshold: DEFAULT_THRESHOLD,
        }
    }
}

impl FeedbackSettings {
    /// Whether the run has feedback rounds at all.
    pub fn enabled(&self) -> bool {
        self.rounds > 0
    }

    /// The rounds and threshold for `task`: its `[feedback] rounds` caps the run's rounds (a
    /// task can opt out with 0, never ask for more than the run allows, so that every task of
    /// a run is played under the same protocol); its `[feedback] threshold` replaces the
    /// run's.
    pub fn for_task(&self, task: &Task) -> FeedbackSettings {
        let own = task.feedback.unwrap_or_default();
        FeedbackSettings {
            rounds: own.rounds.map_or(self.rounds, |r| r.min(self.rounds)),
            threshold: own.threshold.unwrap_or(self.threshold),
        }
    }
}

/// The simulated user of a run: the setting and, when a model writes the messages, the model
/// (a cached [`Judge`], whose `complete` is a temperature-0 completion).
#[derive(Clone, Copy, Default)]
pub struct Feedback<'a> {
    pub settings: FeedbackSettings,
    pub writer: Option<&'a dyn Judge>,
}

impl Feedback<'_> {
    /// `template` or the writer's `provider:model`.
    pub fn writer_name(&self) -> String {
        self.writer
            .map_or_else(|| "template".to_string(), |w| w.model())
    }
}

/// The score of one round of a turn's items.
pub fn round_score(unit: &[Verdict], threshold: f64) -> RoundScore {
    let score = weighted_score(unit);
    RoundScore {
        score,
        met: score + EPS >= threshold,
        failed: unit
            .iter()
            .filter(|v| !v.passed())
            .map(|v| v.id.clone())
            .collect(),
    }
}

/// One failed item as the user states it: its description, its id and the verdict's detail.
fn failed_lines(task: &Task, unit: &[Verdict]) -> Vec<String> {
    unit.iter()
        .filter(|v| !v.passed())
        .map(|v| {
            let description = task
                .rubric
                .iter()
                .find(|i| i.id == v.id)
                .map_or(v.id.as_str(), |i| i.description.as_str());
            let why = v
                .detail
                .as_deref()
                .or(v.judge.as_ref().map(|j| j.evidence.as_str()))
                .map(str::trim)
                .filter(|d| !d.is_empty());
            match why {
                Some(d) => format!("- {description} ({}): {}", v.id, one_line(d, 400)),
                None => format!("- {description} ({})", v.id),
            }
        })
        .collect()
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// The deterministic feedback message of round `round` (from 1) of `max_rounds`.
pub fn template_message(task: &Task, round: u32, max_rounds: u32, unit: &[Verdict]) -> String {
    let lines = failed_lines(task, unit);
    let met = unit.len() - lines.len();
    format!(
        "I checked your work and it is not done yet ({met} of {} points met; feedback {round} of {max_rounds}). Still wrong or missing:\n\n{}\n\nPlease fix these in the office, then tell me when you are done.",
        unit.len(),
        lines.join("\n")
    )
}

/// The system prompt of a model writing the user's feedback.
pub const WRITER_SYSTEM: &str = "You play the person who asked an AI assistant to do a piece of office work. \
Their work was checked and falls short on the points listed. Write the message you send the assistant now, \
as that person: say plainly what is still wrong or missing, using only the listed points and their details. \
Do not invent new requirements, do not mention checks, rubrics, scores or ids, and do not do the work for them. \
Plain text, at most 120 words, no greeting line.";

/// The user prompt of a model writing the feedback of `turn` (1-based).
pub fn writer_prompt(task: &Task, turn: u32, unit: &[Verdict]) -> String {
    let asked = task
        .turns
        .iter()
        .find(|t| t.index == turn)
        .map_or("", |t| t.prompt.as_str());
    format!(
        "What you asked (day {turn} of the task \"{}\"):\n{asked}\n\nWhat is not right yet:\n{}\n",
        task.title,
        failed_lines(task, unit).join("\n")
    )
}

/// The feedback message written by `writer`; `Err` when the model cannot be reached (after its
/// retries) or answers nothing — the trial is then `error`.
pub fn model_message(
    writer: &dyn Judge,
    task: &Task,
    turn: u32,
    unit: &[Verdict],
) -> Result<String, String> {
    model_message_counted(writer, task, turn, unit).map(|(m, _)| m)
}

/// [`model_message`] with the calls and tokens it cost (none from the cache).
pub fn model_message_counted(
    writer: &dyn Judge,
    task: &Task,
    turn: u32,
    unit: &[Verdict],
) -> Result<(String, ModelTokens), String> {
    let (text, tokens) =
        writer.complete_counted(WRITER_SYSTEM, &writer_prompt(task, turn, unit))?;
    let text = text.trim();
    if text.is_empty() {
        return Err(format!(
            "the feedback model {} answered with no text",
            writer.model()
        ));
    }
    Ok((text.to_string(), tokens))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bureau_core::verdict::{RubricKind, TurnRef, VerdictStatus};

    fn verdict(id: &str, status: VerdictStatus, weight: f64, detail: Option<&str>) -> Verdict {
        Verdict {
            id: id.into(),
            turn: TurnRef::Turn(1),
            status,
            weight,
            kind: RubricKind::Result,
            red_line: false,
            categories: vec![],
            detail: detail.map(String::from),
            judge: None,
        }
    }

    #[test]
    fn rounds_meet_the_threshold_by_weighted_score() {
        let unit = vec![
            verdict("a", VerdictStatus::Passed, 3.0, None),
            verdict("b", VerdictStatus::Failed, 2.0, Some("no")),
        ];
        let r = round_score(&unit, 0.6);
        assert!((r.score - 0.6).abs() < 1e-12);
        assert!(r.met, "0.6 meets a threshold of 0.6");
        assert_eq!(r.failed, vec!["b".to_string()]);
        assert!(!round_score(&unit, 0.61).met);
        assert!(!round_score(&unit, 1.0).met);
    }

    #[test]
    fn the_template_names_failed_items_with_their_details_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("task.toml"),
            r#"id = "t"
title = "T"
persona = "p"
category = "c"
difficulty = "easy"
[user]
name = "Ada"
email = "ada@corp.test"
[feedback]
rounds = 1
threshold = 1.0
[[turn]]
at = "2026-03-02T09:00:00"
prompt = "Write a.txt."
[[rubric]]
id = "a-written"
description = "a.txt exists"
kind = "result"
file_exists = "a.txt"
[[rubric]]
id = "b-written"
description = "b.txt exists"
kind = "result"
file_exists = "b.txt"
"#,
        )
        .unwrap();
        let task = Task::load(dir.path()).unwrap();
        let unit = vec![
            verdict("a-written", VerdictStatus::Passed, 1.0, None),
            verdict(
                "b-written",
                VerdictStatus::Failed,
                1.0,
                Some("b.txt is\n missing"),
            ),
        ];
        let text = template_message(&task, 1, 2, &unit);
        assert_eq!(
            text,
            "I checked your work and it is not done yet (1 of 2 points met; feedback 1 of 2). Still wrong or missing:\n\n- b.txt exists (b-written): b.txt is missing\n\nPlease fix these in the office, then tell me when you are done."
        );
        assert!(!text.contains("a.txt exists"));

        // The task caps the run's rounds and sets its own threshold.
        let run = FeedbackSettings {
            rounds: 3,
            threshold: 0.6,
        };
        assert_eq!(
            run.for_task(&task),
            FeedbackSettings {
                rounds: 1,
                threshold: 1.0
            }
        );
        let off = FeedbackSettings::default();
        assert_eq!(off.for_task(&task).rounds, 0, "a task never adds rounds");

        let prompt = writer_prompt(&task, 1, &unit);
        assert!(prompt.contains("Write a.txt."), "{prompt}");
        assert!(prompt.contains("b.txt exists"), "{prompt}");
    }
}
