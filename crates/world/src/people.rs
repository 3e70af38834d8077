//! The office's people: `world/people.toml`, one roster shared by mail, calendar and chat.
//!
//! ```toml
//! [[person]]
//! name = "Dana Kowalski"
//! email = "dana@brightwater.example"
//! handle = "dana"
//! role = "Finance lead"
//! department = "Finance"
//! manager = "marco@brightwater.example"
//! channels = ["general", "finance"]
//! profile = "Owns the quarterly budget."
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::WorldError;

/// One person of the office (the task's user may be one too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Person {
    pub name: String,
    pub email: String,
    /// Chat handle, without `@`.
    pub handle: String,
    #[serde(default)]
    pub role: String,
    #[serde(default)]
    pub department: String,
    /// The manager's email.
    #[serde(default)]
    pub manager: Option<String>,
    /// Chat channels the person is a member of.
    #[serde(default)]
    pub channels: Vec<String>,
    /// What anyone in the office can know about the person.
    #[serde(default)]
    pub profile: String,
}

/// The roster, by lower-case email.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct People {
    pub persons: BTreeMap<String, Person>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PeopleFile {
    #[serde(default)]
    person: Vec<Person>,
}

impl People {
    /// Read `world/people.toml` (absent = nobody).
    pub fn load(path: &Path) -> Result<People, WorldError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(People::default()),
            Err(e) => return Err(WorldError::io(path, e)),
        };
        let file: PeopleFile = toml::from_str(&text).map_err(|e| WorldError::Seed {
            path: path.to_path_buf(),
            message: format!("{e}— see docs/services/people.md for the format"),
        })?;
        let mut people = People::default();
        let mut handles = BTreeMap::new();
        for mut p in file.person {
            p.email = p.email.trim().to_lowercase();
            p.handle = p.handle.trim().trim_start_matches('@').to_lowercase();
            if !p.email.contains('@') || p.handle.is_empty() {
                return Err(WorldError::Seed {
                    path: path.to_path_buf(),
                    message: format!(
                        "person `{}` needs an email address and a chat handle",
                        p.name
                    ),
                });
            }
            if let Some(other) = handles.insert(p.handle.clone(), p.email.clone()) {
                return Err(WorldError::Seed {
                    path: path.to_path_buf(),
                    message: format!(
                        "handle `{}` is used by both {other} and {}; handles are unique",
                        p.handle, p.email
                    ),
                });
            }
            if people.persons.contains_key(&p.email) {
                return Err(WorldError::Seed {
                    path: path.to_path_buf(),
                    message: format!("{} appears twice; list each person once", p.email),
                });
            }
            people.persons.insert(p.email.clone(), p);
        }
        Ok(people)
    }

    /// A person by email or chat handle (with or without `@`), case-insensitive.
    pub fn find(&self, who: &str) -> Option<&Person> {
        let w = who.trim().trim_start_matches('@').to_lowercase();
        self.persons
            .get(&w)
            .or_else(|| self.persons.values().find(|p| p.handle == w))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Person> {
        self.persons.values()
    }

    pub fn is_empty(&self) -> bool {
        self.persons.is_empty()
    }
}
