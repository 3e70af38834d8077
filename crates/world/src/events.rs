//! Building a world from a task's `world/` and applying the task's events.

use std::path::Path;
use std::sync::Arc;

use bureau_core::log::Actor;
use bureau_core::task::{Event, EventKind, InlineEvent, Task};
use bureau_formats::calendar::{Attendee, CalEvent, parse_ics};
use bureau_formats::mail::split_mbox;
use chrono::Utc;
use serde_json::json;

use crate::calendar::CANCELLED;
use crate::files::{Files, to_slash};
use crate::mail::{INBOX, MailState};
use crate::{BaseLayer, CalendarState, World, WorldError, snapshot};

pub(crate) fn build(
    task: &Task,
    root: &Path,
    replica: Option<(bureau_replica::Lease, Arc<BaseLayer>)>,
) -> Result<World, WorldError> {
    std::fs::create_dir_all(root).map_err(|e| WorldError::io(root, e))?;
    // Every path of the world is absolute: git and other programs run with another working
    // directory than Bureau's, where a relative root would name something else.
    let root = &std::path::absolute(root).map_err(|e| WorldError::io(root, e))?;
    if replica.is_some() && task.workspace.is_none() {
        return Err(WorldError::Seed {
            path: task.toml_path(),
            message: "only a task with [workspace] can be built on a replica".into(),
        });
    }
    let workspace = match &replica {
        Some((lease, _)) => lease.path(),
        None => root.join("workspace"),
    };
    if replica.is_none() && workspace.exists() {
        return Err(WorldError::Seed {
            path: workspace,
            message: "a world already exists here; build each world in a fresh directory".into(),
        });
    }
    let files = Files::new(workspace.clone()).map_err(|e| WorldError::io(&workspace, e))?;
    let now = task
        .turns
        .first()
        .map(|t| t.at)
        .unwrap_or_else(|| chrono::DateTime::UNIX_EPOCH.fixed_offset());
    let mut world = World {
        root: root.to_path_buf(),
        files,
        mail: MailState::default(),
        calendar: CalendarState::default(),
        people: crate::People::load(&task.world_dir().join("people.toml"))?,
        policy: Box::new(crate::DeterministicPolicy),
        chat: Default::default(),
        kb: Default::default(),
        sheets: Default::default(),
        tracker: Default::default(),
        code: Default::default(),
        silent_scope: false,
        apps: task.apps.clone(),
        user: task.user.clone(),
        timezone: task.timezone,
        turn: 0,
        now,
        log: Vec::new(),
        baseline: snapshot::Snapshot::empty(),
        memory: None,
        media_out: Vec::new(),
        workspace_entry: None,
        base: None,
        replica: None,
    };
    world.mail.ensure_mailbox(&task.user.email);
    world.calendar.ensure(&task.user.email);

    let seed = task.world_dir();
    // [workspace]: the generated persona workspace first, the task's own files over it.
    if let Some(ws) = &task.workspace {
        let (count, bytes) = match replica {
            Some((lease, base)) => {
                let n = (base.file_count(), base.bytes());
                // Agent subprocesses (shell, harnesses) enter an overlay replica's namespaces.
                let entry = lease.entry().map_err(|e| WorldError::Seed {
                    path: world.files.root().to_path_buf(),
                    message: format!("cannot open the replica's namespaces: {e}"),
                })?;
                world.workspace_entry = entry.map(Arc::new);
                world.base = Some(base);
                world.replica = Some(std::sync::Mutex::new(lease));
                n
            }
            None => {
                let n = crate::generated::materialise(ws, &task.toml_path(), world.files.root())?;
                world.base = Some(crate::generated::base_layer(ws, &task.toml_path())?);
                n
            }
        };
        world.record(
            Actor::Task,
            "files",
            "generate",
            false,
            json!({"persona": ws.persona, "files": count, "bytes": bytes, "seed": ws.seed}),
        );
    }
    seed_files(&mut world, &seed.join("files"))?;
    if task.workspace.is_some() {
        crate::generated::check_file_deps(task, world.files.root())?;
    }
    seed_mail(&mut world, &seed.join("mail"))?;
    seed_calendar(&mut world, &seed.join("calendar"))?;
    crate::chat::seed(&mut world, &seed.join("chat"))?;
    crate::kb::seed(&mut world, &seed.join("kb"))?;
    crate::sheets::seed(&mut world, &seed.join("sheets"))?;
    crate::tracker::seed(&mut world, &seed.join("tracker"))?;
    crate::code::seed(&mut world, &seed.join("code"))?;
    world.baseline = world.snapshot()?;
    Ok(world)
}

