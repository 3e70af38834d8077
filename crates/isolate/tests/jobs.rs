//! Jobs ([`bureau_isolate::run_job`]) from the calling process and from the zygote: the same
//! scenarios, first before the zygote runs (so jobs fork this process), then with it.
//!
//! A plain `main` (no test harness): the zygote can only start while the process has one
//! thread, which the libtest harness never has.

use std::time::{Duration, Instant};

use bureau_isolate::{
    IsolateError, Limits, Peer, prepare_zygote, run_job, run_on_bytes, run_on_bytes_memo, set_memo,
    start_zygote, zygote_lost, zygote_running,
};

/// What "prepare" messages left in the zygote (empty in this process).
static PREPARED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn remember(words: Vec<String>) {
    if words.iter().any(|w| w == "panic") {
        panic!("a prepare that panics (on purpose: this test checks the zygote carries on)");
    }
    PREPARED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .extend(words);
}

fn recall(_x: u8, _peer: &mut Peer<'_>) -> Vec<String> {
    PREPARED.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

fn limits() -> Limits {
    Limits::new(Duration::from_secs(10), 256 << 20)
}

/// Ask for each key and join the answers.
fn ask_all(keys: Vec<String>, peer: &mut Peer<'_>) -> Result<String, String> {
    let mut out = Vec::new();
    for k in keys {
        let a = peer.ask(k.as_bytes()).map_err(|e| e.to_string())?;
        out.push(String::from_utf8_lossy(&a).into_owned());
    }
    Ok(out.join(","))
}

fn sum_len(v: Vec<u8>, _peer: &mut Peer<'_>) -> (usize, u64) {
    (v.len(), v.iter().map(|b| u64::from(*b)).sum())
}

fn big_answer(n: usize, peer: &mut Peer<'_>) -> usize {
    peer.ask(&n.to_le_bytes()).map(|a| a.len()).unwrap_or(0)
}

fn too_big_question(n: usize, peer: &mut Peer<'_>) -> String {
    match peer.ask(&vec![7u8; n]) {
        Ok(_) => "answered".into(),
        Err(e) => e.to_string(),
    }
}

// The argument is what crosses to the job: an owned String.
#[allow(clippy::ptr_arg)]
fn count_of(tag: &String, bytes: &[u8]) -> (String, usize, u8) {
    (
        tag.to_uppercase(),
        bytes.len(),
        bytes.iter().copied().max().unwrap_or(0),
    )
}

#[allow(clippy::ptr_arg)]
fn reads_past_the_end(_tag: &String, bytes: &[u8]) -> u8 {
    bytes[bytes.len() + std::hint::black_box(1)]
}

/// The id of the process it ran in, unless the file `marker` is missing: then it makes it
/// and panics (an impure job, to see when a job runs and when its outcome is remembered).
#[allow(clippy::ptr_arg)]
fn pid_once_marked(marker: &String, _bytes: &[u8]) -> u32 {
    if std::path::Path::new(marker).exists() {
        std::process::id()
    } else {
        let _ = std::fs::write(marker, b"");
        panic!("no marker yet")
    }
}

fn panics(msg: String, _peer: &mut Peer<'_>) -> u8 {
    panic!("{msg}")
}

fn deep(n: u64) -> u64 {
    let pad = std::hint::black_box([n; 16]);
    if n == 0 { 0 } else { 1 + deep(pad[3] - 1) }
}

fn overflows(n: u64, _peer: &mut Peer<'_>) -> u64 {
    deep(n)
}

fn allocates(n: usize, _peer: &mut Peer<'_>) -> usize {
    let v = vec![1u8; std::hint::black_box(n)];
    v.len()
}

fn spins(_x: u8, _peer: &mut Peer<'_>) -> u8 {
    loop {
        std::hint::spin_loop();
    }
}

fn asks_then_spins(_x: u8, peer: &mut Peer<'_>) -> u8 {
    let _ = peer.ask(b"hello");
    loop {
        std::hint::spin_loop();
    }
}

fn scenarios(how: &str) {
    // A value, and questions answered from borrowed data in the calling thread.
    let table: std::collections::BTreeMap<String, String> = [("a", "alpha"), ("b", "beta")]
        .map(|(k, v)| (k.into(), v.into()))
        .into();
    let mut asked = 0;
    let mut serve = |q: &[u8]| {
        asked += 1;
        table
            .get(std::str::from_utf8(q).unwrap_or(""))
            .cloned()
            .unwrap_or_default()
            .into_bytes()
    };
    let r = run_job(
        &limits(),
        ask_all,
        &vec!["a".into(), "b".into(), "z".into()],
        &mut serve,
    )
    .unwrap_or_else(|e| panic!("{how}: {e}"));
    assert_eq!(r, Ok("alpha,beta,".to_string()), "{how}");
    assert_eq!(asked, 3, "{how}");

    let mut none = |_: &[u8]| Vec::new();
    // A large input crosses whole.
    let input: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
    let expect = input.iter().map(|b| u64::from(*b)).sum();
    assert_eq!(
        run_job(&limits(), sum_len, &input, &mut none).unwrap(),
        (input.len(), expect),
        "{how}"
    );
    // A large answer too.
    let mut big = |q: &[u8]| vec![1u8; usize::from_le_bytes(q.try_into().unwrap_or([0; 8]))];
    assert_eq!(
        run_job(&limits(), big_answer, &(20usize << 20), &mut big).unwrap(),
        20 << 20,
        "{how}"
    );
    // A question over the limit is refused in the job, which carries on.
    let said = run_job(
        &limits(),
        too_big_question,
        &(bureau_isolate::MAX_QUESTION_BYTES + 1),
        &mut none,
    )
    .unwrap();
    assert!(said.contains("over the limit"), "{how}: {said}");

    // A function over a buffer.
    let doc: Vec<u8> = (0..3_000_000u32).map(|i| (i % 200) as u8).collect();
    assert_eq!(
        run_on_bytes(&limits(), count_of, &"docx".to_string(), &doc).unwrap(),
        ("DOCX".to_string(), doc.len(), 199),
        "{how}"
    );
    assert!(matches!(
        run_on_bytes(&limits(), reads_past_the_end, &String::new(), b"abc").unwrap_err(),
        IsolateError::Panicked(m) if m.contains("out of bounds")
    ));

    // A remembered outcome: the job runs until it returns; then its outcome is given again,
    // without a process, for the same function, arguments and bytes.
    let marker = std::env::temp_dir()
        .join(format!(
            "bureau-isolate-memo-{}-{}",
            std::process::id(),
            how.replace(' ', "-")
        ))
        .display()
        .to_string();
    let _ = std::fs::remove_file(&marker);
    let memo = |bytes: &[u8]| run_on_bytes_memo(&limits(), pid_once_marked, &marker, bytes);
    // A panic is not remembered: the next call runs the job again.
    assert!(matches!(memo(b"x"), Err(IsolateError::Panicked(m)) if m.contains("no marker")));
    let pid = memo(b"x").unwrap_or_else(|e| panic!("{how}: {e}"));
    assert_ne!(
        pid,
        std::process::id(),
        "{how}: the job ran in another process"
    );
    std::fs::remove_file(&marker).unwrap_or_else(|e| panic!("{how}: {e}"));
    // Remembered: had it run again, it would have panicked (the marker is gone).
    assert_eq!(
        memo(b"x").unwrap_or_else(|e| panic!("{how}: {e}")),
        pid,
        "{how}"
    );
    // Other bytes are another job.
    assert!(
        matches!(memo(b"y"), Err(IsolateError::Panicked(_))),
        "{how}"
    );
    // With the memo off, every call runs the job (the marker is gone again: it panics).
    std::fs::remove_file(&marker).unwrap_or_else(|e| panic!("{how}: {e}"));
    set_memo(false);
    assert!(
        matches!(memo(b"x"), Err(IsolateError::Panicked(_))),
        "{how}"
    );
    set_memo(true);
    let _ = std::fs::remove_file(&marker);

    // Failures are errors, as with run_isolated, and the caller carries on.
    assert_eq!(
        run_job(&limits(), panics, &"bad byte 7".to_string(), &mut none).unwrap_err(),
        IsolateError::Panicked("bad byte 7".into()),
        "{how}"
    );
    assert_eq!(
        run_job(&limits(), overflows, &u64::MAX, &mut none).unwrap_err(),
        IsolateError::StackOverflow,
        "{how}"
    );
    match run_job(&limits(), allocates, &(4usize << 30), &mut none).unwrap_err() {
        IsolateError::OutOfMemory { limit_bytes, .. } => assert_eq!(limit_bytes, 256 << 20),
        other => panic!("{how}: expected OutOfMemory, got {other:?}"),
    }
    let short = Limits::new(Duration::from_millis(700), 256 << 20);
    let t = Instant::now();
    assert_eq!(
        run_job(&short, spins, &0, &mut none).unwrap_err(),
        IsolateError::TimedOut {
            limit: Duration::from_millis(700)
        },
        "{how}"
    );
    let mut hello = |_: &[u8]| b"hi".to_vec();
    assert!(matches!(
        run_job(&short, asks_then_spins, &0, &mut hello).unwrap_err(),
        IsolateError::TimedOut { .. }
    ));
    assert!(
        t.elapsed() < Duration::from_secs(8),
        "{how}: {:?}",
        t.elapsed()
    );

    // Many at once, from many threads.
    std::thread::scope(|s| {
        for i in 0..16 {
            s.spawn(move || {
                let mut echo = |q: &[u8]| {
                    let mut v = q.to_vec();
                    v.reverse();
                    v
                };
                let keys: Vec<String> = (0..20).map(|k| format!("{i}-{k}")).collect();
                let want: Vec<String> = keys.iter().map(|k| k.chars().rev().collect()).collect();
                let got = run_job(&limits(), ask_all, &keys, &mut echo).unwrap();
                assert_eq!(got, Ok(want.join(",")));
            });
        }
    });
}

fn main() {
    // At the start of main the process has one thread: the moment a program starts the zygote.
    if std::env::args().nth(1).as_deref() == Some("--zygote-run") {
        assert!(start_zygote(|| {}), "the zygote did not start");
        assert!(zygote_running());
        scenarios("from the zygote");
        // What a "prepare" leaves in the zygote, every later job has; a panicking one
        // changes nothing and the zygote carries on.
        let mut none = |_: &[u8]| Vec::new();
        assert!(prepare_zygote(remember, &vec!["alpha".to_string()]));
        assert!(prepare_zygote(remember, &vec!["panic".to_string()]));
        assert!(prepare_zygote(remember, &vec!["beta".to_string()]));
        assert_eq!(
            run_job(&limits(), recall, &0, &mut none).unwrap(),
            vec!["alpha".to_string(), "beta".to_string()]
        );
        assert!(
            PREPARED.lock().unwrap().is_empty(),
            "prepared here, not in the zygote"
        );
        // The zygote killed (as the OOM killer would): jobs go on, forked from this process,
        // and the loss is known.
        assert_eq!(zygote_lost(), None);
        let me = std::process::id();
        let children = std::fs::read_to_string(format!("/proc/{me}/task/{me}/children"))
            .expect("children of this process");
        let kids: Vec<i32> = children
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        assert_eq!(
            kids.len(),
            1,
            "the zygote is this process's one child: {kids:?}"
        );
        // SAFETY: sending a signal to our own child.
        assert_eq!(unsafe { libc::kill(kids[0], libc::SIGKILL) }, 0);
        // SAFETY: reaping our own child.
        unsafe { libc::waitpid(kids[0], std::ptr::null_mut(), 0) };
        let doc = b"after the zygote".to_vec();
        assert_eq!(
            run_on_bytes(&limits(), count_of, &"pdf".to_string(), &doc).unwrap(),
            ("PDF".to_string(), doc.len(), b'z'),
        );
        assert!(!zygote_running());
        assert!(zygote_lost().is_some(), "the loss is recorded");
        assert!(!prepare_zygote(remember, &vec!["gamma".to_string()]));
        println!("jobs from the zygote: ok");
        return;
    }
    scenarios("from this process");
    // Without a zygote there is nothing to prepare.
    assert!(!prepare_zygote(remember, &vec!["alpha".to_string()]));
    // The zygote refuses to start while another thread runs (a lock it holds would stay held
    // in every job).
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let other = std::thread::spawn(move || rx.recv());
    assert!(!start_zygote(|| {}));
    assert!(!zygote_running());
    drop(tx);
    let _ = other.join();
    let status = std::process::Command::new(std::env::current_exe().expect("own path"))
        .arg("--zygote-run")
        .status()
        .expect("re-run");
    assert!(status.success(), "the zygote run failed: {status}");
    println!("jobs: ok");
}
