//! Third-party agent harnesses (Claude Code, Codex CLI, ...) as plain data: what the agents
//! file and the `--agent` spec say about them.
//!
//! The agents that run them live in the `bureau-harness` crate, which depends on this one (it
//! serves the world over MCP through `bureau-mcp`). So this crate only parses and validates
//! harness definitions ([`HarnessDef`]) and hands them to a [`HarnessMaker`] that the layer
//! above provides ([`crate::AgentCatalog::with_harnesses`]); without one, a harness spec is a
//! configuration error saying so.
//!
//! Specs: a named adapter (`claude-code`, `codex`, `openhands`, `openclaw`, `hermes`),
//! optionally with a model (`claude-code:claude-sonnet-4-5`), or `command:<template>` — a
//! command line split into arguments like a shell would split it (quotes group words), but
//! never run by a shell.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::llm::Price;
use crate::{Agent, AgentError};

/// The named adapters, in the order docs list them. `command` is the generic one.
pub const HARNESSES: &[&str] = &[
    "command",
    "claude-code",
    "codex",
    "openhands",
    "openclaw",
    "hermes",
];

/// Output formats a `command` harness may declare (`format = ...`): one per named adapter,
/// plus `text` (stdout is the final message).
pub const FORMATS: &[&str] = &[
    "claude-code",
    "codex",
    "openhands",
    "openclaw",
    "hermes",
    "text",
];

/// A third-party harness agent: which harness, how it is started, and its limits. Never a
/// secret (keys stay in the environment the harness inherits). Serialised into `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HarnessDef {
    pub kind: &'static str,
    /// One of [`HARNESSES`].
    pub harness: String,
    /// The command template (`command` harness; placeholders such as `{prompt}`), or `None`
    /// for a named adapter's own invocation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// How the output stream is parsed: one of [`FORMATS`]; `None`: the harness's own (or
    /// `text` for `command`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Passed to a named adapter's harness as its model flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Extra arguments appended to a named adapter's invocation.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment variables for the harness process (names and values; no secrets
    /// here: the harness inherits Bureau's environment for keys).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Wall-clock seconds per turn, at most the task's own limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<u64>,
    /// The agents file's price of the model ([`HarnessDef::price_key`]), used when the
    /// harness reports tokens but no cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
}

impl HarnessDef {
    /// A harness with every default.
    pub fn new(harness: impl Into<String>) -> HarnessDef {
        HarnessDef {
            kind: "harness",
            harness: harness.into(),
            command: None,
            format: None,
            model: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            wall_seconds: None,
            price: None,
        }
    }

    /// The `[prices]` key of this harness's model: `openai:<model>` for Codex,
    /// `anthropic:<model>` for Claude Code, the model itself when it is written
    /// `provider:model`; `None` without a model.
    pub fn price_key(&self) -> Option<String> {
        let model = self.model.as_deref()?;
        Some(match self.harness.as_str() {
            "codex" => format!("openai:{model}"),
            "claude-code" => format!("anthropic:{model}"),
            _ => model.to_string(),
        })
    }

    /// The harness a `--agent` spec names, if it names one: `<adapter>`, `<adapter>:<model>`
    /// or `command:<template>`. `Some(Err)` when it names one badly.
    pub fn from_spec(spec: &str) -> Option<Result<HarnessDef, AgentError>> {
        if let Some(template) = spec.strip_prefix("command:") {
            return Some(split_command(template).map(|command| {
                let mut def = HarnessDef::new("command");
                def.command = Some(command);
                def
            }));
        }
        let (name, model) = match spec.split_once(':') {
            Some((n, m)) => (n, Some(m)),
            None => (spec, None),
        };
        if name == "command" {
            return Some(Err(AgentError::Config(
                "`--agent command` needs a command — write --agent 'command:my-agent --prompt-file {prompt_file} --mcp {mcp_config}', or declare it in an agents file".into(),
            )));
        }
        if !HARNESSES.contains(&name) {
            return None;
        }
        let mut def = HarnessDef::new(name);
        match model.map(str::trim) {
            Some("") => {
                return Some(Err(AgentError::Config(format!(
                    "`{spec}` has an empty model — write {name}:<model> or just {name}"
                ))));
            }
            Some(m) => def.model = Some(m.to_string()),
            None => {}
        }
        Some(Ok(def))
    }
}

/// Makes harness agents; provided by the layer that can run them (`bureau-harness`).
pub trait HarnessMaker: Send + Sync {
    /// The agent named `name` defined by `def`.
    fn make(&self, name: &str, def: &HarnessDef) -> Result<Box<dyn Agent>, AgentError>;
}

/// Split a command line into arguments: whitespace separates words; `'...'` keeps its text
/// as it is; `"..."` keeps its text with `\"` and `\\` escapes; `\` outside quotes escapes
/// the next character. Nothing is expanded (no variables, globs or substitutions).
pub fn split_command(line: &str) -> Result<Vec<String>, AgentError> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(unclosed(line, '\'')),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err(unclosed(line, '"')),
                        },
                        Some(c) => word.push(c),
                        None => return Err(unclosed(line, '"')),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(c) = chars.next() {
                    word.push(c);
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(AgentError::Config(
            "the command template is empty — give the harness's command, e.g. command:'my-agent --prompt-file {prompt_file}'".into(),
        ));
    }
    Ok(words)
}

fn unclosed(line: &str, quote: char) -> AgentError {
    AgentError::Config(format!(
        "the command template `{line}` has an unclosed {quote} — close the quote"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_like_a_shell_without_expanding() {
        assert_eq!(
            split_command(r#"my-agent --prompt-file {prompt_file} -m 'two words' "a \"q\"" $HOME"#)
                .unwrap(),
            vec![
                "my-agent",
                "--prompt-file",
                "{prompt_file}",
                "-m",
                "two words",
                "a \"q\"",
                "$HOME"
            ]
        );
        assert_eq!(split_command("a ''").unwrap(), vec!["a", ""]);
        assert!(
            split_command("a 'b")
                .unwrap_err()
                .to_string()
                .contains("unclosed '")
        );
        assert!(
            split_command("  ")
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
    }

    #[test]
    fn specs_name_adapters_models_and_commands() {
        let d = HarnessDef::from_spec("claude-code").unwrap().unwrap();
        assert_eq!((d.harness.as_str(), d.model), ("claude-code", None));
        let d = HarnessDef::from_spec("codex:gpt-5-codex").unwrap().unwrap();
        assert_eq!(d.model.as_deref(), Some("gpt-5-codex"));
        let d = HarnessDef::from_spec("command:fake --p {prompt}")
            .unwrap()
            .unwrap();
        assert_eq!(d.harness, "command");
        assert_eq!(d.command.unwrap(), vec!["fake", "--p", "{prompt}"]);
        assert!(HarnessDef::from_spec("oracle").is_none());
        assert!(HarnessDef::from_spec("llm:openai:x").is_none());
        assert!(HarnessDef::from_spec("command").unwrap().is_err());
        assert!(HarnessDef::from_spec("codex:").unwrap().is_err());
    }
}
