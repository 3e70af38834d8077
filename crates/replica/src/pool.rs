//! A bounded pool of replicas of one baseline.

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::manifest::{Digest, stat_entry};
use crate::{Baseline, Replica, ReplicaError, ResetStats, overlay_available};

/// Which backend a pool should use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Overlay where it works (probed once per process), portable otherwise.
    Auto,
    Overlay,
    Portable,
}

/// The backend a pool actually uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    Overlay,
    Portable,
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BackendKind::Overlay => "overlay",
            BackendKind::Portable => "portable",
        })
    }
}

/// How to build a [`Pool`].
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// At most this many replicas exist (and are leased) at once.
    pub capacity: usize,
    pub backend: Backend,
    /// Where replicas live; a fresh directory under the system temp dir when `None`. It is
    /// removed when the pool is dropped only if the pool created it.
    pub dir: Option<PathBuf>,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            capacity: 1,
            backend: Backend::Auto,
            dir: None,
        }
    }
}

/// A bounded pool of replicas of one [`Baseline`]. Cloning shares the pool.
#[derive(Clone, Debug)]
pub struct Pool {
    inner: Arc<PoolInner>,
}

#[derive(Debug)]
struct PoolInner {
    baseline: Arc<Baseline>,
    kind: BackendKind,
    dir: PathBuf,
    owns_dir: bool,
    capacity: usize,
    state: Mutex<PoolState>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct PoolState {
    idle: Vec<Replica>,
    /// Replicas that exist (idle + leased).
    live: usize,
    next_id: u64,
    /// Failed resets of dropped leases (their replicas were discarded).
    errors: Vec<ReplicaError>,
}

impl Pool {
    pub fn new(baseline: Arc<Baseline>, opts: PoolOptions) -> Result<Pool, ReplicaError> {
        if opts.capacity == 0 {
            return Err(ReplicaError::ZeroCapacity);
        }
        let kind = match opts.backend {
            Backend::Overlay => BackendKind::Overlay,
            Backend::Portable => BackendKind::Portable,
            Backend::Auto if overlay_available() => BackendKind::Overlay,
            Backend::Auto => BackendKind::Portable,
        };
        let (dir, owns_dir) = match opts.dir {
            Some(d) => (d, false),
            None => (
                std::env::temp_dir().join(format!(
                    "bureau-replicas-{}-{}",
                    std::process::id(),
                    unique()
                )),
                true,
            ),
        };
        std::fs::create_dir_all(&dir).map_err(|e| ReplicaError::io(&dir, "create", e))?;
        Ok(Pool {
            inner: Arc::new(PoolInner {
                baseline,
                kind,
                dir,
                owns_dir,
                capacity: opts.capacity,
                state: Mutex::new(PoolState::default()),
                freed: Condvar::new(),
            }),
        })
    }

    pub fn baseline(&self) -> &Arc<Baseline> {
        &self.inner.baseline
    }
    pub fn backend(&self) -> BackendKind {
        self.inner.kind
    }
    pub fn capacity(&self) -> usize {
        self.inner.capacity
    }
    /// Replicas that exist now (idle or leased).
    pub fn live(&self) -> usize {
        self.lock().live
    }
    /// Idle replicas ready to lease.
    pub fn idle(&self) -> usize {
        self.lock().idle.len()
    }

    /// Errors of resets done by dropped leases (those replicas were discarded).
    pub fn take_errors(&self) -> Vec<ReplicaError> {
        std::mem::take(&mut self.lock().errors)
    }

    /// Create replicas until `n` exist (or the capacity is reached); they wait idle.
    pub fn warm(&self, n: usize) -> Result<(), ReplicaError> {
        let n = n.min(self.inner.capacity);
        loop {
            let id = {
                let mut st = self.lock();
                if st.live >= n {
                    return Ok(());
                }
                st.live += 1;
                st.next_id += 1;
                st.next_id
            };
            match self.create(id) {
                Ok(r) => {
                    self.lock().idle.push(r);
                    self.inner.freed.notify_one();
                }
                Err(e) => {
                    self.lock().live -= 1;
                    return Err(e);
                }
            }
        }
    }

