//! The CPU gate: at most N threads of this process run trials' CPU-bound work at once, first
//! come first served.
//!
//! Why (issue 18): with a thousand concurrent trials on a few cores, every trial's thread
//! computing at once shares the cores evenly, so every burst — building the world, handling a
//! model's answer, running tool calls, scoring — ends at about the same moment for every
//! trial. All of them then wait on the model together, the cores idle, and the answers come
//! back together: the run moves in lockstep, paying each burst's length on top of each model
//! call. Behind the gate, the bursts run a few at a time in arrival order, each trial's next
//! model call goes out as soon as its own burst is done, and the computing of some trials
//! overlaps the waiting of the others.
//!
//! The gate is off (every call passes) until [`set_permits`] turns it on; `bureau run` does
//! so with the number of cores when it runs more trials at once than there are cores.
//!
//! Three calls mark a thread's work:
//! - [`busy`]: `f` runs holding a permit (waiting for one first when all are held);
//! - [`waiting`]: the permit this thread holds is given up while `f` runs (a model call, a
//!   harness turn, a child process that may sleep) and taken again afterwards;
//! - [`lend`]: the permit goes with work handed to another thread (a tool call run on its
//!   own thread, so that it can be abandoned when it blocks), and comes back with
//!   [`Loan::reclaim`].
//!
//! Only CPU work may hold a permit: a thread that waits on something while holding one takes
//! a core's share from every other trial. Holding one never blocks anything else than other
//! threads wanting one, so nothing that holds a permit may wait for a thread that needs one
//! (a loan is how a tool thread works for its caller without that).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::Thread;

struct Waiter {
    granted: AtomicBool,
    thread: Thread,
}

struct Gate {
    /// 0: off.
    permits: usize,
    held: usize,
    /// Threads waiting for a permit, by (rank, arrival).
    queue: BTreeMap<(u64, u64), Arc<Waiter>>,
    arrivals: u64,
}

impl Gate {
    fn first(&mut self) -> Option<Arc<Waiter>> {
        self.queue.pop_first().map(|(_, w)| w)
    }
}

static GATE: Mutex<Gate> = Mutex::new(Gate {
    permits: 0,
    held: 0,
    queue: BTreeMap::new(),
    arrivals: 0,
});

