//! Replica pools for `[workspace]` tasks (`bureau run --replicas`).
//!
//! Every trial of a `[workspace]` task works on a private replica of the task's generated
//! tree, leased from a pool per workspace (persona × files × seed × generator) that all
//! tasks on that workspace share. The pool holds at most `--concurrency` replicas: trials of
//! the same workspace run in parallel on different replicas, and a finished trial's replica is
//! reset exactly (in time proportional to what changed) and handed to the next. The world is
//! built on the lease ([`World::build_on_replica`]): nothing is copied at build, and a
//! snapshot reads only the paths the replica reports changed.
//!
//! [`World::build_on_replica`]: bureau_world::World::build_on_replica

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock};

use bureau_core::task::Task;
use bureau_replica::{Backend, BackendKind, Baseline, Lease, Pool, PoolOptions};
use bureau_world::BaseLayer;
use bureau_world::generated::{baseline_tree, cache_key, check_tree};
use serde::{Deserialize, Serialize};

/// Where the trials of `[workspace]` tasks work (`--replicas`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReplicaMode {
    /// Overlay replicas where this machine supports them (unprivileged overlayfs in a user
    /// namespace), else portable ones.
    #[default]
    Auto,
    /// Overlay replicas; the run fails when they cannot be made.
    Overlay,
    /// Manifest-driven copies (any system).
    Portable,
    /// No replicas: every trial copies the generated tree into its own world.
    Off,
}

impl fmt::Display for ReplicaMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReplicaMode::Auto => "auto",
            ReplicaMode::Overlay => "overlay",
            ReplicaMode::Portable => "portable",
            ReplicaMode::Off => "off",
        })
    }
}

impl FromStr for ReplicaMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(ReplicaMode::Auto),
            "overlay" => Ok(ReplicaMode::Overlay),
            "portable" => Ok(ReplicaMode::Portable),
            "off" => Ok(ReplicaMode::Off),
            other => Err(format!(
                "unknown replica mode `{other}`; use auto, overlay, portable or off"
            )),
        }
    }
}

/// One workspace's pool and the base layer of its baseline.
struct Slot {
    pool: Pool,
    base: Arc<BaseLayer>,
}

/// A workspace's pool, made once by the first trial that needs it (or why it cannot be).
type SlotCell = Arc<OnceLock<Result<Slot, String>>>;

/// The replica pools of one run, one per generated workspace, made on first use.
pub struct Replicas {
    mode: ReplicaMode,
    capacity: usize,
    pools: Mutex<BTreeMap<String, SlotCell>>,
}

impl fmt::Debug for Replicas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replicas")
            .field("mode", &self.mode)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl Replicas {
    /// Pools of at most `capacity` replicas each (use the run's concurrency).
    pub fn new(mode: ReplicaMode, capacity: usize) -> Replicas {
        Replicas {
            mode,
            capacity: capacity.max(1),
            pools: Mutex::new(BTreeMap::new()),
        }
    }

    pub fn mode(&self) -> ReplicaMode {
        self.mode
    }

    /// A replica for a trial of `task` and the base layer of its baseline; `None` when the
    /// task has no `[workspace]` or replicas are off. Blocks while every replica of the
    /// workspace is leased. The lease goes back (reset) when dropped.
    pub fn lease(&self, task: &Task) -> Result<Option<(Lease, Arc<BaseLayer>)>, String> {
        let Some(ws) = &task.workspace else {
            return Ok(None);
        };
        let backend = match self.mode {
            ReplicaMode::Off => return Ok(None),
            ReplicaMode::Auto => Backend::Auto,
            ReplicaMode::Overlay => Backend::Overlay,
            ReplicaMode::Portable => Backend::Portable,
        };
        let cell = {
            let mut pools = self.pools.lock().unwrap_or_else(|p| p.into_inner());
            pools.entry(cache_key(ws)).or_default().clone()
        };
        // Made once per workspace; other trials of it wait here, not on the map's lock.
        let slot = cell.get_or_init(|| {
            let tree = baseline_tree(ws, &task.toml_path()).map_err(|e| e.to_string())?;
            // The tree's hashes are memoised beside it (`<key>.hashes`): hashed once, not once
            // per process.
            let memo = tree.with_extension("hashes");
            let baseline = Arc::new(Baseline::open_memoised(&tree, Some(&memo)).map_err(|e| {
                format!("scanning the generated workspace {}: {e}", tree.display())
            })?);
            let base = Arc::new(BaseLayer::from_baseline(&baseline).map_err(|e| e.to_string())?);
            check_tree(ws, &base).map_err(|e| e.to_string())?;
            let pool = Pool::new(
                baseline,
                PoolOptions {
                    capacity: self.capacity,
                    backend,
                    dir: None,
                },
            )
            .map_err(|e| format!("making the replica pool of {}: {e}", tree.display()))?;
            Ok(Slot { pool, base })
        });
        let slot = slot.as_ref().map_err(|e| e.clone())?;
        let lease = slot
            .pool
            .acquire()
            .map_err(|e| format!("leasing a replica of the generated workspace: {e}"))?;
        Ok(Some((lease, slot.base.clone())))
    }

    /// The backend of each workspace's pool made so far (cache key → backend).
    pub fn backends(&self) -> BTreeMap<String, BackendKind> {
        let pools = self.pools.lock().unwrap_or_else(|p| p.into_inner());
        pools
            .iter()
            .filter_map(|(k, cell)| Some((k.clone(), cell.get()?.as_ref().ok()?.pool.backend())))
            .collect()
    }

    /// Resets that failed (their replicas were discarded, never reused), per workspace.
    pub fn take_errors(&self) -> Vec<String> {
        let pools = self.pools.lock().unwrap_or_else(|p| p.into_inner());
        pools
            .iter()
            .filter_map(|(k, cell)| Some((k, cell.get()?.as_ref().ok()?)))
            .flat_map(|(k, slot)| {
                slot.pool
                    .take_errors()
                    .into_iter()
                    .map(move |e| format!("{k}: {e}"))
            })
            .collect()
    }
}
