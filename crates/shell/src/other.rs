//! Platforms other than Linux: no confinement is implemented, so the shell is unavailable.

use crate::{ShellError, ShellLimits, ShellOutcome, ShellUnavailable};

#[derive(Debug, Clone)]
pub(crate) struct Other;

impl Other {
    pub(crate) fn probe() -> Result<Other, ShellUnavailable> {
        Err(ShellUnavailable {
            missing: vec![format!(
                "confinement is implemented for Linux only (Landlock, namespaces, rlimits); this is {}",
                std::env::consts::OS
            )],
        })
    }

    pub(crate) fn describe(&self) -> Vec<String> {
        Vec::new()
    }

    pub(crate) fn run_entered(
        &self,
        _command: &str,
        _entry: &std::sync::Arc<bureau_replica::NsEntry>,
        _limits: &ShellLimits,
    ) -> Result<ShellOutcome, ShellError> {
        self.run(_command, std::path::Path::new("/"), _limits)
    }

    pub(crate) fn run(
        &self,
        _command: &str,
        _workspace: &std::path::Path,
        _limits: &ShellLimits,
    ) -> Result<ShellOutcome, ShellError> {
        Err(Self::probe()
            .err()
            .map(ShellError::Unavailable)
            .unwrap_or(ShellError::Unavailable(ShellUnavailable {
                missing: Vec::new(),
            })))
    }
}
