//! [`Office`]: the world's tools behind the current turn's [`ToolSession`], independent of any
//! transport.

use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use bureau_agents::ToolSession;
use bureau_core::tool::{ToolOutcome, ToolSpec};
use bureau_world::World;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::McpError;
use crate::handler::Handler;

/// The start of the message of a world tool called while no turn is in progress.
pub const NO_TURN: &str = "no turn in progress";

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
fn read<T>(m: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|p| p.into_inner())
}
fn write<T>(m: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|p| p.into_inner())
}

/// Tools served beside the world's (play mode's `task_*` tools).
pub(crate) trait ExtraTools: Send + Sync {
    fn specs(&self) -> Vec<ToolSpec>;
    /// `None` when `tool` is not one of these tools.
    fn call(&self, office: &Office, tool: &str, args: &Value) -> Option<ToolOutcome>;
}

/// The office one MCP server serves: the world's tools, called through the current turn's
/// [`ToolSession`].
///
/// Cloning gives another handle on the same office. The session is swapped at every turn
/// ([`Office::set_session`]); between turns a world tool call is a tool error starting with
/// [`NO_TURN`].
#[derive(Clone)]
pub struct Office {
    inner: Arc<Inner>,
}

struct Inner {
    world: Arc<Mutex<World>>,
    /// Calls hold a read guard for their whole duration, so swapping the session (a write)
    /// waits for the calls in flight: once `set_session` returns, no call of the old session
    /// runs or will run.
    current: RwLock<Current>,
    extra: Option<Arc<dyn ExtraTools>>,
    specs: Vec<ToolSpec>,
}

enum Current {
    Session(Arc<ToolSession>),
    Idle(String),
}

impl std::fmt::Debug for Office {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let turn = match &*read(&self.inner.current) {
            Current::Session(s) => Some(s.turn()),
            Current::Idle(_) => None,
        };
        f.debug_struct("Office")
            .field("tools", &self.inner.specs.len())
            .field("turn", &turn)
            .finish()
    }
}

impl Office {
    /// An office serving `world`'s tools, with no turn in progress yet.
    pub fn new(world: Arc<Mutex<World>>) -> Office {
        Office::build(world, None)
    }

    pub(crate) fn with_extra(world: Arc<Mutex<World>>, extra: Arc<dyn ExtraTools>) -> Office {
        Office::build(world, Some(extra))
    }

    fn build(world: Arc<Mutex<World>>, extra: Option<Arc<dyn ExtraTools>>) -> Office {
        let mut specs = lock(&world).offered_tool_specs();
        if let Some(extra) = &extra {
            specs.extend(extra.specs());
        }
        Office {
            inner: Arc::new(Inner {
                world,
                current: RwLock::new(Current::Idle(format!(
                    "{NO_TURN}: the trial has not started a turn yet — wait for the turn's prompt"
                ))),
                extra,
                specs,
            }),
        }
    }

    /// The world this office serves.
    pub fn world(&self) -> &Arc<Mutex<World>> {
        &self.inner.world
    }

    /// Every tool served, in the order clients see them: the world's tools (sorted by name),
    /// then play tools, if any.
    pub fn tool_specs(&self) -> &[ToolSpec] {
        &self.inner.specs
    }

    /// What the server tells clients about the office when they connect: who the agent
    /// works as, the office's date, time and zone at this moment (the world's clock, never
    /// the machine's), and how paths and times are read.
    pub fn instructions(&self) -> String {
        let w = lock(&self.inner.world);
        let user = w.user();
        let tz = w.timezone();
        format!(
            "You work in a simulated office as {} <{}>: its workspace files, mail and \
             calendar are reached only through these tools. The office's date and time now: \
             {}; \"today\" and \"tomorrow\" mean the office's days, not your computer's. \
             Paths are relative to the workspace. Times are shown in {}; a datetime without \
             an offset is read in that zone. Mail you send is always from your own address.",
            user.name,
            user.email,
            bureau_core::time::office_time(&w.now(), tz),
            tz.name()
        )
    }

    /// Make `session` the current turn's session (`None` between turns). A session of
    /// another world is refused. Waits for calls in flight under the previous session.
    pub fn set_session(&self, session: Option<Arc<ToolSession>>) -> Result<(), McpError> {
        let next = match session {
            Some(s) => {
                if !Arc::ptr_eq(s.world(), &self.inner.world) {
                    return Err(McpError::ForeignSession);
                }
                Current::Session(s)
            }
            None => Current::Idle(format!(
                "{NO_TURN}: the turn is over — wait for the next turn's prompt"
            )),
        };
        *write(&self.inner.current) = next;
        Ok(())
    }

    /// End the current turn with `reason` told to callers of world tools.
    pub(crate) fn set_idle(&self, reason: String) {
        *write(&self.inner.current) = Current::Idle(reason);
    }

    /// The current turn's session, if a turn is in progress.
    pub fn session(&self) -> Option<Arc<ToolSession>> {
        match &*read(&self.inner.current) {
            Current::Session(s) => Some(s.clone()),
            Current::Idle(_) => None,
        }
    }

    /// Call a tool as an MCP client would (blocking): a world tool goes through the current
    /// session; a limit reached or a call between turns is a tool error saying so.
    pub fn call(&self, tool: &str, args: Value) -> ToolOutcome {
        if let Some(extra) = &self.inner.extra
            && let Some(outcome) = extra.call(self, tool, &args)
        {
            return outcome;
        }
        let current = read(&self.inner.current);
        match &*current {
            Current::Idle(reason) => ToolOutcome::Error {
                message: reason.clone(),
            },
            Current::Session(session) => match session.call(tool, args) {
                Ok(outcome) => outcome,
                Err(limit) => ToolOutcome::Error {
                    message: format!(
                        "{limit} — this turn accepts no more tool calls; finish the turn"
                    ),
                },
            },
        }
    }

    /// Serve this office over the process's stdin and stdout until the client closes stdin.
    /// Blocks; runs its own tokio runtime.
    pub fn serve_stdio(&self) -> Result<(), McpError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(McpError::Runtime)?;
        let served = rt.block_on(self.serve_io(tokio::io::stdin(), tokio::io::stdout()));
        // A read of stdin may still sit on a blocking thread; do not wait for it forever.
        rt.shutdown_timeout(Duration::from_secs(1));
        served
    }

    /// Serve this office over one byte stream pair (newline-delimited JSON-RPC, MCP's stdio
    /// framing) until the reader ends.
    pub async fn serve_io<R, W>(&self, reader: R, writer: W) -> Result<(), McpError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        Handler::new(self.clone()).serve_io(reader, writer).await
    }
}
