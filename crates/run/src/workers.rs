//! What the run loop's worker threads need from the process: open files (issue 18: a
//! thousand concurrent trials each hold a trajectory file, a model connection and, while a
//! turn is evaluated, the pipes of an isolated child).

use crate::RunError;

/// Open files one concurrent trial may hold at once: its trajectory, its model connection,
/// the pipes of an isolated check child (result and stderr, both ends for a moment), a file
/// being read or written, and room for a harness agent's stdio.
pub(crate) const FILES_PER_WORKER: u64 = 8;
/// Open files of the process besides its workers (stdio, the run directory, caches).
pub(crate) const FILES_BASE: u64 = 64;

/// Raise the soft limit on open files (`RLIMIT_NOFILE`) to what `workers` concurrent trials
/// need, up to the hard limit; an error naming both when even the hard limit is too low.
pub(crate) fn ensure_open_files(workers: usize) -> Result<(), RunError> {
    let need = FILES_BASE + FILES_PER_WORKER * workers as u64;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        // Unknown: let the trials find out (each failure is an `error` trial, named).
        return Ok(());
    }
    let infinite = libc::RLIM_INFINITY;
    if limit.rlim_cur == infinite || limit.rlim_cur >= need {
        return Ok(());
    }
    if limit.rlim_max != infinite && limit.rlim_max < need {
        let fit = limit.rlim_max.saturating_sub(FILES_BASE) / FILES_PER_WORKER;
        return Err(RunError::Config(format!(
            "--concurrency {workers} needs about {need} open files, but this process may open at most {} (hard limit, `ulimit -Hn`) — lower --concurrency to {} or raise the limit (`ulimit -n {need}` as root, LimitNOFILE= in a systemd unit, nofile in /etc/security/limits.conf)",
            limit.rlim_max,
            fit.max(1)
        )));
    }
    let raised = libc::rlimit {
        rlim_cur: limit.rlim_max,
        rlim_max: limit.rlim_max,
    };
    // SAFETY: setrlimit reads the struct it is given; raising the soft limit up to the hard
    // one needs no privilege.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        return Err(RunError::Config(format!(
            "--concurrency {workers} needs about {need} open files; the limit is {} and raising it to {} failed ({}) — lower --concurrency or raise `ulimit -n`",
            limit.rlim_cur,
            limit.rlim_max,
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nofile() -> libc::rlimit {
        let mut l = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as above.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) }, 0);
        l
    }

    // One test changes the process's limit (tests of this binary run in threads): it lowers
    // the soft limit, lets ensure_open_files raise it, and checks the error past the hard one.
    #[test]
    fn the_soft_limit_is_raised_and_an_impossible_concurrency_is_refused() {
        let before = nofile();
        if before.rlim_max == libc::RLIM_INFINITY || before.rlim_max < 2 * FILES_BASE {
            // Nothing to test against on this machine, said rather than skipped silently.
            eprintln!(
                "hard RLIMIT_NOFILE is {}: only the error path is checked",
                before.rlim_max
            );
        } else {
            let lowered = libc::rlimit {
                rlim_cur: FILES_BASE,
                rlim_max: before.rlim_max,
            };
            // SAFETY: as above.
            assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lowered) }, 0);
            ensure_open_files(2).unwrap();
            assert_eq!(nofile().rlim_cur, before.rlim_max);
        }
        if before.rlim_max != libc::RLIM_INFINITY {
            let too_many = usize::try_from(before.rlim_max).unwrap_or(usize::MAX / 16);
            let e = ensure_open_files(too_many).unwrap_err().to_string();
            assert!(e.contains("lower --concurrency"), "{e}");
            assert!(e.contains("ulimit -Hn"), "{e}");
        }
    }
}