fn seed_files(world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.is_dir() {
        return Ok(());
    }
    let mut count = 0u64;
    let mut bytes = 0u64;
    for entry in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let entry = entry.map_err(|e| WorldError::Seed {
            path: dir.to_path_buf(),
            message: format!("cannot walk the seed files: {e}"),
        })?;
        let rel = entry
            .path()
            .strip_prefix(dir)
            .map(to_slash)
            .unwrap_or_default();
        let target = world.files.root().join(&rel);
        let ft = entry.file_type();
        if ft.is_symlink() {
            return Err(WorldError::Seed {
                path: entry.path().to_path_buf(),
                message: "seed files cannot be symbolic links; copy the file instead".into(),
            });
        } else if ft.is_dir() {
            std::fs::create_dir_all(&target).map_err(|e| WorldError::io(&target, e))?;
        } else if let Some(kind) = crate::files::special_kind(&ft) {
            return Err(WorldError::Seed {
                path: entry.path().to_path_buf(),
                message: format!("seed files must be regular files; this is {kind}"),
            });
        } else {
            let n = std::fs::copy(entry.path(), &target)
                .map_err(|e| WorldError::io(entry.path(), e))?;
            count += 1;
            bytes += n;
        }
    }
    world.record(
        Actor::Task,
        "files",
        "seed",
        false,
        json!({"files": count, "bytes": bytes}),
    );
    Ok(())
}

fn sorted_entries(dir: &Path) -> Result<Vec<std::path::PathBuf>, WorldError> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| WorldError::io(dir, e))?
        .flatten()
        .map(|e| e.path())
        .collect();
    v.sort();
    Ok(v)
}

