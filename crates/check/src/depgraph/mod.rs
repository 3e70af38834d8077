//! Dependency-graph recognition (Workspace-Bench, §4.5 metric 3; issue 5, §5).
//!
//! From a trajectory, [`file_accesses`] derives which workspace files the agent read and
//! wrote, step by step:
//!
//! | tool | reads | writes |
//! | --- | --- | --- |
//! | `files_read` | `path` | |
//! | `files_search` | `path`, when it is a file | |
//! | `files_write`, `files_write_docx`, `files_edit` | | `path` |
//! | `files_move` | `from` | `to` |
//! | `files_edit_docx`, `files_set_cells` | `path`, when it existed before | `path` |
//! | `files_export_pdf`, `files_pdf_to_docx`, `files_image_to_pdf` | `source` | `path` |
//! | `sheets_import` | `path` | |
//! | `sheets_export`, `mail_save_attachment`, `chat_save_file`, `kb_save_attachment` | | `path` |
//! | `mail_send`, `mail_reply`, `mail_forward` | `attachments` | |
//! | `chat_post` | `files` | |
//! | `kb_attach` | `path` | |
//! | `shell_run` | by [`shell::shell_accesses`] | by [`shell::shell_accesses`] |
//!
//! Only calls that succeeded count. Within a step, reads come before writes.
//!
//! [`predict`] builds the predicted graph: its nodes are every file read or written, its edges
//! every (file read, file written later or in the same step) pair of different files — "every
//! file read before a write → the written file". [`score`] compares it with the task's
//! `file_deps` by Workspace-Bench's formulas: NP = |V_pred ∩ V_gt| / |V_pred|,
//! NR = |V_pred ∩ V_gt| / |V_gt|, NF1 = 2·NP·NR / (NP + NR), and the same over edges. An empty
//! set is only right against an empty set: with no prediction, precision is 1 if the truth is
//! empty too and 0 otherwise; recall against an empty truth is 1 only for an empty
//! prediction; F1 is 0 when precision + recall is 0.

pub mod shell;

use std::collections::{BTreeMap, BTreeSet};

use bureau_core::result::{DepGraphScore, Prf};
use bureau_core::task::{EventKind, FileDepGraph, Task, normalize_rel_path};
use bureau_core::tool::ToolOutcome;
use bureau_core::trajectory::Step;
use bureau_world::World;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::shell::{FileState, glob_match, shell_accesses};

/// The tool that runs shell commands (its argument: `{"command": "..."}`).
pub const SHELL_TOOL: &str = "shell_run";

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    Read,
    Write,
}

/// One file access of the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileAccess {
    /// Index of the step in the trajectory.
    pub step: usize,
    pub turn: u32,
    pub path: String,
    pub access: Access,
}

/// What is known about the workspace over the trial, to resolve shell words.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceFacts {
    /// Files when the world was built.
    pub baseline: BTreeSet<String>,
    /// Files at the end of the trial.
    pub end: BTreeSet<String>,
    /// Folders (at the end, and parents of every known file).
    pub dirs: BTreeSet<String>,
    /// Files the task's events add or replace, with the first turn they exist.
    pub added: BTreeMap<String, u32>,
    /// The workspace root as absolute paths may name it.
    pub roots: Vec<String>,
}

impl WorkspaceFacts {
    /// The facts of a world at the end of a trial of `task`.
    pub fn of_world(task: &Task, world: &World) -> WorkspaceFacts {
        let listing = world.files().list("", true).unwrap_or_default();
        let end: BTreeSet<String> = listing
            .iter()
            .filter(|f| f.kind == "file")
            .map(|f| f.path.clone())
            .collect();
        let mut dirs: BTreeSet<String> = listing
            .iter()
            .filter(|f| f.kind == "dir")
            .map(|f| f.path.clone())
            .collect();
        let mut baseline = end.clone();
        if let Ok(changed) = world.changed_files() {
            for c in &changed.created {
                baseline.remove(c);
            }
            baseline.extend(changed.deleted);
        }
        let mut added = BTreeMap::new();
        for turn in &task.turns {
            for e in &turn.events {
                if let EventKind::AddFile { path, .. } | EventKind::ReplaceFile { path, .. } =
                    &e.kind
                    && let Some(p) = normalize_rel_path(path)
                {
                    added.entry(p).or_insert(turn.index);
                }
            }
        }
        for f in baseline.iter().chain(&end).chain(added.keys()) {
            let mut p = f.as_str();
            while let Some((parent, _)) = p.rsplit_once('/') {
                dirs.insert(parent.to_string());
                p = parent;
            }
        }
        WorkspaceFacts {
            baseline,
            end,
            dirs,
            added,
            roots: crate::outputs::workspace_roots(world),
        }
    }

