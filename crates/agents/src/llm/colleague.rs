//! [`LlmColleagues`]: simulated colleagues played by a language model
//! (`bureau run --colleagues llm:<provider>:<model>`), a [`ReplyPolicy`] for the world.
//!
//! Each reply is one temperature-0 completion: the system prompt is the colleague's brief from
//! `people.toml` — name, role, department, manager, `profile`, what they `know` (shared when
//! asked), what they `refuse` (with the refusal), their `unknown_reply` and `strategy` — and
//! the user prompt is the conversation so far between the agent and this colleague (chat and
//! mail, in order) and the new message. The model answers with the reply text, or `NO_REPLY`
//! when a person would not answer (a thank-you, a statement).
//!
//! The model is a [`Judge`] (a temperature-0 completion); the run wraps it in a
//! [`bureau_check::CachedJudge`] over `<run>/colleague-cache/`, so the same conversation gets
//! the same reply with no call on a rerun. A model that still fails after its retries makes
//! the policy [`ReplyPolicy::failure`]: the colleague gives no reply and the run loop ends the
//! trial as `error`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use bureau_check::Judge;
use bureau_core::result::ModelTokens;
use bureau_world::people::{ChannelKind, Incoming, Person, Reply, ReplyPolicy};

/// What the model answers when the colleague would not reply.
pub const NO_REPLY: &str = "NO_REPLY";

/// Colleagues played by a model; one per trial (it keeps the trial's conversations).
pub struct LlmColleagues {
    model: Arc<dyn Judge>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Per colleague (email): the exchanges so far, as lines of the transcript.
    conversations: BTreeMap<String, Vec<String>>,
    failure: Option<String>,
    tokens: ModelTokens,
}

impl std::fmt::Debug for LlmColleagues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmColleagues")
            .field("model", &self.model.model())
            .finish_non_exhaustive()
    }
}

