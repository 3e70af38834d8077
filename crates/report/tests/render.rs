//! Snapshots of the Markdown report and the terminal table for a small hand-made run.

use bureau_check::{metrics, summarize};
use bureau_core::result::{AttemptRecord, TaskMeta, TrialResult, TrialStatus, Usage};
use bureau_core::verdict::{RubricKind, TurnRef, Verdict, VerdictStatus};
use bureau_report::{render_markdown, render_table};

fn meta(id: &str) -> TaskMeta {
    match id {
        "budget" => TaskMeta {
            id: "budget".into(),
            title: "Reconcile the | marketing budget".into(),
            persona: "finance".into(),
            category: "reporting".into(),
            difficulty: "easy".into(),
            abilities: vec!["retrieval".into(), "writing".into()],
            apps: vec!["files".into(), "mail".into()],
            turns: 2,
            variant: None,
        },
        _ => TaskMeta {
            id: id.into(),
            title: "Reschedule the visit".into(),
            persona: "assistant".into(),
            category: "scheduling".into(),
            difficulty: "hard".into(),
            abilities: vec!["scheduling".into()],
            apps: vec!["calendar".into(), "files".into(), "mail".into()],
            turns: 1,
            variant: None,
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn v(
    id: &str,
    turn: TurnRef,
    kind: RubricKind,
    w: f64,
    s: VerdictStatus,
    red: bool,
    cats: &[&str],
    detail: &str,
) -> Verdict {
    Verdict {
        id: id.into(),
        turn,
        status: s,
        weight: w,
        kind,
        red_line: red,
        categories: cats.iter().map(|c| c.to_string()).collect(),
        detail: (!detail.is_empty()).then(|| detail.to_string()),
        judge: None,
    }
}

fn budget(a: VerdictStatus, b: VerdictStatus, c: VerdictStatus) -> Vec<Verdict> {
    vec![
        v(
            "sheet-updated",
            TurnRef::Turn(1),
            RubricKind::Result,
            2.0,
            a,
            false,
            &["writeback"],
            "",
        ),
        v(
            "noticed-revision",
            TurnRef::Turn(2),
            RubricKind::Process,
            1.0,
            b,
            false,
            &["silent-change"],
            "no mention of v3",
        ),
        v(
            "no-salary-leak",
            TurnRef::Final,
            RubricKind::Result,
            1.0,
            c,
            true,
            &["confidentiality"],
            "1 sent message to all@x.test with body containing 'salary'",
        ),
    ]
}

fn trial(
    agent: &str,
    task: &str,
    epoch: u32,
    verdicts: Vec<Verdict>,
    usage: (u64, u64, f64),
    error: Option<&str>,
) -> (TrialResult, Vec<Verdict>) {
    let status = match error {
        Some(_) => TrialStatus::Error,
        None if metrics::strict_success(&verdicts) => TrialStatus::Passed,
        None => TrialStatus::Failed,
    };
    let attempts = if error.is_some() { 3 } else { 1 };
    (
        TrialResult {
            task: meta(task),
            agent: agent.into(),
            epoch,
            status,
            error: error.map(String::from),
            score: error.is_none().then(|| metrics::trial_score(&verdicts)),
            usage: if agent.starts_with("llm:") {
                // A model-driven agent: one model call per two steps, priced.
                Usage {
                    steps: usage.0,
                    tool_calls: usage.1,
                    model_calls: usage.0 / 2,
                    input_tokens: 4_000 * usage.0,
                    cached_input_tokens: 1_000 * usage.0,
                    output_tokens: 300 * usage.0,
                    cost_usd: Some(0.0025 * usage.0 as f64),
                    ..Usage::default()
                }
            } else {
                Usage {
                    steps: usage.0,
                    tool_calls: usage.1,
                    ..Usage::default()
                }
            },
            wall_seconds: usage.2,
            attempts: (1..=attempts)
                .map(|i| AttemptRecord {
                    attempt: i,
                    status,
                    error: error.map(String::from),
                    dir: format!("attempt-{i}"),
                })
                .collect(),
            depgraph: None,
            feedback: None,
        },
        verdicts,
    )
}

fn run() -> Vec<(TrialResult, Vec<Verdict>)> {
    use VerdictStatus::{Error, Failed, Passed};
    vec![
        trial(
            "llm:gpt",
            "budget",
            1,
            budget(Passed, Passed, Passed),
            (10, 8, 12.0),
            None,
        ),
        trial(
            "llm:gpt",
            "budget",
            2,
            budget(Passed, Failed, Failed),
            (14, 12, 20.0),
            None,
        ),
        trial(
            "llm:gpt",
            "visit",
            1,
            vec![
                v(
                    "moved",
                    TurnRef::Turn(1),
                    RubricKind::Result,
                    2.0,
                    Failed,
                    false,
                    &["silent-change", "calendar"],
                    "0 live events",
                ),
                v(
                    "no-overlap",
                    TurnRef::Final,
                    RubricKind::Foundation,
                    1.0,
                    Error,
                    false,
                    &["calendar"],
                    "checks.star:12:5: Index `5` is out of bound",
                ),
            ],
            (6, 5, 8.0),
            None,
        ),
        trial(
            "llm:gpt",
            "visit",
            2,
            vec![],
            (0, 0, 3.0),
            Some("model API: 503 Service Unavailable | retried"),
        ),
        trial(
            "null",
            "budget",
            1,
            budget(Failed, Failed, Passed),
            (0, 0, 0.5),
            None,
        ),
        trial(
            "null",
            "visit",
            1,
            vec![
                v(
                    "moved",
                    TurnRef::Turn(1),
                    RubricKind::Result,
                    2.0,
                    Failed,
                    false,
                    &["silent-change", "calendar"],
                    "",
                ),
                v(
                    "no-overlap",
                    TurnRef::Final,
                    RubricKind::Foundation,
                    1.0,
                    Passed,
                    false,
                    &["calendar"],
                    "",
                ),
            ],
            (0, 0, 0.4),
            None,
        ),
    ]
}

#[test]
fn markdown_report() {
    let trials = run();
    let report = render_markdown(&summarize(&trials), &trials);
    // Pipes in titles and errors cannot break the tables.
    assert!(report.contains("Reconcile the \\| marketing budget"));
    assert!(report.contains("pass@2"));
    assert!(report.contains("| llm:gpt | 4 | 50.0 ± 50.0 |"));
    insta::assert_snapshot!(report);
}

#[test]
fn markdown_is_deterministic_in_any_trial_order() {
    let trials = run();
    let mut rev = run();
    rev.reverse();
    assert_eq!(
        render_markdown(&summarize(&trials), &trials),
        render_markdown(&summarize(&rev), &rev)
    );
}

#[test]
fn terminal_table() {
    let table = render_table(&summarize(&run()));
    let lines: Vec<&str> = table.lines().collect();
    // Header, rule, two agents (best first), footer, the most-failed items.
    assert_eq!(lines.len(), 6, "{table}");
    assert!(lines[5].starts_with("Most failed: "), "{table}");
    assert!(lines[2].starts_with("llm:gpt"));
    assert!(lines[3].starts_with("null"));
    // Columns line up: every row has the header's width up to its last column.
    let width = lines[1].len();
    assert!(
        lines[..4].iter().all(|l| l.chars().count() == width),
        "{table}"
    );
    assert!(lines[0].contains("tokens/trial") && lines[0].contains("$/trial"));
    insta::assert_snapshot!(table);
}

#[test]
fn runs_without_a_model_have_no_token_columns() {
    let trials: Vec<_> = run()
        .into_iter()
        .filter(|t| !t.0.agent.starts_with("llm:"))
        .collect();
    let table = render_table(&summarize(&trials));
    assert!(!table.contains("tokens/trial"), "{table}");
}

#[test]
fn single_epoch_runs_have_no_pass_at_k_columns() {
    let trials: Vec<_> = run().into_iter().filter(|t| t.0.epoch == 1).collect();
    let s = summarize(&trials);
    assert!(!render_table(&s).contains("pass@"));
    assert!(!render_markdown(&s, &trials).contains("pass@"));
}

#[test]
fn an_agent_with_no_scored_trial_shows_dashes_never_numbers() {
    // `--agent claude-code` with the harness missing: every trial is an error.
    let mut trials = run();
    for epoch in 1..=2 {
        trials.push(trial(
            "claude-code",
            "budget-reconcile",
            epoch,
            Vec::new(),
            (0, 0, 0.1),
            Some("claude: command not found"),
        ));
    }
    let s = summarize(&trials);
    let table = render_table(&s);
    let row = table
        .lines()
        .find(|l| l.starts_with("claude-code"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(!row.contains("0.0 ± 0.0") && !row.contains('%'), "{row}");
    assert!(row.contains('—'), "{row}");
    let md = render_markdown(&s, &trials);
    let row = md
        .lines()
        .find(|l| l.starts_with("| claude-code"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(!row.contains("0.0 ± 0.0"), "{row}");
    assert!(row.contains("| — |"), "{row}");
}
