//! The `shell_run` tool of the `llm` agent: one `/bin/sh -c` command in the trial's workspace,
//! confined by [`bureau_shell`] (the workspace is the only writable path, no network, CPU,
//! memory, process, output and wall-time limits). Offered only where the confinement can be
//! set up; otherwise the agent's definition says why and the tool is absent.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use bureau_core::tool::{ToolOutcome, ToolSpec};
use bureau_shell::{Confinement, ShellLimits, ShellUnavailable};
use serde::Serialize;
use serde_json::{Value, json};

/// The tool's name (relied on by trajectory readers: its `command` argument is the command).
pub const SHELL_TOOL: &str = "shell_run";

/// The `[agents.<name>.shell]` settings. `shell = false` turns the tool off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShellSettings {
    pub enabled: bool,
    /// Wall seconds per command: the default, and the most `timeout_seconds` may ask for.
    pub wall_seconds: u64,
    /// CPU seconds per process.
    pub cpu_seconds: u64,
    /// Memory of the whole command (all its processes, one cgroup) and address space of each
    /// process, MiB. Where no cgroup is writable, per process only.
    pub memory_mb: u64,
    /// Largest single file a process may write, MiB (`RLIMIT_FSIZE`: per file, not the total
    /// a command writes). Read from `max_file_mb`, or the older name `file_mb`.
    pub max_file_mb: u64,
    /// Processes a command may have at once (all together, in its cgroup and as its uid).
    pub max_processes: u64,
    /// Bytes of stdout and of stderr kept per command.
    pub output_bytes: usize,
}

impl Default for ShellSettings {
    fn default() -> Self {
        let d = ShellLimits::default();
        ShellSettings {
            enabled: true,
            wall_seconds: d.wall.as_secs(),
            cpu_seconds: d.cpu_seconds,
            memory_mb: d.memory_bytes >> 20,
            max_file_mb: d.file_bytes >> 20,
            max_processes: d.max_processes,
            output_bytes: d.output_bytes,
        }
    }
}

impl ShellSettings {
    /// The limits of one command: `timeout` (the model's `timeout_seconds`) within
    /// `wall_seconds`, and never past the turn's time left.
    pub fn limits(&self, timeout: Option<f64>, time_left: Duration) -> ShellLimits {
        let max = Duration::from_secs(self.wall_seconds);
        let wall = timeout
            .filter(|t| t.is_finite() && *t > 0.0)
            .map_or(max, |t| Duration::from_secs_f64(t.min(1e6)).min(max))
            .min(time_left);
        ShellLimits {
            wall,
            cpu_seconds: self.cpu_seconds,
            memory_bytes: self.memory_mb << 20,
            file_bytes: self.max_file_mb << 20,
            max_processes: self.max_processes,
            output_bytes: self.output_bytes,
        }
    }
}

/// The machine's confinement, probed once per process.
pub fn confinement() -> Result<Confinement, ShellUnavailable> {
    static PROBE: OnceLock<Result<Confinement, ShellUnavailable>> = OnceLock::new();
    PROBE.get_or_init(Confinement::probe).clone()
}

/// The tool as the model sees it.
pub fn spec(settings: &ShellSettings) -> ToolSpec {
    ToolSpec {
        name: SHELL_TOOL.to_string(),
        description: format!(
            "Run one shell command (/bin/sh -c) with the workspace as the working directory. \
             The workspace is the only place whose files persist (/tmp is private to the \
             command, small, and discarded when it ends); the system's tools are read-only; \
             there is no network, and limits apply: {} s wall time by default and at most, {} \
             CPU seconds per process, {} MiB of memory and {} processes for the whole command, \
             files of at most {} MiB each, {} bytes of stdout and of stderr kept (more stops \
             the command). Anything the command leaves running is killed when it ends. The \
             result has exit_code, stdout, stderr and how the command ended.",
            settings.wall_seconds,
            settings.cpu_seconds,
            settings.memory_mb,
            settings.max_processes,
            settings.max_file_mb,
            settings.output_bytes
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command, as you would type it in a shell."},
                "timeout_seconds": {"type": "number", "description": format!("Wall-time limit for this command, at most {}.", settings.wall_seconds)}
            },
            "required": ["command"],
            "additionalProperties": false
        }),
        // A command may do anything inside the workspace.
        annotations: Some(bureau_core::tool::ToolAnnotations {
            read_only_hint: false,
            destructive_hint: true,
            idempotent_hint: false,
            open_world_hint: false,
        }),
    }
}