    fn resolve(&self, raw: &str) -> Option<String> {
        let raw = raw.trim();
        if raw.starts_with('/') {
            for root in &self.roots {
                let root = root.trim_end_matches('/');
                if let Some(rest) = raw.strip_prefix(root)
                    && rest.starts_with('/')
                {
                    return normalize_rel_path(&rest[1..]);
                }
            }
            return None;
        }
        normalize_rel_path(raw)
    }
}

/// The file state seen by the shell parser at one step.
struct StepState<'a> {
    facts: &'a WorkspaceFacts,
    turn: u32,
    written: &'a BTreeSet<String>,
}

impl FileState for StepState<'_> {
    fn exists_now(&self, p: &str) -> bool {
        self.facts.baseline.contains(p)
            || self.written.contains(p)
            || self.facts.added.get(p).is_some_and(|t| *t <= self.turn)
    }
    fn exists_later(&self, p: &str) -> bool {
        self.facts.end.contains(p)
    }
    fn is_dir(&self, p: &str) -> bool {
        self.facts.dirs.contains(p)
    }
    fn glob(&self, pattern: &str) -> Vec<String> {
        let known: BTreeSet<&String> = self
            .facts
            .baseline
            .iter()
            .chain(self.written)
            .chain(self.facts.added.keys())
            .collect();
        known
            .into_iter()
            .filter(|f| self.exists_now(f) && glob_match(pattern, f))
            .cloned()
            .collect()
    }
    fn roots(&self) -> &[String] {
        &self.facts.roots
    }
}

fn arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// Every file read and written by the agent's successful tool calls, in order (see the module
/// documentation for the tools).
pub fn file_accesses(steps: &[Step], facts: &WorkspaceFacts) -> Vec<FileAccess> {
    let mut out = Vec::new();
    let mut written: BTreeSet<String> = BTreeSet::new();
    for (i, step) in steps.iter().enumerate() {
        let Some((tool, args, outcome)) = step.as_tool_call() else {
            continue;
        };
        if matches!(outcome, ToolOutcome::Error { .. }) {
            continue;
        }
        let mut reads: Vec<String> = Vec::new();
        let mut writes: Vec<String> = Vec::new();
        let mut read = |k: &str| {
            if let Some(p) = arg(args, k).and_then(|p| facts.resolve(p)) {
                reads.push(p);
            }
        };
        match tool {
            "files_read" | "files_ocr" | "sheets_import" | "kb_attach" => read("path"),
            "files_search" => {
                if let Some(p) = arg(args, "path").and_then(|p| facts.resolve(p))
                    && !facts.dirs.contains(&p)
                {
                    reads.push(p);
                }
            }
            "files_move" => {
                if let Some(p) = arg(args, "from").and_then(|p| facts.resolve(p))
                    && !facts.dirs.contains(&p)
                {
                    reads.push(p);
                    if let Some(to) = arg(args, "to").and_then(|p| facts.resolve(p)) {
                        writes.push(to);
                    }
                }
            }
            "files_edit_docx" | "files_set_cells" => {
                // An edit reads the file it changes (files_set_cells may create it).
                if let Some(p) = arg(args, "path").and_then(|p| facts.resolve(p)) {
                    if tool == "files_edit_docx"
                        || facts.baseline.contains(&p)
                        || facts.added.contains_key(&p)
                        || written.contains(&p)
                    {
                        reads.push(p.clone());
                    }
                    writes.push(p);
                }
            }
            "files_export_pdf" | "files_pdf_to_docx" | "files_image_to_pdf" => {
                read("source");
                if let Some(p) = arg(args, "path").and_then(|p| facts.resolve(p)) {
                    writes.push(p);
                }
            }
            "mail_send" | "mail_reply" | "mail_forward" | "chat_post" => {
                let list = if tool == "chat_post" {
                    "files"
                } else {
                    "attachments"
                };
                for a in args
                    .get(list)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(p) = a.as_str().and_then(|p| facts.resolve(p)) {
                        reads.push(p);
                    }
                }
            }
            "files_write"
            | "files_write_docx"
            | "files_edit"
            | "sheets_export"
            | "mail_save_attachment"
            | "chat_save_file"
            | "kb_save_attachment" => {
                if let Some(p) = arg(args, "path").and_then(|p| facts.resolve(p)) {
                    writes.push(p);
                }
            }
            SHELL_TOOL => {
                if let Some(cmd) = arg(args, "command") {
                    let state = StepState {
                        facts,
                        turn: step.turn,
                        written: &written,
                    };
                    let a = shell_accesses(cmd, &state);
                    reads.extend(a.reads);
                    writes.extend(a.writes);
                }
            }
            _ => {}
        }
        for path in reads {
            out.push(FileAccess {
                step: i,
                turn: step.turn,
                path,
                access: Access::Read,
            });
        }
        for path in writes {
            written.insert(path.clone());
            out.push(FileAccess {
                step: i,
                turn: step.turn,
                path,
                access: Access::Write,
            });
        }
    }
    out
}

