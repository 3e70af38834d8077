//! The plan of a workspace: folders, storylines (planted facts, version chains, derived
//! artefacts), filler files and noise, then rendering (in parallel, deterministically).
//!
//! Split by seam: `layout` (each persona's folders, places and weights), `folders` (the tree),
//! `stories` (the storylines that plant facts), `evidence` (the storyline of photographed
//! and scanned media), `fillers` (names of filler files); the plan itself and rendering here.

mod evidence;
mod fillers;
mod folders;
mod layout;
mod stories;

pub(crate) use layout::owner_of;

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Duration, NaiveDate};

use fillers::filler_name;
use folders::grow_folders;
use layout::layout;
use stories::{analysis, chain, numbers, people};

use crate::company::Company;
use crate::content::Body;
use crate::manifest::{Chain, Derivation, Fact};
use crate::render::{self, FileCtx};
use crate::rng::Rng;
use crate::types::{Category, FileType, TYPES, ty};
use crate::{GenError, GenSpec};

/// Why a file exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Storyline,
    Filler,
    Duplicate,
}

pub(crate) struct Planned {
    pub path: String,
    pub ty: &'static FileType,
    pub body: Body,
    pub date: NaiveDate,
    pub role: Role,
}

#[derive(Default)]
pub(crate) struct Plan {
    pub files: Vec<Planned>,
    pub facts: Vec<Fact>,
    pub chains: Vec<Chain>,
    pub derivations: Vec<Derivation>,
    taken: BTreeSet<String>,
}

impl Plan {
    /// Every path the plan holds.
    pub(crate) fn taken(&self) -> &BTreeSet<String> {
        &self.taken
    }
}

impl Plan {
    /// Add a file; a taken path gets " (2)", " (3)"... before the suffix. Returns its path.
    pub(super) fn add(
        &mut self,
        path: String,
        ty: &'static FileType,
        body: Body,
        date: NaiveDate,
        role: Role,
    ) -> String {
        let mut p = path;
        if self.taken.contains(&p) {
            let (dir, name) = match p.rsplit_once('/') {
                Some((d, n)) => (format!("{d}/"), n.to_string()),
                None => (String::new(), p.clone()),
            };
            let (stem, suffix) = if ty.fixed_name || !name.ends_with(ty.suffix) {
                // Fixed names cannot take a counter; the copy goes to a sibling folder.
                (name.clone(), String::new())
            } else {
                (
                    name[..name.len() - ty.suffix.len()].to_string(),
                    ty.suffix.to_string(),
                )
            };
            let mut n = 2;
            loop {
                let cand = if suffix.is_empty() {
                    format!("{}-{n}/{stem}", dir.trim_end_matches('/'))
                } else if ty.category == Category::Code {
                    // Code keeps identifier-safe names.
                    format!("{dir}{stem}_{n}{suffix}")
                } else {
                    format!("{dir}{stem} ({n}){suffix}")
                };
                if !self.taken.contains(&cand) {
                    p = cand;
                    break;
                }
                n += 1;
            }
        }
        self.taken.insert(p.clone());
        self.files.push(Planned {
            path: p.clone(),
            ty,
            body,
            date,
            role,
        });
        p
    }

    pub(super) fn derive(&mut self, source: &str, derived: &str, relation: &str) {
        self.derivations.push(Derivation {
            source: source.to_string(),
            derived: derived.to_string(),
            relation: relation.to_string(),
        });
    }

    pub(super) fn fact(
        &mut self,
        id: String,
        statement: String,
        value: String,
        files: Vec<String>,
    ) {
        let mut files = files;
        files.sort();
        self.facts.push(Fact {
            id,
            statement,
            value,
            files,
        });
    }
}

