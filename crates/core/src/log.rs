//! The world event log: every change to the world, by anyone, in order.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::time::WorldTime;

/// Who changed the world.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Actor {
    /// The agent under test, through its tools.
    Agent,
    /// The task itself: the initial seed (turn 0) and the events of each turn.
    Task,
    /// A simulated colleague, by handle or email.
    Colleague(String),
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::Agent => f.write_str("agent"),
            Actor::Task => f.write_str("task"),
            Actor::Colleague(who) => write!(f, "colleague:{who}"),
        }
    }
}

impl FromStr for Actor {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "agent" => Ok(Actor::Agent),
            "task" => Ok(Actor::Task),
            _ => match s.strip_prefix("colleague:") {
                Some(who) if !who.is_empty() => Ok(Actor::Colleague(who.to_string())),
                _ => Err(format!(
                    "unknown actor `{s}`: expected agent, task or colleague:<who>"
                )),
            },
        }
    }
}

impl Serialize for Actor {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Actor {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// One entry of the world event log (`events.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    /// 1-based position in the log.
    pub seq: u64,
    /// The turn during which it happened; 0 is the initial seed.
    pub turn: u32,
    pub time: WorldTime,
    pub actor: Actor,
    /// The service that changed: `files`, `mail`, `calendar`, ...
    pub service: String,
    /// What happened, e.g. `write`, `send`, `deliver`, `create`.
    pub action: String,
    /// Whether a task event was silent (not announced); false for everything else.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub silent: bool,
    pub payload: Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actors_round_trip_as_strings() {
        for a in [Actor::Agent, Actor::Task, Actor::Colleague("sam".into())] {
            let s = serde_json::to_string(&a).unwrap();
            assert_eq!(serde_json::from_str::<Actor>(&s).unwrap(), a);
        }
        assert!("colleague:".parse::<Actor>().is_err());
        assert!("robot".parse::<Actor>().is_err());
    }
}
