//! Bureau's cache directory, shared by everything that keeps derived files between runs
//! (generated workspaces, rendered task instances).

use std::path::PathBuf;

/// `$BUREAU_CACHE_DIR/<name>`, else `$XDG_CACHE_HOME/bureau/<name>`, else
/// `$HOME/.cache/bureau/<name>`, else the system temp directory's `bureau-cache/<name>`.
pub fn cache_dir(name: &str) -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env("BUREAU_CACHE_DIR") {
        return d.join(name);
    }
    if let Some(d) = env("XDG_CACHE_HOME") {
        return d.join("bureau").join(name);
    }
    if let Some(d) = env("HOME") {
        return d.join(".cache").join("bureau").join(name);
    }
    std::env::temp_dir().join("bureau-cache").join(name)
}