pub(crate) fn plan(spec: &GenSpec, c: &Company) -> Plan {
    let lay = layout(spec.persona);
    let me = owner_of(spec.persona);
    let mut rng = Rng::new(spec.seed, "plan");
    let folders = grow_folders(spec, c, lay, &mut rng);
    let mut plan = Plan::default();
    // Storylines scale with the workspace: one of each per ~400 files.
    let reps = (spec.files / 400).max(1);
    people(&mut plan, c, lay);
    for k in 0..reps {
        let mut r = Rng::new(spec.seed, &format!("numbers/{k}"));
        numbers(&mut plan, c, lay, k, &mut r, me);
        let mut r = Rng::new(spec.seed, &format!("chain/{k}"));
        chain(&mut plan, c, lay, k, &mut r, me);
        let mut r = Rng::new(spec.seed, &format!("analysis/{k}"));
        analysis(&mut plan, c, lay, spec.persona, k, &mut r, me);
        if plan.files.len() + 12 > spec.files {
            break;
        }
    }
    // Evidence media (photos, scans, charts): one set per ~2,000 files, at most four — they
    // take longer to draw than any other file.
    for k in 0..(spec.files / 2_000).clamp(1, 4) {
        if plan.files.len() + evidence::FILES + 12 > spec.files {
            break;
        }
        let mut r = Rng::new(spec.seed, &format!("evidence/{k}"));
        evidence::evidence(&mut plan, c, lay, k, &mut r, me);
    }
    // Fillers: one of every type first (coverage), then by the persona's weights.
    let remaining = spec.files.saturating_sub(plan.files.len());
    let dupes = remaining / 50;
    let n_fill = remaining - dupes;
    let cat_w: BTreeMap<Category, u32> = lay.weights.iter().copied().collect();
    let type_w: Vec<u32> = TYPES
        .iter()
        .map(|t| {
            cat_w.get(&t.category).copied().unwrap_or(1) * t.weight * 100 / cat_total(t.category)
        })
        .collect();
    let mut order: Vec<usize> = (0..TYPES.len()).collect();
    rng.shuffle(&mut order);
    let days_span = 365 * 2;
    for i in 0..n_fill {
        let ti = if i < order.len() {
            order[i]
        } else {
            rng.weighted(&type_w)
        };
        let ft = &TYPES[ti];
        // Folder: the first pass gives every folder a file; then roots that hold the category.
        let fi = if i >= order.len() && i - order.len() < folders.all.len() {
            i - order.len()
        } else {
            let roots: Vec<usize> = lay
                .roots
                .iter()
                .enumerate()
                .filter(|(_, r)| r.cats.is_empty() || r.cats.contains(&ft.category))
                .map(|(j, _)| j)
                .collect();
            let r = if roots.is_empty() {
                rng.below(lay.roots.len())
            } else {
                *rng.pick(&roots)
            };
            let list = &folders.by_root[r];
            if list.is_empty() {
                0
            } else {
                list[rng.below(list.len())]
            }
        };
        let dir = &folders.all[fi].0;
        let date = c.day(rng.range(0, days_span));
        let name = filler_name(ft, c, &mut rng, date);
        plan.add(
            format!("{dir}/{name}"),
            ft,
            Body::Filler,
            date,
            Role::Filler,
        );
    }
    // Duplicates: byte-identical copies in backup-ish places, some with "Copy of" names.
    let originals = plan.files.len();
    let mut added = 0;
    let mut attempts = 0;
    while added < dupes {
        attempts += 1;
        if attempts > dupes * 20 {
            // Could not place a copy without renaming code; fill with a note instead.
            let date = c.day(rng.range(0, days_span));
            plan.add(
                format!("{}/notes.txt", folders.all[rng.below(folders.all.len())].0),
                ty("txt"),
                Body::Filler,
                date,
                Role::Filler,
            );
            added += 1;
            continue;
        }
        let src = rng.below(originals);
        let (ft, path, date) = (
            plan.files[src].ty,
            plan.files[src].path.clone(),
            plan.files[src].date,
        );
        let name = path.rsplit('/').next().unwrap_or(&path).to_string();
        let arch = &folders.by_root[lay
            .roots
            .iter()
            .position(|r| r.name == "archive")
            .unwrap_or(0)];
        let dir = &folders.all[arch[rng.below(arch.len())]].0;
        let name = if ft.category != Category::Code && !ft.fixed_name && rng.chance(0.4) {
            format!("Copy of {name}")
        } else {
            name
        };
        if (ft.category == Category::Code || ft.fixed_name)
            && plan.taken.contains(&format!("{dir}/{name}"))
        {
            // A renamed copy of code would no longer compile (class and file names differ).
            continue;
        }
        added += 1;
        plan.add(
            format!("{dir}/{name}"),
            ft,
            Body::CopyOf(src),
            date + Duration::days(rng.range(0, 30)),
            Role::Duplicate,
        );
    }
    plan
}

fn cat_total(cat: Category) -> u32 {
    TYPES
        .iter()
        .filter(|t| t.category == cat)
        .map(|t| t.weight)
        .sum::<u32>()
        .max(1)
}

