//! Plain text output: stdout is the final message (`text`).

use super::{Event, StreamParser};

#[derive(Debug, Default)]
pub struct TextParser {
    text: String,
}

impl TextParser {
    pub fn plain() -> TextParser {
        TextParser::default()
    }
}

impl StreamParser for TextParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        self.text.push_str(line);
        self.text.push('\n');
        Vec::new()
    }

    fn finish(&mut self, _stderr: &str) -> Vec<Event> {
        let text = self.text.trim();
        if text.is_empty() {
            Vec::new()
        } else {
            vec![Event::Final(text.to_string())]
        }
    }
}
