//! The events of a turn: `[[turn.event]]` checked and turned into [`Event`]s.

use super::load::Loader;
use super::raw::*;
use super::*;

impl Loader {
    pub(super) fn event(
        &mut self,
        turn: u32,
        ev: Spanned<RawEvent>,
        user: &User,
        tz: Tz,
    ) -> Option<Event> {
        let span = ev.span();
        let location = self.at(span.clone());
        let ev = ev.into_inner();
        let kind_name = ev.kind.get_ref().clone();
        let turn_dir = self.dir.join("turns").join(turn.to_string());

        // Which optional fields each kind accepts.
        let allowed: &[&str] = match kind_name.as_str() {
            "add_file" | "replace_file" => &["path", "from"],
            "delete_file" => &["path"],
            "deliver_mail" => &["from", "to", "folder"],
            "add_calendar_event" => &[
                "from",
                "user",
                "uid",
                "summary",
                "description",
                "location",
                "start",
                "end",
                "organizer",
                "attendees",
            ],
            "update_calendar_event" => &[
                "user",
                "uid",
                "summary",
                "description",
                "location",
                "start",
                "end",
                "attendees",
            ],
            "cancel_calendar_event" => &["user", "uid"],
            "act" => &["as", "tool", "args"],
            other => {
                self.err(
                    ev.kind.span(),
                    format!("unknown event kind `{other}`"),
                    "use one of add_file, replace_file, delete_file, deliver_mail, add_calendar_event, update_calendar_event, cancel_calendar_event, act",
                );
                return None;
            }
        };
        let present: Vec<(&str, bool)> = vec![
            ("path", ev.path.is_some()),
            ("from", ev.from.is_some()),
            ("to", ev.to.is_some()),
            ("folder", ev.folder.is_some()),
            ("user", ev.user.is_some()),
            ("uid", ev.uid.is_some()),
            ("summary", ev.summary.is_some()),
            ("description", ev.description.is_some()),
            ("location", ev.location.is_some()),
            ("start", ev.start.is_some()),
            ("end", ev.end.is_some()),
            ("organizer", ev.organizer.is_some()),
            ("attendees", ev.attendees.is_some()),
            ("as", ev.actor.is_some()),
            ("tool", ev.tool.is_some()),
            ("args", ev.args.is_some()),
        ];
        let mut ok = true;
        for (field, is_set) in present {
            if is_set && !allowed.contains(&field) {
                self.err(
                    span.clone(),
                    format!("field `{field}` does not apply to a `{kind_name}` event"),
                    format!("a `{kind_name}` event takes: {}", allowed.join(", ")),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }

        let need = |this: &mut Self, field: &str, present: bool| {
            if !present {
                this.err(
                    span.clone(),
                    format!("a `{kind_name}` event needs `{field}`"),
                    format!("add `{field} = ...` to this [[turn.event]]"),
                );
            }
            present
        };
        let kind = match kind_name.as_str() {
            "add_file" | "replace_file" => {
                let has =
                    need(self, "path", ev.path.is_some()) & need(self, "from", ev.from.is_some());
                if !has {
                    return None;
                }
                let path = self.workspace_path(ev.path.as_ref()?)?;
                let source = self.turn_file(&turn_dir, turn, ev.from.as_ref()?)?;
                if kind_name == "add_file" {
                    EventKind::AddFile { path, source }
                } else {
                    EventKind::ReplaceFile { path, source }
                }
            }
            "delete_file" => {
                if !need(self, "path", ev.path.is_some()) {
                    return None;
                }
                EventKind::DeleteFile {
                    path: self.workspace_path(ev.path.as_ref()?)?,
                }
            }
            "deliver_mail" => {
                if !need(self, "from", ev.from.is_some()) {
                    return None;
                }
                let source = self.turn_file(&turn_dir, turn, ev.from.as_ref()?)?;
                EventKind::DeliverMail {
                    to: ev
                        .to
                        .clone()
                        .unwrap_or_else(|| user.email.clone())
                        .to_lowercase(),
                    folder: ev.folder.clone().unwrap_or_else(|| "INBOX".to_string()),
                    source,
                }
            }
            "add_calendar_event" => {
                let cal_user = ev
                    .user
                    .clone()
                    .unwrap_or_else(|| user.email.clone())
                    .to_lowercase();
                if let Some(from) = &ev.from {
                    let inline = [
                        "uid",
                        "summary",
                        "description",
                        "location",
                        "start",
                        "end",
                        "organizer",
                        "attendees",
                    ];
                    if ev.uid.is_some()
                        || ev.summary.is_some()
                        || ev.start.is_some()
                        || ev.end.is_some()
                        || ev.description.is_some()
                        || ev.location.is_some()
                        || ev.organizer.is_some()
                        || ev.attendees.is_some()
                    {
                        self.err(span.clone(), "an add_calendar_event takes either `from` (an .ics file) or inline fields, not both", format!("remove `from` or the inline fields ({})", inline.join(", ")));
                        return None;
                    }
                    let source = self.turn_file(&turn_dir, turn, from)?;
                    EventKind::AddCalendarIcs {
                        user: cal_user,
                        source,
                    }
                } else {
                    let has = need(self, "uid", ev.uid.is_some())
                        & need(self, "summary", ev.summary.is_some())
                        & need(self, "start", ev.start.is_some())
                        & need(self, "end", ev.end.is_some());
                    if !has {
                        return None;
                    }
                    let start = self.time(ev.start.as_ref()?, tz)?;
                    let end = self.time(ev.end.as_ref()?, tz)?;
                    if end < start {
                        self.err(
                            span.clone(),
                            "the event ends before it starts",
                            "check `start` and `end`",
                        );
                        return None;
                    }
                    EventKind::AddCalendarEvent {
                        user: cal_user,
                        event: InlineEvent {
                            uid: ev.uid.clone()?,
                            summary: ev.summary.clone()?,
                            description: ev.description.clone().unwrap_or_default(),
                            location: ev.location.clone().unwrap_or_default(),
                            start,
                            end,
                            organizer: ev.organizer.clone().map(|o| o.to_lowercase()),
                            attendees: ev
                                .attendees
                                .clone()
                                .unwrap_or_default()
                                .into_iter()
                                .map(|a| a.to_lowercase())
                                .collect(),
                        },
                    }
                }
            }
            "update_calendar_event" => {
                if !need(self, "uid", ev.uid.is_some()) {
                    return None;
                }
                let start = self.opt_time(&ev.start, tz)?;
                let end = self.opt_time(&ev.end, tz)?;
                EventKind::UpdateCalendarEvent {
                    user: ev
                        .user
                        .clone()
                        .unwrap_or_else(|| user.email.clone())
                        .to_lowercase(),
                    uid: ev.uid.clone()?,
                    changes: EventChanges {
                        summary: ev.summary.clone(),
                        description: ev.description.clone(),
                        location: ev.location.clone(),
                        start,
                        end,
                        attendees: ev
                            .attendees
                            .clone()
                            .map(|v| v.into_iter().map(|a| a.to_lowercase()).collect()),
                    },
                }
            }
            "cancel_calendar_event" => {
                if !need(self, "uid", ev.uid.is_some()) {
                    return None;
                }
                EventKind::CancelCalendarEvent {
                    user: ev
                        .user
                        .clone()
                        .unwrap_or_else(|| user.email.clone())
                        .to_lowercase(),
                    uid: ev.uid.clone()?,
                }
            }
            "act" => {
                let has =
                    need(self, "as", ev.actor.is_some()) & need(self, "tool", ev.tool.is_some());
                if !has {
                    return None;
                }
                let actor = ev.actor.as_ref()?;
                let tool = ev.tool.as_ref()?;
                let mut ok = true;
                if actor.get_ref().trim().is_empty() {
                    self.err(
                        actor.span(),
                        "`as` is empty",
                        "name a person of world/people.toml by email or chat handle",
                    );
                    ok = false;
                }
                let name = tool.get_ref();
                let service = name.split('_').next().unwrap_or("");
                if !name.contains('_')
                    || !name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                    || !KNOWN_APPS.contains(&service)
                {
                    self.err(tool.span(), format!("`{name}` is not a world tool name"), "use a tool of docs/tools.md or docs/services/, named service_action (e.g. chat_post)");
                    ok = false;
                }
                let args = match &ev.args {
                    None => serde_json::Value::Object(Default::default()),
                    Some(a) => match serde_json::to_value(a.get_ref()) {
                        Ok(v @ serde_json::Value::Object(_)) => v,
                        _ => {
                            self.err(
                                a.span(),
                                "`args` must be a table",
                                "write args = { key = value, ... } with the tool's arguments",
                            );
                            ok = false;
                            serde_json::Value::Null
                        }
                    },
                };
                if !ok {
                    return None;
                }
                EventKind::Act {
                    actor: actor.get_ref().trim().to_lowercase(),
                    tool: name.clone(),
                    args,
                }
            }
            _ => return None,
        };
        Some(Event {
            silent: ev.silent,
            kind,
            location,
        })
    }
}