fn seed_mail(world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.is_dir() {
        return Ok(());
    }
    for path in sorted_entries(dir)? {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if path.is_dir() {
            let owner = name.to_lowercase();
            check_owner(&path, &owner)?;
            world.mail.ensure_mailbox(&owner);
            for entry in walkdir::WalkDir::new(&path)
                .min_depth(1)
                .sort_by_file_name()
            {
                let entry = entry.map_err(|e| WorldError::Seed {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                if !entry.file_type().is_file() {
                    continue;
                }
                let file = entry.path();
                if file.extension().and_then(|e| e.to_str()) != Some("eml") {
                    return Err(WorldError::Seed {
                        path: file.to_path_buf(),
                        message: "mail seeds are .eml files (one message each)".into(),
                    });
                }
                let folder = file
                    .parent()
                    .and_then(|p| p.strip_prefix(&path).ok())
                    .map(to_slash)
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| INBOX.to_string());
                let raw = std::fs::read(file).map_err(|e| WorldError::io(file, e))?;
                deliver(world, Actor::Task, false, &owner, &folder, &raw, file)?;
            }
        } else if let Some(user) = name.strip_suffix(".mbox") {
            let owner = user.to_lowercase();
            check_owner(&path, &owner)?;
            let raw = std::fs::read(&path).map_err(|e| WorldError::io(&path, e))?;
            for msg in split_mbox(&raw) {
                deliver(world, Actor::Task, false, &owner, INBOX, &msg, &path)?;
            }
        } else {
            return Err(WorldError::Seed {
                path,
                message: "world/mail/ holds <user-email>/ folders of .eml files or <user-email>.mbox files".into(),
            });
        }
    }
    Ok(())
}

fn check_owner(path: &Path, owner: &str) -> Result<(), WorldError> {
    if owner.contains('@') {
        Ok(())
    } else {
        Err(WorldError::Seed {
            path: path.to_path_buf(),
            message: format!(
                "`{owner}` is not an email address; name mailboxes by their owner's address"
            ),
        })
    }
}

fn deliver(
    world: &mut World,
    actor: Actor,
    silent: bool,
    owner: &str,
    folder: &str,
    raw: &[u8],
    source: &Path,
) -> Result<(), WorldError> {
    // A message without a date cannot be ordered, shown with its time or checked against a
    // deadline: refused here rather than stored with `date: null`.
    let seed_err = |message: String| WorldError::Seed {
        path: source.to_path_buf(),
        message,
    };
    let parsed = bureau_formats::mail::parse_eml(raw).map_err(|e| seed_err(e.to_string()))?;
    if parsed.date.is_none() {
        return Err(seed_err(
            "the message has no Date header, or one that does not parse — add one such as \
             `Date: Mon, 02 Mar 2026 09:00:00 +0100` (RFC 5322)"
                .into(),
        ));
    }
    if parsed.message_id.is_none() {
        return Err(seed_err(
            "the message has no Message-ID header — add one such as \
             `Message-ID: <budget-1@corp.test>` (replies and threads refer to it)"
                .into(),
        ));
    }
    let id = world
        .mail
        .insert_raw(owner, folder, raw, false)
        .map_err(|message| WorldError::Seed {
            path: source.to_path_buf(),
            message,
        })?;
    let subject = world
        .mail
        .get(&id)
        .map(|m| m.mail.subject.clone())
        .unwrap_or_default();
    world.record(
        actor,
        "mail",
        "deliver",
        silent,
        json!({"id": id, "owner": owner, "folder": folder, "subject": subject}),
    );
    Ok(())
}

fn seed_calendar(world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.is_dir() {
        return Ok(());
    }
    for path in sorted_entries(dir)? {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        let Some(user) = name.strip_suffix(".ics") else {
            return Err(WorldError::Seed {
                path,
                message: "world/calendar/ holds <user-email>.ics files".into(),
            });
        };
        let owner = user.to_lowercase();
        check_owner(&path, &owner)?;
        add_ics(world, Actor::Task, false, &owner, &path)?;
    }
    Ok(())
}

fn add_ics(
    world: &mut World,
    actor: Actor,
    silent: bool,
    owner: &str,
    path: &Path,
) -> Result<(), WorldError> {
    let text = std::fs::read_to_string(path).map_err(|e| WorldError::io(path, e))?;
    let events = parse_ics(&text, world.timezone).map_err(|e| WorldError::Seed {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    world.calendar.ensure(owner);
    for ev in events {
        add_event(world, actor.clone(), silent, owner, ev).map_err(|message| WorldError::Seed {
            path: path.to_path_buf(),
            message,
        })?;
    }
    Ok(())
}

fn add_event(
    world: &mut World,
    actor: Actor,
    silent: bool,
    owner: &str,
    ev: CalEvent,
) -> Result<(), String> {
    let cal = world.calendar.ensure(owner);
    if cal.contains_key(&ev.uid) {
        return Err(format!(
            "event UID `{}` is already in {owner}'s calendar; UIDs must be unique",
            ev.uid
        ));
    }
    let payload = json!({"owner": owner, "uid": ev.uid, "summary": ev.summary, "start": ev.start, "end": ev.end});
    cal.insert(ev.uid.clone(), ev);
    world.record(actor, "calendar", "create", silent, payload);
    Ok(())
}

fn inline_event(ev: &InlineEvent) -> CalEvent {
    CalEvent {
        uid: ev.uid.clone(),
        summary: ev.summary.clone(),
        description: ev.description.clone(),
        location: ev.location.clone(),
        start: ev.start.with_timezone(&Utc),
        end: ev.end.with_timezone(&Utc),
        all_day: false,
        tzid: None,
        organizer: ev.organizer.clone(),
        attendees: ev
            .attendees
            .iter()
            .map(|a| Attendee {
                email: a.clone(),
                name: None,
                status: "NEEDS-ACTION".into(),
            })
            .collect(),
        status: "CONFIRMED".into(),
        sequence: 0,
    }
}

/// Apply one task event (actor: task).
pub(crate) fn apply(world: &mut World, ev: &Event) -> Result<(), WorldError> {
    let turn = world.turn;
    let fail = |message: String| WorldError::Event {
        turn,
        kind: ev.kind.name().to_string(),
        location: ev.location.to_string(),
        message,
    };
    let silent = ev.silent;
    match &ev.kind {
        EventKind::AddFile { path, source } | EventKind::ReplaceFile { path, source } => {
            let is_add = matches!(ev.kind, EventKind::AddFile { .. });
            let exists = world.files.exists(path);
            if is_add && exists {
                return Err(fail(format!(
                    "`{path}` already exists; use replace_file to change it"
                )));
            }
            if !is_add && !exists {
                return Err(fail(format!(
                    "`{path}` does not exist; use add_file to create it"
                )));
            }
            let data = std::fs::read(source)
                .map_err(|e| fail(format!("cannot read {}: {e}", source.display())))?;
            world.files.write(path, &data).map_err(fail)?;
            let action = if is_add { "add" } else { "replace" };
            world.record(
                Actor::Task,
                "files",
                action,
                silent,
                json!({"path": path, "size": data.len()}),
            );
        }
        EventKind::DeleteFile { path } => {
            world.files.delete(path, true).map_err(fail)?;
            world.record(
                Actor::Task,
                "files",
                "delete",
                silent,
                json!({"path": path}),
            );
        }
        EventKind::DeliverMail { to, folder, source } => {
            let raw = std::fs::read(source)
                .map_err(|e| fail(format!("cannot read {}: {e}", source.display())))?;
            deliver(world, Actor::Task, silent, to, folder, &raw, source)
                .map_err(|e| fail(e.to_string()))?;
        }
        EventKind::AddCalendarEvent { user, event } => {
            add_event(world, Actor::Task, silent, user, inline_event(event)).map_err(fail)?;
        }
        EventKind::AddCalendarIcs { user, source } => {
            add_ics(world, Actor::Task, silent, user, source).map_err(|e| fail(e.to_string()))?;
        }
        EventKind::UpdateCalendarEvent { user, uid, changes } => {
            let tz = world.timezone;
            let e = world
                .calendar
                .get_mut(user, uid)
                .ok_or_else(|| fail(format!("no event `{uid}` in {user}'s calendar")))?;
            if let Some(s) = &changes.summary {
                e.summary = s.clone();
            }
            if let Some(s) = &changes.description {
                e.description = s.clone();
            }
            if let Some(s) = &changes.location {
                e.location = s.clone();
            }
            if let Some(t) = changes.start {
                e.start = t.with_timezone(&Utc);
            }
            if let Some(t) = changes.end {
                e.end = t.with_timezone(&Utc);
            }
            if let Some(a) = &changes.attendees {
                e.attendees = a
                    .iter()
                    .map(|x| Attendee {
                        email: x.clone(),
                        name: None,
                        status: "NEEDS-ACTION".into(),
                    })
                    .collect();
            }
            if e.end < e.start {
                return Err(fail(format!(
                    "after the update `{uid}` ends before it starts"
                )));
            }
            e.sequence += 1;
            let payload = json!({"owner": user, "uid": uid, "summary": e.summary,
                "start": e.start.with_timezone(&tz).to_rfc3339(), "end": e.end.with_timezone(&tz).to_rfc3339()});
            world.record(Actor::Task, "calendar", "update", silent, payload);
        }
        EventKind::CancelCalendarEvent { user, uid } => {
            let e = world
                .calendar
                .get_mut(user, uid)
                .ok_or_else(|| fail(format!("no event `{uid}` in {user}'s calendar")))?;
            e.status = CANCELLED.to_string();
            e.sequence += 1;
            world.record(
                Actor::Task,
                "calendar",
                "cancel",
                silent,
                json!({"owner": user, "uid": uid}),
            );
        }
        EventKind::Act { actor, tool, args } => {
            let person = world
                .people
                .find(actor)
                .map(|p| p.email.clone())
                .ok_or_else(|| {
                    fail(format!(
                        "`{actor}` is not a person of world/people.toml; add them there"
                    ))
                })?;
            world.silent_scope = silent;
            let outcome = crate::tools::call(world, Actor::Colleague(person), tool, args);
            world.silent_scope = false;
            if let bureau_core::tool::ToolOutcome::Error { message } = outcome {
                return Err(fail(format!("`{tool}` failed: {message}")));
            }
        }
    }
    Ok(())
}
