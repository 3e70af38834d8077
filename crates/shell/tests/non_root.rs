//! The non-root path: when the caller is not root, the command runs in new user and network
//! namespaces instead of under a uid of its own. Run as root (as on the development machines and
//! in CI), this test re-runs itself as uid 65534 (`nobody`); run as another user, it checks
//! directly.

use std::process::Command;
use std::time::Duration;

use bureau_shell::{Confinement, LimitHit, ShellLimits};

const INNER: &str = "BUREAU_SHELL_NON_ROOT_INNER";
const NOBODY: u32 = 65534;

fn euid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace().nth(2).unwrap().parse().unwrap()
}

#[test]
fn a_non_root_caller_gets_the_same_confinement() {
    if std::env::var_os(INNER).is_some() || euid() != 0 {
        checks();
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    // The test binary usually lives under the build directory, which `nobody` may not be able
    // to reach (CI's cache is under /root, mode 0700): run a copy from a directory it can read.
    let stage = tempfile::tempdir().unwrap();
    std::fs::set_permissions(stage.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = stage.path().join("non_root");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(&exe)
        .args([
            "--exact",
            "a_non_root_caller_gets_the_same_confinement",
            "--nocapture",
        ])
        .env(INNER, "1")
        .env("HOME", "/nonexistent")
        .current_dir(stage.path())
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("non-root checks passed"), "{text}");
}

fn checks() {
    assert_ne!(euid(), 0);
    let shell = Confinement::probe().unwrap_or_else(|e| panic!("needs the confined shell: {e}"));
    assert!(shell.describe().join("\n").contains("not root"));
    let limits = ShellLimits {
        wall: Duration::from_secs(10),
        ..ShellLimits::default()
    };
    let ws = tempfile::tempdir().unwrap();
    // A file outside the workspace that this user may write: only Landlock stops the command.
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();

    let out = shell
        .run("echo hi > a.txt && cat a.txt", ws.path(), &limits)
        .unwrap();
    assert_eq!(out.stdout.text, "hi\n", "{out:?}");
    for cmd in [
        format!("echo x > {}", victim.display()),
        format!("rm {}", victim.display()),
        format!("echo x > {}/new.txt", outside.path().display()),
    ] {
        let out = shell.run(&cmd, ws.path(), &limits).unwrap();
        assert_ne!(out.exit_code, Some(0), "`{cmd}`: {out:?}");
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(!outside.path().join("new.txt").exists());

    let out = shell
        .run(
            "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
            ws.path(),
            &limits,
        )
        .unwrap();
    assert_eq!(out.stdout.text, "lo\n", "{out:?}");

    let bomb = ShellLimits {
        wall: Duration::from_secs(2),
        max_processes: 16,
        ..limits.clone()
    };
    let out = shell
        .run(
            "perl -e 'while (1) { defined(fork()) or select(undef, undef, undef, 0.05) }'",
            ws.path(),
            &bomb,
        )
        .unwrap();
    assert_eq!(out.limit, Some(LimitHit::Wall), "{out:?}");
    assert_eq!(out.leftover_processes, 0, "{out:?}");
    println!("non-root checks passed");
}