/// The predicted graph: nodes are every file accessed, edges every (file read, file written
/// at or after the read's step) pair of different files.
pub fn predict(accesses: &[FileAccess]) -> FileDepGraph {
    let mut g = FileDepGraph::default();
    let mut read_so_far: BTreeSet<&str> = BTreeSet::new();
    for a in accesses {
        g.nodes.insert(a.path.clone());
        match a.access {
            Access::Read => {
                read_so_far.insert(&a.path);
            }
            Access::Write => {
                for r in &read_so_far {
                    if *r != a.path {
                        g.edges.insert((r.to_string(), a.path.clone()));
                    }
                }
            }
        }
    }
    g
}

/// Precision, recall and F1 of a prediction of `predicted` items, `matched` of them right,
/// against `truth` items (the empty-set conventions are in the module documentation).
pub fn prf(predicted: usize, truth: usize, matched: usize) -> Prf {
    let precision = if predicted == 0 {
        if truth == 0 { 1.0 } else { 0.0 }
    } else {
        matched as f64 / predicted as f64
    };
    let recall = if truth == 0 {
        if predicted == 0 { 1.0 } else { 0.0 }
    } else {
        matched as f64 / truth as f64
    };
    let f1 = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    Prf {
        precision,
        recall,
        f1,
    }
}

/// Node and edge precision / recall / F1 of `predicted` against `truth`.
pub fn score(predicted: &FileDepGraph, truth: &FileDepGraph) -> DepGraphScore {
    let matched_nodes = predicted.nodes.intersection(&truth.nodes).count();
    let matched_edges = predicted.edges.intersection(&truth.edges).count();
    DepGraphScore {
        nodes: prf(predicted.nodes.len(), truth.nodes.len(), matched_nodes),
        edges: prf(predicted.edges.len(), truth.edges.len(), matched_edges),
        predicted_nodes: predicted.nodes.len() as u32,
        truth_nodes: truth.nodes.len() as u32,
        matched_nodes: matched_nodes as u32,
        predicted_edges: predicted.edges.len() as u32,
        truth_edges: truth.edges.len() as u32,
        matched_edges: matched_edges as u32,
    }
}

/// `depgraph.json` of a trial: the predicted and true graphs and the score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DepGraphRecord {
    pub schema: String,
    pub score: DepGraphScore,
    pub truth: GraphJson,
    pub predicted: GraphJson,
    /// Every file access the prediction was built from, in order.
    pub accesses: Vec<FileAccess>,
}

/// A graph as JSON: sorted nodes and `[from, to]` edges.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphJson {
    pub nodes: Vec<String>,
    pub edges: Vec<(String, String)>,
}

impl From<&FileDepGraph> for GraphJson {
    fn from(g: &FileDepGraph) -> GraphJson {
        GraphJson {
            nodes: g.nodes.iter().cloned().collect(),
            edges: g.edges.iter().cloned().collect(),
        }
    }
}

/// The schema id of `depgraph.json`.
pub const DEPGRAPH_SCHEMA: &str = "bureau.depgraph/1";

