//! The folder tree: roots, storyline places, one deep archive trail, grown at random.

use std::collections::BTreeSet;

use super::layout::Layout;
use crate::GenSpec;
use crate::company::Company;
use crate::rng::Rng;

const GENERIC: &[&str] = &[
    "drafts",
    "final",
    "old",
    "misc",
    "shared",
    "review",
    "backup",
    "working",
    "templates",
    "exports",
    "raw",
    "processed",
    "New folder",
    "to sort",
    "v2",
    "handover",
    "notes",
    "temp",
];

/// Folders: every path (no trailing slash), with the index of its root.
pub(super) struct Folders {
    pub(super) all: Vec<(String, usize)>,
    pub(super) by_root: Vec<Vec<usize>>,
}

pub(super) fn depth(p: &str) -> usize {
    p.split('/').count()
}

pub(super) fn grow_folders(spec: &GenSpec, c: &Company, lay: &Layout, rng: &mut Rng) -> Folders {
    let target = (spec.files / 5).clamp(lay.roots.len() * 2, 40_000);
    let mut set: BTreeSet<String> = BTreeSet::new();
    let mut all: Vec<(String, usize)> = Vec::new();
    let push = |p: String, r: usize, set: &mut BTreeSet<String>, all: &mut Vec<(String, usize)>| {
        if set.insert(p.clone()) {
            all.push((p, r));
        }
    };
    for (i, r) in lay.roots.iter().enumerate() {
        push(r.name.to_string(), i, &mut set, &mut all);
    }
    // The storyline places, and one deep trail (depth 8) in the archive.
    let pl = &lay.places;
    for place in [
        pl.data,
        pl.exports,
        pl.reports,
        pl.decks,
        pl.mail,
        pl.meetings,
        pl.team,
        pl.chains,
        pl.analysis,
        pl.archive,
    ] {
        let r = lay
            .roots
            .iter()
            .position(|r| place.starts_with(r.name))
            .unwrap_or(0);
        let mut acc = String::new();
        for part in place.split('/') {
            if !acc.is_empty() {
                acc.push('/');
            }
            acc.push_str(part);
            push(acc.clone(), r, &mut set, &mut all);
        }
    }
    let arch = lay
        .roots
        .iter()
        .position(|r| r.name == "archive")
        .unwrap_or(0);
    let region = c.regions[rng.below(c.regions.len())].code;
    let trail = format!(
        "archive/{}/Q{}/{region}/projects/old/backup/misc",
        c.year - 1,
        1 + rng.below(4)
    );
    let mut acc = String::new();
    for part in trail.split('/') {
        if !acc.is_empty() {
            acc.push('/');
        }
        acc.push_str(part);
        push(acc.clone(), arch, &mut set, &mut all);
    }
    let years: Vec<String> = (0..3).map(|i| (c.year - i).to_string()).collect();
    let mut guard = 0;
    while all.len() < target && guard < target * 20 {
        guard += 1;
        let (parent, r) = all[rng.below(all.len())].clone();
        let d = depth(&parent);
        // Shallow folders branch more; nothing below depth 8.
        if d >= 8 || !rng.chance(1.0 / d as f64) {
            continue;
        }
        let words = lay.roots[r].words;
        let name = match rng.below(10) {
            0..=4 => rng.pick(words).to_string(),
            5 => rng.pick(&years).clone(),
            6 => format!("Q{}", 1 + rng.below(4)),
            7 => format!("{}-{:02}", rng.pick(&years), 1 + rng.below(12)),
            8 => rng.pick(GENERIC).to_string(),
            _ => format!(
                "{}-{:03}",
                rng.pick(&["run", "batch", "case", "week", "lot"]),
                rng.below(200)
            ),
        };
        if parent.ends_with(&format!("/{name}")) || parent == name {
            continue;
        }
        push(format!("{parent}/{name}"), r, &mut set, &mut all);
    }
    let mut by_root = vec![Vec::new(); lay.roots.len()];
    for (i, (_, r)) in all.iter().enumerate() {
        by_root[*r].push(i);
    }
    Folders { all, by_root }
}