impl LlmColleagues {
    pub fn new(model: Arc<dyn Judge>) -> LlmColleagues {
        LlmColleagues {
            model,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The system prompt for `person`: their brief from the roster.
pub fn colleague_system(person: &Person) -> String {
    let mut s = format!(
        "You are {}, a colleague in an office, answering a message from a coworker (an AI assistant working for your company). \
Stay in character. Reply as {} would: briefly, in plain text, with no signature block. \
Share only facts listed below under \"What you know\"; never invent figures, dates, names or documents. \
If you are asked something you do not know, say so as described. \
If the message needs no answer (a thank-you, an announcement, a statement), answer exactly {NO_REPLY}.\n",
        person.name, person.name
    );
    let mut line = |label: &str, value: &str| {
        if !value.trim().is_empty() {
            s.push_str(&format!("{label}: {}\n", value.trim()));
        }
    };
    line("Your email", &person.email);
    line("Your role", &person.role);
    line("Your department", &person.department);
    line("Your manager", person.manager.as_deref().unwrap_or(""));
    line("About you", &person.profile);
    line("How you behave", person.strategy.as_deref().unwrap_or(""));
    if !person.knows.is_empty() {
        s.push_str("What you know (share it when the message asks about it):\n");
        for k in &person.knows {
            s.push_str(&format!("- about {}: {}\n", k.about.join(", "), k.reply));
        }
    }
    if !person.refuse.is_empty() {
        s.push_str("What you will not share (refuse, in these words, when asked):\n");
        for k in &person.refuse {
            s.push_str(&format!("- about {}: {}\n", k.about.join(", "), k.reply));
        }
    }
    let unknown = person
        .unknown_reply
        .as_deref()
        .unwrap_or("Sorry, I don't know.");
    s.push_str(&format!(
        "When asked something you do not know, answer along the lines of: {unknown}\n"
    ));
    s
}

/// How the new message appears in the transcript.
fn heading(incoming: &Incoming) -> String {
    match (incoming.channel, incoming.subject) {
        (ChannelKind::Mail, Some(subject)) => {
            format!("{} (mail, subject \"{subject}\")", incoming.sender)
        }
        (ChannelKind::Mail, None) => format!("{} (mail)", incoming.sender),
        (ChannelKind::Chat, _) => format!("{} (chat)", incoming.sender),
    }
}

/// The user prompt: the conversation so far and the new message.
pub fn colleague_prompt(history: &[String], incoming: &Incoming) -> String {
    let mut s = String::new();
    if history.is_empty() {
        s.push_str("Conversation so far: none.\n\n");
    } else {
        s.push_str("Conversation so far:\n");
        for line in history {
            s.push_str(line);
            s.push('\n');
        }
        s.push('\n');
    }
    s.push_str(&format!(
        "New message from {}:\n{}\n\nYour reply:",
        heading(incoming),
        incoming.text.trim()
    ));
    s
}

impl ReplyPolicy for LlmColleagues {
    fn reply(&self, person: &Person, incoming: &Incoming) -> Option<Reply> {
        let history = {
            let state = self.state();
            if state.failure.is_some() {
                return None;
            }
            state
                .conversations
                .get(&person.email)
                .cloned()
                .unwrap_or_default()
        };
        let system = colleague_system(person);
        let user = colleague_prompt(&history, incoming);
        let answer = self.model.complete_counted(&system, &user);
        let mut state = self.state();
        let text = match answer {
            Ok((t, tokens)) => {
                state.tokens.add(tokens);
                t.trim().to_string()
            }
            Err(e) => {
                state.failure = Some(format!(
                    "{} ({}) could not answer: {e}",
                    person.name,
                    self.model.model()
                ));
                return None;
            }
        };
        let talk = state.conversations.entry(person.email.clone()).or_default();
        talk.push(format!("{}: {}", heading(incoming), incoming.text.trim()));
        if text.is_empty() || text == NO_REPLY {
            talk.push(format!("{} (you): (no reply)", person.name));
            return None;
        }
        talk.push(format!("{} (you): {text}", person.name));
        Some(Reply { text })
    }

    fn failure(&self) -> Option<String> {
        self.state().failure.clone()
    }

    fn usage(&self) -> ModelTokens {
        self.state().tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bureau_world::people::Knowledge;

    /// A model that answers from a script and records the prompts it got.
    struct Scripted {
        answers: Mutex<Vec<Result<String, String>>>,
        prompts: Mutex<Vec<(String, String)>>,
    }

    impl Judge for Scripted {
        fn model(&self) -> String {
            "fake:colleague".into()
        }
        fn complete(&self, system: &str, user: &str) -> Result<String, String> {
            self.prompts
                .lock()
                .unwrap()
                .push((system.to_string(), user.to_string()));
            self.answers.lock().unwrap().remove(0)
        }
    }

    fn person() -> Person {
        Person {
            name: "Priya Natarajan".into(),
            email: "priya@corp.test".into(),
            handle: "priya".into(),
            role: "Finance Controller".into(),
            department: "Finance".into(),
            manager: Some("willem@corp.test".into()),
            channels: vec![],
            profile: "Owns budgets.".into(),
            strategy: Some("Terse; answers only what is asked.".into()),
            knows: vec![Knowledge {
                about: vec!["budget".into()],
                reply: "The Q2 budget is €48,500.".into(),
            }],
            refuse: vec![Knowledge {
                about: vec!["salary".into()],
                reply: "I can't share salary data.".into(),
            }],
            unknown_reply: None,
            replies_to: None,
        }
    }

    fn chat(text: &str) -> Incoming<'_> {
        Incoming {
            channel: ChannelKind::Chat,
            text,
            subject: None,
            sender: "ada@corp.test",
        }
    }

    #[test]
    fn replies_carry_the_brief_and_the_conversation_so_far() {
        let model = Arc::new(Scripted {
            answers: Mutex::new(vec![
                Ok("It's €48,500.".into()),
                Ok(NO_REPLY.into()),
                Ok("  Can't share that.  ".into()),
            ]),
            prompts: Mutex::new(vec![]),
        });
        let policy = LlmColleagues::new(model.clone());
        let p = person();
        assert_eq!(
            policy.reply(&p, &chat("What is the Q2 budget?")),
            Some(Reply {
                text: "It's €48,500.".into()
            })
        );
        assert_eq!(policy.reply(&p, &chat("Thanks!")), None);
        assert_eq!(
            policy.reply(&p, &chat("And Marco's salary?")).unwrap().text,
            "Can't share that."
        );
        assert_eq!(policy.failure(), None);
        let prompts = model.prompts.lock().unwrap();
        let (system, first) = &prompts[0];
        for needle in [
            "Priya Natarajan",
            "Finance Controller",
            "Owns budgets.",
            "Terse; answers only what is asked.",
            "about budget: The Q2 budget is €48,500.",
            "about salary: I can't share salary data.",
            NO_REPLY,
        ] {
            assert!(system.contains(needle), "{needle} missing from {system}");
        }
        assert!(first.contains("Conversation so far: none."), "{first}");
        let third = &prompts[2].1;
        assert!(
            third.contains("ada@corp.test (chat): What is the Q2 budget?\nPriya Natarajan (you): It's €48,500.\nada@corp.test (chat): Thanks!\nPriya Natarajan (you): (no reply)"),
            "{third}"
        );
        assert!(
            third.ends_with("And Marco's salary?\n\nYour reply:"),
            "{third}"
        );
    }

    #[test]
    fn a_model_failure_is_kept_and_stops_further_calls() {
        let model = Arc::new(Scripted {
            answers: Mutex::new(vec![Err("500 after 3 retries".into())]),
            prompts: Mutex::new(vec![]),
        });
        let policy = LlmColleagues::new(model.clone());
        assert_eq!(policy.reply(&person(), &chat("Budget?")), None);
        let why = policy.failure().unwrap();
        assert!(why.contains("500 after 3 retries"), "{why}");
        assert!(why.contains("Priya Natarajan"), "{why}");
        // No second call once failed (the script is empty: a call would panic).
        assert_eq!(policy.reply(&person(), &chat("Budget?")), None);
        assert_eq!(model.prompts.lock().unwrap().len(), 1);
    }
}