thread_local! {
    /// Whether this thread holds a permit.
    static HELD: Cell<bool> = const { Cell::new(false) };
    /// This thread's place in line ([`ranked`]): lower goes first.
    static RANK: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// Run `f` with this thread's rank at the gate set to `rank`: a thread waiting for a permit
/// goes before every waiting thread of a higher rank, and after those of its rank that came
/// earlier. `bureau run` ranks a trial by its place in the run order, so a trial that has
/// started finishes before later ones start: with arrival order alone, the answers to the
/// first trials' model calls would wait behind the setting up of every later trial, and the
/// run would fall into lockstep again. Unranked threads go last.
pub fn ranked<R>(rank: u64, f: impl FnOnce() -> R) -> R {
    let before = RANK.with(|r| r.replace(rank));
    struct Restore(u64);
    impl Drop for Restore {
        fn drop(&mut self) {
            RANK.with(|r| r.set(self.0));
        }
    }
    let _restore = Restore(before);
    f()
}

fn gate() -> MutexGuard<'static, Gate> {
    GATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Turn the gate on with `n` permits (at least 1), or off with 0. Threads already waiting are
/// let in as the new number allows; permits held stay held until given back.
pub fn set_permits(n: usize) {
    let mut g = gate();
    g.permits = n;
    if n == 0 {
        // Off: every waiter goes in at once.
        while let Some(w) = g.first() {
            g.held += 1;
            grant(&w);
        }
        return;
    }
    while g.held < g.permits {
        let Some(w) = g.first() else { break };
        g.held += 1;
        grant(&w);
    }
}

/// The gate's number of permits now (0: off).
pub fn permits() -> usize {
    gate().permits
}

/// The gate on with some permits while this lives ([`Permits::set`]), off again after.
#[must_use = "the gate is turned off again when this is dropped"]
pub struct Permits(());

impl Permits {
    /// [`set_permits`]`(n)` until the returned value is dropped.
    pub fn set(n: usize) -> Permits {
        set_permits(n);
        Permits(())
    }
}

impl Drop for Permits {
    fn drop(&mut self) {
        set_permits(0);
    }
}

fn grant(w: &Waiter) {
    w.granted.store(true, Ordering::Release);
    w.thread.unpark();
}

/// Take a permit, waiting in line for one. `false`: the gate is off, nothing was taken.
fn acquire() -> bool {
    let mut g = gate();
    if g.permits == 0 {
        return false;
    }
    if g.held < g.permits && g.queue.is_empty() {
        g.held += 1;
        return true;
    }
    let me = Arc::new(Waiter {
        granted: AtomicBool::new(false),
        thread: std::thread::current(),
    });
    g.arrivals += 1;
    let key = (RANK.with(Cell::get), g.arrivals);
    g.queue.insert(key, me.clone());
    drop(g);
    while !me.granted.load(Ordering::Acquire) {
        std::thread::park();
    }
    true
}

/// Give a permit back: to the first thread in line, else to the gate.
fn release() {
    let mut g = gate();
    if g.held > g.permits || g.queue.is_empty() {
        // Fewer permits than before (this one is retired), or nobody waiting.
        g.held = g.held.saturating_sub(1);
        return;
    }
    // Handed over: the number held does not change.
    if let Some(w) = g.first() {
        grant(&w);
    }
}

/// Whether this thread holds a permit.
pub fn holding() -> bool {
    HELD.with(Cell::get)
}

/// Run `f` holding a permit: taken first (waiting in line when all are held) unless this
/// thread holds one already, given back after (also when `f` panics).
pub fn busy<R>(f: impl FnOnce() -> R) -> R {
    if holding() || !acquire() {
        return f();
    }
    HELD.with(|h| h.set(true));
    struct Give;
    impl Drop for Give {
        fn drop(&mut self) {
            if HELD.with(|h| h.replace(false)) {
                release();
            }
        }
    }
    let _give = Give;
    f()
}

/// Run `f` without the permit this thread holds (if any): given up first, taken again after
/// (also when `f` panics), so another trial computes while this one waits.
pub fn waiting<R>(f: impl FnOnce() -> R) -> R {
    if !HELD.with(|h| h.replace(false)) {
        return f();
    }
    release();
    struct Take;
    impl Drop for Take {
        fn drop(&mut self) {
            if acquire() {
                HELD.with(|h| h.set(true));
            }
        }
    }
    let _take = Take;
    f()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoanState {
    /// The borrowing thread holds the permit.
    Out,
    /// The borrower is done: the permit is the lender's again.
    Back,
    /// The lender stopped waiting: the borrower gives the permit to the gate when done.
    Abandoned,
}

/// This thread's permit, lent to work run on another thread ([`Lent::carry`]).
pub struct Loan {
    state: Option<Arc<Mutex<LoanState>>>,
}

/// What moves to the borrowing thread.
pub struct Lent {
    state: Option<Arc<Mutex<LoanState>>>,
    rank: u64,
}

fn loan_state(s: &Mutex<LoanState>) -> MutexGuard<'_, LoanState> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

/// Lend this thread's permit (if it holds one) to work it hands to another thread: the lender
/// must only wait for that work, then [`Loan::reclaim`] the permit.
pub fn lend() -> (Loan, Lent) {
    let state = HELD
        .with(|h| h.replace(false))
        .then(|| Arc::new(Mutex::new(LoanState::Out)));
    (
        Loan {
            state: state.clone(),
        },
        Lent {
            state,
            rank: RANK.with(Cell::get),
        },
    )
}

impl Lent {
    /// Run `f` on this (borrowing) thread with the lent permit; when done, the permit goes
    /// back to the lender, or to the gate if the lender stopped waiting.
    pub fn carry<R>(mut self, f: impl FnOnce() -> R) -> R {
        let rank = self.rank;
        let Some(state) = self.state.take() else {
            return ranked(rank, f);
        };
        HELD.with(|h| h.set(true));
        struct Back(Arc<Mutex<LoanState>>);
        impl Drop for Back {
            fn drop(&mut self) {
                // `waiting` inside `f` takes a permit again before returning: one is held
                // (unless the gate was turned off meanwhile).
                give_back(&self.0, HELD.with(|h| h.replace(false)));
            }
        }
        let _back = Back(state);
        ranked(rank, f)
    }
}

/// The borrower is done with a loan, holding a permit or not (`held`): the permit goes back
/// to the lender, or to the gate if the lender took a new one.
fn give_back(state: &Mutex<LoanState>, held: bool) {
    let mut s = loan_state(state);
    match *s {
        LoanState::Out if held => *s = LoanState::Back,
        // Nothing to give back: the lender takes a new one.
        LoanState::Out => *s = LoanState::Abandoned,
        LoanState::Abandoned | LoanState::Back => {
            drop(s);
            if held {
                release();
            }
        }
    }
}

impl Drop for Lent {
    /// Never carried (the thread that was to borrow it did not start): the permit, which never
    /// left, goes back as from a borrower.
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            give_back(&state, true);
        }
    }
}

