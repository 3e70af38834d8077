//! What the native functions of a running check see (through `Evaluator::extra`), in the
//! checks' isolated process: the task's user, the turn, the time zone, the agent's final
//! messages, and a line to the evaluating process for the world's data ([`crate::remote`]).

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;

use bureau_isolate::Peer;
use chrono_tz::Tz;
use serde::de::DeserializeOwned;
use starlark::any::ProvidesStaticType;
use starlark::values::{FrozenHeap, FrozenHeapRef, FrozenValue};

use crate::globals::fail;
use crate::remote::{Query, decode_bytes};
use crate::tree::freeze;
use crate::view::Entry;

/// Asks the evaluating process.
pub(crate) trait Ask {
    fn ask(&self, question: &[u8]) -> std::io::Result<Vec<u8>>;
}

/// [`Ask`] over the job's [`Peer`].
pub(crate) struct PeerAsk<'a, 'b>(pub RefCell<&'a mut Peer<'b>>);

impl Ask for PeerAsk<'_, '_> {
    fn ask(&self, question: &[u8]) -> std::io::Result<Vec<u8>> {
        self.0.borrow_mut().ask(question)
    }
}

/// Mail or calendar records, frozen for the evaluation.
pub(crate) struct Records {
    pub heap: FrozenHeapRef,
    pub items: Vec<(Entry, FrozenValue)>,
}

/// The evaluation context of the running check.
#[derive(ProvidesStaticType)]
pub(crate) struct Env<'e> {
    world: &'e dyn Ask,
    /// The task's user's address (the default mailbox and calendar).
    pub user_email: String,
    /// The world's turn (the default of `w.final_message`).
    pub turn: u32,
    pub tz: Tz,
    /// The agent's final message of each turn.
    pub finals: BTreeMap<u32, String>,
    mail: OnceCell<Records>,
    calendar: OnceCell<Records>,
}

impl<'e> Env<'e> {
    pub fn new(
        world: &'e dyn Ask,
        user_email: String,
        turn: u32,
        tz: Tz,
        finals: BTreeMap<u32, String>,
    ) -> Env<'e> {
        Env {
            world,
            user_email,
            turn,
            tz,
            finals,
            mail: OnceCell::new(),
            calendar: OnceCell::new(),
        }
    }

    fn raw(&self, q: &Query) -> starlark::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        if let Err(e) = ciborium::into_writer(q, &mut bytes) {
            return fail(format!("the question to the world cannot be encoded: {e}"));
        }
        match self.world.ask(&bytes) {
            Ok(a) if !a.is_empty() => Ok(a),
            Ok(_) => fail("the world gave no answer (an internal error of Bureau)"),
            Err(e) => fail(format!(
                "the evaluating process did not answer ({e}); the check cannot read the world"
            )),
        }
    }

    /// Ask the world `q`; its answer as `R`.
    pub fn call<R: DeserializeOwned>(&self, q: &Query) -> starlark::Result<R> {
        let a = self.raw(q)?;
        match ciborium::from_reader(a.as_slice()) {
            Ok(r) => Ok(r),
            Err(e) => fail(format!(
                "the world's answer cannot be read ({e}; an internal error of Bureau)"
            )),
        }
    }

    /// Ask the world for file contents.
    pub fn bytes(&self, q: &Query) -> starlark::Result<Result<Vec<u8>, String>> {
        Ok(decode_bytes(self.raw(q)?))
    }

    /// Every message of every mailbox, in arrival order (asked once per evaluation).
    pub fn mail(&self) -> starlark::Result<&Records> {
        self.records(&self.mail, Query::Mail)
    }

    /// Every event of every calendar, by owner, then start, then uid.
    pub fn calendar(&self) -> starlark::Result<&Records> {
        self.records(&self.calendar, Query::Calendar)
    }

    fn records<'s>(
        &'s self,
        cell: &'s OnceCell<Records>,
        q: Query,
    ) -> starlark::Result<&'s Records> {
        if let Some(r) = cell.get() {
            return Ok(r);
        }
        let entries: Vec<Entry> = self.call(&q)?;
        let heap = FrozenHeap::new();
        let items = entries
            .into_iter()
            .map(|e| {
                let v = freeze(&heap, &e.value);
                (e, v)
            })
            .collect();
        Ok(cell.get_or_init(|| Records {
            heap: heap.into_ref(),
            items,
        }))
    }
}
