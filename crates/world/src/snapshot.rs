use crate::{ChangedFiles, World, WorldError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord { pub size: u64, pub hash: String }
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot { pub turn: u32, pub files: BTreeMap<String, FileRecord>, pub services: serde_json::Value, pub log_len: usize }
pub(crate) fn take(_w: &World) -> Result<Snapshot, WorldError> { todo!() }
pub(crate) fn restore(_w: &mut World, _s: &Snapshot) -> Result<(), WorldError> { todo!() }
pub(crate) fn changed(_w: &World) -> Result<ChangedFiles, WorldError> { todo!() }
