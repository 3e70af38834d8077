use std::time::{Duration, Instant};

use super::*;

fn limits() -> Limits {
    Limits::new(Duration::from_secs(10), 256 << 20)
}

#[test]
fn returns_the_closures_value_exactly() {
    let text = String::from("borrowed from the parent");
    let floats = vec![0.1 + 0.2, 1e-300, f64::MAX, 2.0f64.sqrt()];
    let (t, f): (String, Vec<f64>) =
        run_isolated(&limits(), || (text.to_uppercase(), floats.clone())).unwrap();
    assert_eq!(t, "BORROWED FROM THE PARENT");
    // Bit for bit: the transport is CBOR, not decimal text.
    assert_eq!(
        f.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        floats.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn a_panic_is_an_error_with_its_message() {
    let e = run_isolated(&limits(), || -> u8 { panic!("bad input at byte 7") }).unwrap_err();
    assert_eq!(e, IsolateError::Panicked("bad input at byte 7".into()));
}

fn deep(n: u64) -> u64 {
    let pad = std::hint::black_box([n; 16]);
    if n == 0 { 0 } else { 1 + deep(pad[3] - 1) }
}

#[test]
fn a_stack_overflow_is_an_error_and_the_parent_lives() {
    let e = run_isolated(&limits(), || deep(u64::MAX)).unwrap_err();
    assert_eq!(e, IsolateError::StackOverflow, "{e}");
    assert!(e.to_string().contains("overflowed its stack"));
    // The parent still works.
    assert_eq!(run_isolated(&limits(), || 1u8).unwrap(), 1);
}

#[test]
fn an_allocation_failure_is_an_error_naming_the_memory_limit() {
    let e = run_isolated(&limits(), || {
        let v = vec![1u8; std::hint::black_box(4usize << 30)];
        v.len()
    })
    .unwrap_err();
    match &e {
        IsolateError::OutOfMemory {
            limit_bytes,
            message,
        } => {
            assert_eq!(*limit_bytes, 256 << 20);
            assert!(message.contains("memory allocation of"), "{message}");
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    assert!(e.to_string().contains("memory limit of 256 MiB"), "{e}");
}

#[test]
fn a_hang_is_killed_at_the_wall_clock_limit() {
    let l = Limits::new(Duration::from_millis(300), 64 << 20);
    let t = Instant::now();
    let e = run_isolated::<(), _>(&l, || {
        loop {
            std::hint::spin_loop();
        }
    })
    .unwrap_err();
    assert_eq!(e, IsolateError::TimedOut { limit: l.wall });
    assert!(e.to_string().contains("time limit of 0.3 s"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

#[test]
fn a_sleeping_child_is_killed_too() {
    let l = Limits::new(Duration::from_millis(200), 64 << 20);
    let e = run_isolated(&l, || std::thread::sleep(Duration::from_secs(60))).unwrap_err();
    assert_eq!(e, IsolateError::TimedOut { limit: l.wall });
}

#[test]
fn a_result_over_the_output_limit_is_refused() {
    let mut l = limits();
    l.max_output_bytes = 1000;
    let e = run_isolated(&l, || vec![7u8; 100_000]).unwrap_err();
    assert_eq!(e, IsolateError::OutputTooLarge { limit: 1000 });
}

#[test]
fn calls_nest_and_run_from_many_threads() {
    let handles: Vec<_> = (0..8u64)
        .map(|i| {
            std::thread::spawn(move || {
                run_isolated(&limits(), || {
                    run_isolated(&limits(), || i * 10).unwrap_or(u64::MAX) + 1
                })
            })
        })
        .collect();
    let got: Vec<u64> = handles
        .into_iter()
        .map(|h| h.join().unwrap().unwrap())
        .collect();
    assert_eq!(got, (0..8).map(|i| i * 10 + 1).collect::<Vec<_>>());
}

#[test]
fn a_crash_in_one_thread_does_not_disturb_calls_in_others() {
    let ok = std::thread::spawn(|| {
        (0..20)
            .map(|i| run_isolated(&limits(), move || i).unwrap())
            .sum::<i32>()
    });
    for _ in 0..5 {
        assert!(run_isolated(&limits(), || deep(u64::MAX)).is_err());
    }
    assert_eq!(ok.join().unwrap(), 190);
}

#[test]
fn a_child_blocked_on_a_lock_held_at_the_fork_is_retried_then_reported_stuck() {
    use std::sync::{Arc, Mutex, mpsc};
    let lock = Arc::new(Mutex::new(0u8));
    let (tx, rx) = mpsc::channel();
    let held = lock.clone();
    // Another thread holds the lock for the whole test: every child forked now finds it taken
    // forever (the lock's owner does not exist in the child).
    std::thread::spawn(move || {
        let _g = held.lock().unwrap();
        tx.send(()).unwrap();
        std::thread::sleep(Duration::from_secs(60));
    });
    rx.recv().unwrap();
    let t = Instant::now();
    let e = run_isolated(&Limits::new(Duration::from_secs(30), 64 << 20), || {
        *lock.lock().unwrap_or_else(|p| p.into_inner())
    })
    .unwrap_err();
    assert_eq!(
        e,
        IsolateError::Stuck {
            seconds: 3,
            tries: 3
        }
    );
    // Three tries of about 3 s each, well before the 30 s budget.
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}
