//! Jobs on Unix (see the parent module): the message header and trampolines, frames, the
//! outcome, the supervisor, the zygote and the caller's side.

mod caller;
mod frames;
mod header;
mod supervise;
mod wire;
mod zygote;

pub(crate) use caller::*;
pub(crate) use frames::*;
pub(crate) use header::*;
pub(crate) use supervise::*;
pub(crate) use wire::*;
pub(crate) use zygote::*;
