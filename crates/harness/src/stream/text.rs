//! Plain text output: stdout is the final message (`text`), and Hermes's quiet mode
//! (`hermes chat -q ... -Q`), which prints only the final response on stdout.
//!
//! For Hermes, a `session_id: <id>` line on stderr (what its quiet mode is seen to print in
//! third-party wrappers; not confirmed by Hermes's documentation) gives the session to resume.

use super::{Event, StreamParser};

#[derive(Debug)]
pub struct TextParser {
    text: String,
    hermes: bool,
}

impl TextParser {
    pub fn plain() -> TextParser {
        TextParser {
            text: String::new(),
            hermes: false,
        }
    }

    pub fn hermes() -> TextParser {
        TextParser {
            text: String::new(),
            hermes: true,
        }
    }
}

impl StreamParser for TextParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        self.text.push_str(line);
        self.text.push('\n');
        Vec::new()
    }

    fn finish(&mut self, stderr: &str) -> Vec<Event> {
        let mut out = Vec::new();
        if self.hermes
            && let Some(id) = stderr
                .lines()
                .rev()
                .find_map(|l| l.trim().strip_prefix("session_id:"))
                .map(str::trim)
                .filter(|id| !id.is_empty() && !id.contains(char::is_whitespace))
        {
            out.push(Event::Session(id.to_string()));
        }
        let text = self.text.trim();
        if !text.is_empty() {
            out.push(Event::Final(text.to_string()));
        }
        out
    }
}