/// Render every planned file. Each file has its own random stream (seed, path), so files
/// render in parallel and the result does not depend on scheduling or the number of workers.
pub(crate) fn render_all(
    spec: &GenSpec,
    c: &Company,
    plan: &Plan,
) -> Result<Vec<Vec<u8>>, GenError> {
    let n = plan.files.len();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(16);
    // Worker w renders files w, w + workers, ...: files that take long to draw (evidence
    // media, planned one after another) are shared out rather than left to one worker.
    let mut out: Vec<Option<Result<Vec<u8>, GenError>>> = (0..n).map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers.min(n).max(1))
            .map(|w| {
                s.spawn(move || {
                    plan.files
                        .iter()
                        .enumerate()
                        .skip(w)
                        .step_by(workers)
                        .map(|(i, f)| {
                            if matches!(f.body, Body::CopyOf(_)) {
                                return (i, Ok(Vec::new()));
                            }
                            let name = f.path.rsplit('/').next().unwrap_or(&f.path);
                            let stem = if f.ty.fixed_name {
                                name
                            } else {
                                name.strip_suffix(f.ty.suffix).unwrap_or(name)
                            };
                            let ctx = FileCtx {
                                path: &f.path,
                                stem,
                                date: f.date,
                            };
                            let mut rng = Rng::new(spec.seed, &f.path);
                            (i, render::render(f.ty, &f.body, c, &ctx, &mut rng))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            match h.join() {
                Ok(v) => {
                    for (i, r) in v {
                        out[i] = Some(r);
                    }
                }
                Err(_) => out.push(Some(Err(GenError::Render {
                    path: String::new(),
                    reason: "a render thread panicked".into(),
                }))),
            }
        }
    });
    let out: Vec<Result<Vec<u8>, GenError>> = out
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                Err(GenError::Render {
                    path: String::new(),
                    reason: "a file was not rendered".into(),
                })
            })
        })
        .collect();
    let mut bytes: Vec<Vec<u8>> = out.into_iter().collect::<Result<_, _>>()?;
    for i in 0..bytes.len() {
        if let Body::CopyOf(src) = plan.files[i].body {
            bytes[i] = bytes.get(src).cloned().unwrap_or_default();
        }
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::folders::depth;
    use super::*;
    use crate::Persona;

    fn d() -> NaiveDate {
        NaiveDate::from_ymd_opt(2025, 3, 4).unwrap()
    }

    #[test]
    fn taken_paths_get_a_counter_that_keeps_each_type_valid() {
        let mut p = Plan::default();
        let a = p.add(
            "notes/plan.docx".into(),
            ty("docx"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        let b = p.add(
            "notes/plan.docx".into(),
            ty("docx"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        assert_eq!(
            (a.as_str(), b.as_str()),
            ("notes/plan.docx", "notes/plan (2).docx")
        );
        // Code keeps identifier-safe stems (Java's class name is the file stem).
        p.add(
            "src/Export.java".into(),
            ty("java"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        let j = p.add(
            "src/Export.java".into(),
            ty("java"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        assert_eq!(j, "src/Export_2.java");
        // A fixed name cannot change; the copy goes to a sibling folder of the same depth.
        p.add(
            "deploy/Dockerfile".into(),
            ty("dockerfile"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        let f = p.add(
            "deploy/Dockerfile".into(),
            ty("dockerfile"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        assert_eq!(f, "deploy-2/Dockerfile");
        // Multi-part suffixes stay whole.
        p.add(
            "x/a.tar.gz".into(),
            ty("tar.gz"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        assert_eq!(
            p.add(
                "x/a.tar.gz".into(),
                ty("tar.gz"),
                Body::Filler,
                d(),
                Role::Filler
            ),
            "x/a (2).tar.gz"
        );
    }

    #[test]
    fn folders_reach_depth_eight_and_never_deeper() {
        let c = Company::new(3);
        for persona in Persona::ALL {
            let spec = GenSpec {
                persona,
                files: 2_000,
                seed: 3,
            };
            let f = grow_folders(&spec, &c, layout(persona), &mut Rng::new(3, "plan"));
            let max = f.all.iter().map(|(p, _)| depth(p)).max().unwrap();
            assert_eq!(max, 8, "{persona}");
            assert!(f.all.len() >= 400, "{persona}: {} folders", f.all.len());
            let unique: BTreeSet<&String> = f.all.iter().map(|(p, _)| p).collect();
            assert_eq!(unique.len(), f.all.len());
        }
    }
}