    /// Lease a replica, waiting while `capacity` are leased.
    pub fn acquire(&self) -> Result<Lease, ReplicaError> {
        let mut st = self.lock();
        loop {
            if let Some(r) = st.idle.pop() {
                return Ok(self.lease(r));
            }
            if st.live < self.inner.capacity {
                st.live += 1;
                st.next_id += 1;
                let id = st.next_id;
                drop(st);
                return match self.create(id) {
                    Ok(r) => Ok(self.lease(r)),
                    Err(e) => {
                        self.lock().live -= 1;
                        self.inner.freed.notify_one();
                        Err(e)
                    }
                };
            }
            st = self
                .inner
                .freed
                .wait(st)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// Lease a replica if one is free or can be made now; `Ok(None)` at capacity.
    pub fn try_acquire(&self) -> Result<Option<Lease>, ReplicaError> {
        let st = self.lock();
        if st.idle.is_empty() && st.live >= self.inner.capacity {
            return Ok(None);
        }
        drop(st);
        self.acquire().map(Some)
    }

    fn lease(&self, r: Replica) -> Lease {
        Lease {
            pool: self.clone(),
            replica: Some(r),
        }
    }

    fn create(&self, id: u64) -> Result<Replica, ReplicaError> {
        let dir = self.inner.dir.join(format!("r{id}"));
        Replica::create(Arc::clone(&self.inner.baseline), &dir, self.inner.kind)
    }

    fn lock(&self) -> MutexGuard<'_, PoolState> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Return a reset replica, or discard a failed one (keeping its error if given).
    fn give_back(&self, r: Result<Replica, Option<ReplicaError>>) {
        let mut st = self.lock();
        match r {
            Ok(r) => st.idle.push(r),
            Err(e) => {
                st.live -= 1;
                st.errors.extend(e);
            }
        }
        drop(st);
        self.inner.freed.notify_one();
    }
}

impl Drop for PoolInner {
    fn drop(&mut self) {
        if let Ok(st) = self.state.get_mut() {
            st.idle.clear();
        }
        if self.owns_dir {
            let _ = crate::portable::remove_any(&self.dir);
        }
    }
}

/// A leased replica. Dropping it resets the replica and returns it to the pool (a replica
/// whose reset fails is discarded and the error kept in [`Pool::take_errors`]); call
/// [`Lease::release`] to see the reset's result.
#[derive(Debug)]
pub struct Lease {
    pool: Pool,
    replica: Option<Replica>,
}

impl Lease {
    /// Reset the replica and return it to the pool. On error the replica is discarded.
    pub fn release(mut self) -> Result<ResetStats, ReplicaError> {
        let Some(mut r) = self.replica.take() else {
            return Ok(ResetStats { touched: 0 });
        };
        match r.reset() {
            Ok(stats) => {
                self.pool.give_back(Ok(r));
                Ok(stats)
            }
            Err(e) => {
                self.pool.give_back(Err(None));
                Err(e)
            }
        }
    }
}

impl Deref for Lease {
    type Target = Replica;
    fn deref(&self) -> &Replica {
        match &self.replica {
            Some(r) => r,
            None => unreachable!("a lease holds its replica until released"),
        }
    }
}

impl DerefMut for Lease {
    fn deref_mut(&mut self) -> &mut Replica {
        match &mut self.replica {
            Some(r) => r,
            None => unreachable!("a lease holds its replica until released"),
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(mut r) = self.replica.take() {
            let result = r.reset().map(|_| r).map_err(Some);
            self.pool.give_back(result);
        }
    }
}

/// The error for a replica that does not match its baseline at `bad` paths.
pub(crate) fn mismatch(baseline: &Baseline, view: &Path, bad: Vec<PathBuf>) -> ReplicaError {
    let mut found: Digest = baseline.digest();
    for rel in &bad {
        if let Some(b) = baseline.entry(rel) {
            found.remove(&b.hash(rel));
        }
        if let Ok(Some(e)) = stat_entry(&view.join(rel)) {
            found.add(&e.hash(rel));
        }
    }
    ReplicaError::DigestMismatch {
        replica: view.to_path_buf(),
        expected: baseline.digest().to_hex(),
        found: found.to_hex(),
        paths: bad,
    }
}

/// A process-unique number for directory names.
pub(crate) fn unique() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
