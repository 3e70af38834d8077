//! The data of the view `w` as plain values ([`Tree`]), and their frozen Starlark form.
//!
//! The view is built from the world in the evaluating process, as a `Tree`; it crosses to the
//! isolated process that runs the checks (see [`crate::eval`]) as CBOR, and is frozen there,
//! once per evaluation, into the `w` every check of that evaluation shares.

use serde::{Deserialize, Serialize};
use starlark::values::dict::AllocDict;
use starlark::values::list::AllocList;
use starlark::values::structs::AllocStruct;
use starlark::values::{FrozenHeap, FrozenHeapRef, FrozenValue};

use crate::globals::api;

/// A value of the view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum Tree {
    None,
    Bool(bool),
    Int(i64),
    Str(String),
    List(Vec<Tree>),
    /// A struct: fields read as `x.field`.
    Struct(Vec<(String, Tree)>),
    /// JSON as Starlark has it: objects are dicts (payloads, tool arguments and results).
    Json(serde_json::Value),
    /// A service view: objects are structs, except `{"$dict": {...}}`, a dict (for maps keyed
    /// by data: cells, properties); arrays are lists.
    Record(serde_json::Value),
    /// One of the namespaces of functions placed into `w`.
    Api(ApiName),
}

/// The function namespaces of `w`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum ApiName {
    Files,
    Mail,
    Calendar,
    FinalMessage,
    Reference,
}

impl Tree {
    pub fn s(x: &str) -> Tree {
        Tree::Str(x.to_string())
    }

    pub fn opt(x: Option<&str>) -> Tree {
        x.map(Tree::s).unwrap_or(Tree::None)
    }

    pub fn int(x: impl TryInto<i64>) -> Tree {
        x.try_into().map(Tree::Int).unwrap_or(Tree::Int(i64::MAX))
    }

    pub fn strs<'a>(v: impl IntoIterator<Item = &'a str>) -> Tree {
        Tree::List(v.into_iter().map(Tree::s).collect())
    }

    pub fn rec(fields: Vec<(&str, Tree)>) -> Tree {
        Tree::Struct(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }
}

/// Freeze `t` on `heap`.
pub(crate) fn freeze(heap: &FrozenHeap, t: &Tree) -> FrozenValue {
    match t {
        Tree::None => FrozenValue::new_none(),
        Tree::Bool(b) => FrozenValue::new_bool(*b),
        Tree::Int(i) => heap.alloc(*i),
        Tree::Str(s) => heap.alloc(s.as_str()),
        Tree::List(items) => {
            let v: Vec<FrozenValue> = items.iter().map(|x| freeze(heap, x)).collect();
            heap.alloc(AllocList(v))
        }
        Tree::Struct(fields) => {
            let v: Vec<(&str, FrozenValue)> = fields
                .iter()
                .map(|(k, x)| (k.as_str(), freeze(heap, x)))
                .collect();
            heap.alloc(AllocStruct(v))
        }
        Tree::Json(v) => heap.alloc(v.clone()),
        Tree::Record(v) => record(heap, v),
        Tree::Api(name) => {
            let api = api();
            match name {
                ApiName::Files => api.files,
                ApiName::Mail => api.mail,
                ApiName::Calendar => api.calendar,
                ApiName::FinalMessage => api.final_message,
                ApiName::Reference => api.reference,
            }
        }
    }
}

fn record(heap: &FrozenHeap, v: &serde_json::Value) -> FrozenValue {
    use serde_json::Value as J;
    match v {
        J::Object(m) => {
            if m.len() == 1
                && let Some(J::Object(d)) = m.get("$dict")
            {
                let items: Vec<(String, FrozenValue)> = d
                    .iter()
                    .map(|(k, x)| (k.clone(), record(heap, x)))
                    .collect();
                return heap.alloc(AllocDict(items));
            }
            let fields: Vec<(String, FrozenValue)> = m
                .iter()
                .map(|(k, x)| (k.clone(), record(heap, x)))
                .collect();
            heap.alloc(AllocStruct(fields))
        }
        J::Array(a) => {
            let items: Vec<FrozenValue> = a.iter().map(|x| record(heap, x)).collect();
            heap.alloc(AllocList(items))
        }
        other => heap.alloc(other.clone()),
    }
}

/// The frozen `w` of one evaluation.
pub(crate) struct View {
    pub heap: FrozenHeapRef,
    pub w: FrozenValue,
}

impl View {
    pub fn freeze(tree: &Tree) -> View {
        let heap = FrozenHeap::new();
        heap.add_reference(api().globals.heap());
        let w = freeze(&heap, tree);
        View {
            heap: heap.into_ref(),
            w,
        }
    }
}
