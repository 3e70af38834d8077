//! What changed in a trial's world between two snapshots, per service (filled in by the
//! world-state work of issue 17; until it lands, only the turns are listed).

use std::path::Path;

/// The changes of one turn.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct WorldChanges {
    /// The snapshot compared against (0: the seeded world), if it could be read.
    pub since: Option<u32>,
}

/// The turns whose snapshots the trial has.
pub fn turns(trial_dir: &Path) -> Vec<u32> {
    let mut out: Vec<u32> = std::fs::read_dir(trial_dir.join("snapshots"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.strip_prefix("turn-")?
                        .strip_suffix(".json")?
                        .parse()
                        .ok()
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The changes of `turn`.
pub fn turn_changes(_trial_dir: &Path, _turn: u32) -> WorldChanges {
    WorldChanges::default()
}

/// The changes as an HTML fragment.
pub fn render_html(_changes: &WorldChanges) -> String {
    String::new()
}

/// The anchor id of a world object.
pub fn object_anchor(kind: &str, key: &str) -> String {
    let slug: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("{kind}-{slug}")
}