/// The dependency-graph record of a trial of `task` whose world is at its end state; `None`
/// when the task has no `file_deps`.
pub fn trial_depgraph(task: &Task, world: &World, steps: &[Step]) -> Option<DepGraphRecord> {
    let truth = task.dep_graph()?;
    let facts = WorkspaceFacts::of_world(task, world);
    let accesses = file_accesses(steps, &facts);
    let predicted = predict(&accesses);
    Some(DepGraphRecord {
        schema: DEPGRAPH_SCHEMA.to_string(),
        score: score(&predicted, &truth),
        truth: GraphJson::from(&truth),
        predicted: GraphJson::from(&predicted),
        accesses,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(turn: u32, tool: &str, args: Value) -> Step {
        Step {
            turn,
            kind: bureau_core::trajectory::StepKind::ToolCall {
                tool: tool.into(),
                args,
                outcome: ToolOutcome::ok(json!({})),
            },
        }
    }

    fn failed(turn: u32, tool: &str, args: Value) -> Step {
        Step {
            turn,
            kind: bureau_core::trajectory::StepKind::ToolCall {
                tool: tool.into(),
                args,
                outcome: ToolOutcome::Error {
                    message: "no such file".into(),
                },
            },
        }
    }

    fn facts() -> WorkspaceFacts {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<BTreeSet<_>>();
        WorkspaceFacts {
            baseline: s(&["a.csv", "b.csv", "notes.md", "policy.md"]),
            end: s(&[
                "a.csv",
                "b.csv",
                "notes.md",
                "policy.md",
                "out/report.md",
                "late.csv",
            ]),
            dirs: s(&["out"]),
            added: [("late.csv".to_string(), 2)].into_iter().collect(),
            roots: vec!["/ws".into()],
        }
    }

    fn truth(edges: &[(&str, &str)], lone: &[&str]) -> FileDepGraph {
        let mut g = FileDepGraph::default();
        for (f, t) in edges {
            g.nodes.insert(f.to_string());
            g.nodes.insert(t.to_string());
            g.edges.insert((f.to_string(), t.to_string()));
        }
        g.nodes.extend(lone.iter().map(|s| s.to_string()));
        g
    }

    fn graph_of(steps: &[Step]) -> FileDepGraph {
        predict(&file_accesses(steps, &facts()))
    }

    fn edge(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }

    #[test]
    fn office_edits_and_conversions_read_and_write() {
        let steps = vec![
            // An edit of a seeded file reads it and writes it.
            call(
                1,
                "files_set_cells",
                json!({"path": "a.csv.xlsx", "cells": {"A1": 1}}),
            ),
            call(
                1,
                "files_edit_docx",
                json!({"path": "notes.md", "operations": []}),
            ),
            call(
                1,
                "files_image_to_pdf",
                json!({"source": "b.csv", "path": "out/scan.pdf"}),
            ),
            call(
                1,
                "files_pdf_to_docx",
                json!({"source": "out/scan.pdf", "path": "out/scan.docx"}),
            ),
            // A second edit of the file the first created reads it.
            call(
                1,
                "files_set_cells",
                json!({"path": "a.csv.xlsx", "cells": {"A2": 2}}),
            ),
        ];
        let got: Vec<(String, Access)> = file_accesses(&steps, &facts())
            .into_iter()
            .map(|a| (a.path, a.access))
            .collect();
        let f = |p: &str, a: Access| (p.to_string(), a);
        assert_eq!(
            got,
            vec![
                f("a.csv.xlsx", Access::Write),
                f("notes.md", Access::Read),
                f("notes.md", Access::Write),
                f("b.csv", Access::Read),
                f("out/scan.pdf", Access::Write),
                f("out/scan.pdf", Access::Read),
                f("out/scan.docx", Access::Write),
                f("a.csv.xlsx", Access::Read),
                f("a.csv.xlsx", Access::Write),
            ]
        );
    }

    #[test]
    fn reads_before_a_write_become_edges_to_it() {
        let steps = vec![
            call(1, "files_read", json!({"path": "a.csv"})),
            call(1, "files_read", json!({"path": "./b.csv"})),
            call(1, "files_list", json!({"path": ""})),
            call(
                1,
                "files_write",
                json!({"path": "out/report.md", "content": "x"}),
            ),
            // Read after the write: a node, but no edge into the earlier write.
            call(1, "files_read", json!({"path": "notes.md"})),
        ];
        let g = graph_of(&steps);
        assert_eq!(
            g.nodes.iter().map(String::as_str).collect::<Vec<_>>(),
            ["a.csv", "b.csv", "notes.md", "out/report.md"]
        );
        assert_eq!(
            g.edges,
            [
                edge("a.csv", "out/report.md"),
                edge("b.csv", "out/report.md")
            ]
            .into_iter()
            .collect()
        );
        // Against a truth a.csv, b.csv → report, policy.md → report:
        let t = truth(
            &[
                ("a.csv", "out/report.md"),
                ("b.csv", "out/report.md"),
                ("policy.md", "out/report.md"),
            ],
            &[],
        );
        let s = score(&g, &t);
        // Nodes: predicted 4, truth 4, matched 3 → P = R = F1 = 0.75.
        assert_eq!(
            (s.predicted_nodes, s.truth_nodes, s.matched_nodes),
            (4, 4, 3)
        );
        assert_eq!(s.nodes, prf(4, 4, 3));
        assert!((s.nodes.f1 - 0.75).abs() < 1e-12);
        // Edges: predicted 2, truth 3, matched 2 → P = 1, R = 2/3, F1 = 0.8.
        assert_eq!(s.edges.precision, 1.0);
        assert!((s.edges.recall - 2.0 / 3.0).abs() < 1e-12);
        assert!((s.edges.f1 - 0.8).abs() < 1e-12);
    }

    #[test]
    fn no_predictions_score_zero_against_a_truth() {
        let g = graph_of(&[]);
        let s = score(&g, &truth(&[("a.csv", "out/report.md")], &[]));
        assert_eq!(
            s.nodes,
            Prf {
                precision: 0.0,
                recall: 0.0,
                f1: 0.0
            }
        );
        assert_eq!(
            s.edges,
            Prf {
                precision: 0.0,
                recall: 0.0,
                f1: 0.0
            }
        );
        // Failed calls predict nothing.
        let g = graph_of(&[failed(1, "files_read", json!({"path": "a.csv"}))]);
        assert!(g.nodes.is_empty());
    }

    #[test]
    fn writes_without_reads_give_nodes_but_no_edges() {
        let g = graph_of(&[call(1, "files_write", json!({"path": "out/report.md"}))]);
        assert_eq!(g.nodes.len(), 1);
        assert!(g.edges.is_empty());
        // A truth with no edges: an empty edge prediction is exactly right.
        let s = score(&g, &truth(&[], &["out/report.md"]));
        assert_eq!(
            s.nodes,
            Prf {
                precision: 1.0,
                recall: 1.0,
                f1: 1.0
            }
        );
        assert_eq!(
            s.edges,
            Prf {
                precision: 1.0,
                recall: 1.0,
                f1: 1.0
            }
        );
        // Edges predicted against a truth without edges: precision and recall 0.
        let g = graph_of(&[
            call(1, "files_read", json!({"path": "a.csv"})),
            call(1, "files_write", json!({"path": "out/report.md"})),
        ]);
        let s = score(&g, &truth(&[], &["out/report.md"]));
        assert_eq!(
            s.edges,
            Prf {
                precision: 0.0,
                recall: 0.0,
                f1: 0.0
            }
        );
        assert_eq!(s.nodes, prf(2, 1, 1));
    }

    #[test]
    fn self_edges_and_repeated_writes() {
        let g = graph_of(&[
            call(1, "files_read", json!({"path": "notes.md"})),
            call(
                1,
                "files_edit",
                json!({"path": "notes.md", "old": "a", "new": "b"}),
            ),
            call(1, "files_write", json!({"path": "out/report.md"})),
            call(1, "files_write", json!({"path": "out/report.md"})),
        ]);
        assert_eq!(
            g.edges,
            [edge("notes.md", "out/report.md")].into_iter().collect()
        );
    }

    #[test]
    fn tools_with_sources_and_targets() {
        let g = graph_of(&[
            call(
                1,
                "files_export_pdf",
                json!({"source": "notes.md", "path": "out/notes.pdf"}),
            ),
            call(1, "files_move", json!({"from": "b.csv", "to": "out/b.csv"})),
            call(1, "files_move", json!({"from": "out", "to": "archive"})),
            call(
                1,
                "mail_send",
                json!({"to": ["x@y.test"], "attachments": ["a.csv"]}),
            ),
            call(1, "sheets_import", json!({"path": "policy.md"})),
            call(1, "files_search", json!({"query": "x", "path": "out"})),
        ]);
        assert_eq!(
            g.nodes.iter().map(String::as_str).collect::<Vec<_>>(),
            [
                "a.csv",
                "b.csv",
                "notes.md",
                "out/b.csv",
                "out/notes.pdf",
                "policy.md"
            ]
        );
        assert_eq!(
            g.edges,
            [
                edge("notes.md", "out/notes.pdf"),
                edge("notes.md", "out/b.csv"),
                edge("b.csv", "out/b.csv"),
            ]
            .into_iter()
            .collect()
        );
    }

    #[test]
    fn chat_files_and_kb_attachments_are_reads_and_writes() {
        let g = graph_of(&[
            call(
                1,
                "chat_post",
                json!({"channel": "ops", "text": "chart", "files": ["chart.png"]}),
            ),
            call(
                1,
                "chat_save_file",
                json!({"id": "c1", "filename": "w.jpg", "path": "in/w.jpg"}),
            ),
            call(1, "kb_attach", json!({"page": "Ops", "path": "notes.md"})),
            call(
                1,
                "kb_save_attachment",
                json!({"page": "Ops", "filename": "f.pdf", "path": "in/f.pdf"}),
            ),
        ]);
        assert_eq!(
            g.nodes.iter().map(String::as_str).collect::<Vec<_>>(),
            ["chart.png", "in/f.pdf", "in/w.jpg", "notes.md"]
        );
        assert_eq!(
            g.edges,
            [
                edge("chart.png", "in/w.jpg"),
                edge("chart.png", "in/f.pdf"),
                edge("notes.md", "in/f.pdf"),
            ]
            .into_iter()
            .collect()
        );
    }

    #[test]
    fn shell_commands_feed_the_graph_with_the_state_of_their_turn() {
        let g = graph_of(&[
            call(
                1,
                SHELL_TOOL,
                json!({"command": "cat a.csv b.csv > out/report.md"}),
            ),
            // late.csv is added by the task in turn 2: in turn 1 it does not exist yet.
            call(1, SHELL_TOOL, json!({"command": "wc -l late.csv"})),
            call(
                2,
                SHELL_TOOL,
                json!({"command": "cat late.csv >> out/report.md"}),
            ),
        ]);
        assert!(g.edges.contains(&edge("a.csv", "out/report.md")));
        assert!(g.edges.contains(&edge("late.csv", "out/report.md")));
        let late_reads = file_accesses(
            &[call(1, SHELL_TOOL, json!({"command": "wc -l late.csv"}))],
            &facts(),
        );
        // In turn 1 late.csv does not exist yet but exists at the end: the command made it.
        assert_eq!(late_reads.len(), 1);
        assert_eq!(late_reads[0].access, Access::Write);
    }

    #[test]
    fn absolute_paths_under_the_root_count() {
        let g = graph_of(&[call(1, "files_read", json!({"path": "/ws/a.csv"}))]);
        assert!(g.nodes.contains("a.csv"));
        let g = graph_of(&[call(1, "files_read", json!({"path": "/etc/a.csv"}))]);
        assert!(g.nodes.is_empty());
    }

    #[test]
    fn prf_conventions() {
        assert_eq!(
            prf(0, 0, 0),
            Prf {
                precision: 1.0,
                recall: 1.0,
                f1: 1.0
            }
        );
        assert_eq!(
            prf(0, 3, 0),
            Prf {
                precision: 0.0,
                recall: 0.0,
                f1: 0.0
            }
        );
        assert_eq!(
            prf(2, 0, 0),
            Prf {
                precision: 0.0,
                recall: 0.0,
                f1: 0.0
            }
        );
        assert_eq!(
            prf(4, 2, 2),
            Prf {
                precision: 0.5,
                recall: 1.0,
                f1: 2.0 / 3.0
            }
        );
        assert_eq!(prf(3, 3, 0).f1, 0.0);
    }
}