impl Loan {
    /// Take the permit back after the borrowing work ended — or, when it has not (the lender
    /// gave up on it), leave it to the borrower and take a new one.
    pub fn reclaim(mut self) {
        let Some(state) = self.state.take() else {
            return;
        };
        let mut s = loan_state(&state);
        if *s == LoanState::Back {
            drop(s);
            HELD.with(|h| h.set(true));
            return;
        }
        *s = LoanState::Abandoned;
        drop(s);
        if acquire() {
            HELD.with(|h| h.set(true));
        }
    }
}

impl Drop for Loan {
    /// Not reclaimed (the lender unwinds): the permit goes to the gate, now or when the
    /// borrower is done.
    fn drop(&mut self) {
        let Some(state) = self.state.take() else {
            return;
        };
        let mut s = loan_state(&state);
        if *s == LoanState::Back {
            drop(s);
            release();
        } else {
            *s = LoanState::Abandoned;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    /// The gate is process-wide: its tests take turns.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn held() -> usize {
        gate().held
    }

    #[test]
    fn off_lets_everything_through() {
        let _s = serial();
        set_permits(0);
        let inside = busy(|| {
            assert!(!holding());
            busy(|| 7)
        });
        assert_eq!(inside, 7);
        assert_eq!(held(), 0);
    }

    #[test]
    fn at_most_n_threads_are_busy_at_once_and_all_permits_come_back() {
        let _s = serial();
        set_permits(2);
        let now = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (now, most) = (now.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        busy(|| {
                            let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(n, Ordering::SeqCst);
                            // Nested: no second permit.
                            busy(std::thread::yield_now);
                            now.fetch_sub(1, Ordering::SeqCst);
                        });
                        // Waiting inside busy gives the permit up and takes it again.
                        busy(|| waiting(|| std::thread::sleep(Duration::from_micros(50))));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(most.load(Ordering::SeqCst) <= 2);
        assert_eq!(held(), 0);
        set_permits(0);
    }

    #[test]
    fn a_waiting_thread_lets_another_in() {
        let _s = serial();
        set_permits(1);
        let (tx, rx) = std::sync::mpsc::channel();
        let first = std::thread::spawn(move || {
            busy(|| {
                // Without `waiting`, the second thread could never run: this one waits for it.
                waiting(|| rx.recv_timeout(Duration::from_secs(10)).unwrap());
            })
        });
        let second = std::thread::spawn(move || busy(|| tx.send(()).unwrap()));
        second.join().unwrap();
        first.join().unwrap();
        assert_eq!(held(), 0);
        set_permits(0);
    }

    /// With one permit held, threads of these ranks (`None`: unranked) get in line one after
    /// the other; the order in which they are let in, by their place in `ranks`.
    fn order_let_in(ranks: &[Option<u64>]) -> Vec<usize> {
        set_permits(1);
        let order = Arc::new(Mutex::new(Vec::new()));
        let (go, gate_open) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn(move || busy(|| gate_open.recv().unwrap()));
        while held() == 0 {
            std::thread::yield_now();
        }
        let mut threads = Vec::new();
        for (i, rank) in ranks.iter().copied().enumerate() {
            let order = order.clone();
            threads.push(std::thread::spawn(move || {
                let go_in = || busy(|| order.lock().unwrap().push(i));
                match rank {
                    Some(r) => ranked(r, go_in),
                    None => go_in(),
                }
            }));
            // Each in line before the next starts.
            while gate().queue.len() < i + 1 {
                std::thread::yield_now();
            }
        }
        go.send(()).unwrap();
        holder.join().unwrap();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(held(), 0);
        set_permits(0);
        Arc::try_unwrap(order).unwrap().into_inner().unwrap()
    }

    #[test]
    fn threads_get_permits_in_arrival_order() {
        let _s = serial();
        assert_eq!(order_let_in(&[None; 5]), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_lower_rank_goes_first() {
        let _s = serial();
        // In line in the order 5, 3, unranked, 1, 3: let in as 1, 3, 3, 5, unranked.
        assert_eq!(
            order_let_in(&[Some(5), Some(3), None, Some(1), Some(3)]),
            vec![3, 1, 4, 0, 2]
        );
    }

    #[test]
    fn a_loan_carries_the_permit_to_another_thread_and_back() {
        let _s = serial();
        set_permits(1);
        busy(|| {
            let (loan, lent) = lend();
            assert!(!holding());
            let t = std::thread::spawn(move || lent.carry(holding));
            assert!(t.join().unwrap(), "the borrower holds the permit");
            loan.reclaim();
            assert!(holding());
            assert_eq!(held(), 1);
        });
        assert_eq!(held(), 0);
        set_permits(0);
    }

    #[test]
    fn an_abandoned_loan_is_given_back_by_the_borrower() {
        let _s = serial();
        set_permits(2);
        let (release_borrower, blocked) = std::sync::mpsc::channel::<()>();
        let borrower = busy(|| {
            let (loan, lent) = lend();
            let t = std::thread::spawn(move || {
                lent.carry(|| blocked.recv_timeout(Duration::from_secs(10)).unwrap())
            });
            // The lender gives up on the borrower (a stalled tool) and takes a new permit.
            loan.reclaim();
            assert!(holding());
            assert_eq!(held(), 2, "the borrower's and the lender's");
            t
        });
        assert_eq!(held(), 1, "the borrower still holds its permit");
        release_borrower.send(()).unwrap();
        borrower.join().unwrap();
        assert_eq!(held(), 0);
        set_permits(0);
    }

    #[test]
    fn a_loan_never_carried_comes_back() {
        let _s = serial();
        set_permits(1);
        busy(|| {
            let (loan, lent) = lend();
            drop(lent);
            loan.reclaim();
            assert!(holding());
            assert_eq!(held(), 1);
        });
        assert_eq!(held(), 0);
        set_permits(0);
    }

    #[test]
    fn a_panic_gives_the_permit_back() {
        let _s = serial();
        set_permits(1);
        let r = std::panic::catch_unwind(|| busy(|| waiting(|| panic!("boom"))));
        assert!(r.is_err());
        assert!(!holding());
        assert_eq!(held(), 0);
        set_permits(0);
    }
}