/// Runs one `shell_run` call. A command that ran is `Ok` whatever its exit code (the value
/// says how it ended); arguments that do not fit, or a command that could not be started, are
/// tool errors.
pub fn run(
    shell: &Confinement,
    settings: &ShellSettings,
    args: &Value,
    workspace: &Path,
    entry: Option<&std::sync::Arc<bureau_replica::NsEntry>>,
    time_left: Duration,
) -> ToolOutcome {
    let error = |message: String| ToolOutcome::Error { message };
    let Some(obj) = args.as_object() else {
        return error("shell_run takes an object: {\"command\": \"...\"}".into());
    };
    if let Some(key) = obj
        .keys()
        .find(|k| !matches!(k.as_str(), "command" | "timeout_seconds"))
    {
        return error(format!(
            "shell_run has no argument `{key}` — give `command` and optionally `timeout_seconds`"
        ));
    }
    let command = match obj.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c,
        Some(Value::String(_)) => return error("`command` is empty".into()),
        Some(_) => return error("`command` must be a string".into()),
        None => return error("shell_run needs `command`".into()),
    };
    let timeout = match obj.get("timeout_seconds") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(t) if t.is_finite() && t > 0.0 => Some(t),
            _ => {
                return error(format!(
                    "`timeout_seconds` must be a positive number of seconds (at most {})",
                    settings.wall_seconds
                ));
            }
        },
    };
    let limits = settings.limits(timeout, time_left);
    if limits.wall.is_zero() {
        return error("the turn has no time left to run a command".into());
    }
    // A command may sleep or wait on I/O: it holds no CPU permit of the run meanwhile.
    match bureau_core::cpu::waiting(|| shell.run_at(command, workspace, entry, &limits)) {
        Ok(out) => ToolOutcome::ok(json!({
                "exit_code": out.exit_code,
                "signal": out.signal,
                "stdout": out.stdout.text,
                "stderr": out.stderr.text,
                "stdout_truncated": out.stdout.truncated,
                "stderr_truncated": out.stderr.truncated,
                "timed_out": out.timed_out,
                "limit": out.limit.map(|l| l.name()),
                "wall_ms": u64::try_from(out.wall.as_millis()).unwrap_or(u64::MAX),
                "note": out.note(),
        })),
        Err(e) => error(format!("the command was not run: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_may_shorten_but_not_lengthen_the_wall_limit() {
        let s = ShellSettings {
            wall_seconds: 30,
            ..ShellSettings::default()
        };
        let left = Duration::from_secs(1000);
        assert_eq!(s.limits(None, left).wall, Duration::from_secs(30));
        assert_eq!(s.limits(Some(5.0), left).wall, Duration::from_secs(5));
        assert_eq!(s.limits(Some(500.0), left).wall, Duration::from_secs(30));
        assert_eq!(s.limits(Some(-1.0), left).wall, Duration::from_secs(30));
        assert_eq!(
            s.limits(None, Duration::from_secs(2)).wall,
            Duration::from_secs(2)
        );
        assert_eq!(s.limits(None, left).memory_bytes, s.memory_mb << 20);
    }

    #[test]
    fn bad_arguments_are_tool_errors_that_say_what_to_send() {
        let Ok(shell) = confinement() else {
            panic!(
                "the confined shell is needed on this machine: {:?}",
                confinement().err()
            );
        };
        let ws = tempfile::tempdir().unwrap();
        let s = ShellSettings::default();
        let left = Duration::from_secs(60);
        for (args, want) in [
            (json!("ls"), "takes an object"),
            (json!({}), "needs `command`"),
            (json!({"command": 3}), "must be a string"),
            (json!({"command": " "}), "is empty"),
            (json!({"command": "ls", "cwd": "/"}), "no argument `cwd`"),
            (
                json!({"command": "ls", "timeout_seconds": "9"}),
                "positive number",
            ),
        ] {
            match run(&shell, &s, &args, ws.path(), None, left) {
                ToolOutcome::Error { message } => assert!(message.contains(want), "{message}"),
                other => panic!("{args}: {other:?}"),
            }
        }
        match run(
            &shell,
            &s,
            &json!({"command": "echo hi; exit 4"}),
            ws.path(),
            None,
            left,
        ) {
            ToolOutcome::Ok { value, .. } => {
                assert_eq!(value["exit_code"], 4);
                assert_eq!(value["stdout"], "hi\n");
                assert_eq!(value["limit"], Value::Null);
            }
            other => panic!("{other:?}"),
        }
    }
}
