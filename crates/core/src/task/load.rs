//! The loader: reads `task.toml` and the task's directory, and collects every problem.

use super::raw::*;
use super::*;

pub(super) struct Loader {
    pub(super) dir: PathBuf,
    pub(super) toml_path: PathBuf,
    pub(super) source: String,
    pub(super) errors: Vec<TaskError>,
}

impl Loader {
    pub(super) fn new(dir: &Path) -> Loader {
        Loader {
            dir: dir.to_path_buf(),
            toml_path: dir.join("task.toml"),
            source: String::new(),
            errors: Vec::new(),
        }
    }

    pub(super) fn at(&self, span: std::ops::Range<usize>) -> Location {
        Location::from_offset(&self.toml_path, &self.source, span.start)
    }

    pub(super) fn err(
        &mut self,
        span: std::ops::Range<usize>,
        what: impl Into<String>,
        hint: impl Into<String>,
    ) {
        let loc = self.at(span);
        self.errors.push(TaskError::new(loc, what, hint));
    }

    pub(super) fn load(mut self) -> Result<Task, TaskErrors> {
        self.source = match std::fs::read_to_string(&self.toml_path) {
            Ok(s) => s,
            Err(e) => {
                return Err(TaskError::new(
                    Location::file(&self.toml_path),
                    format!("cannot read task.toml: {e}"),
                    "a task is a directory with a task.toml; check the path",
                )
                .into());
            }
        };
        let source = self.source.clone();
        let mut doc = match toml::de::DeTable::parse(&source) {
            Ok(d) => d,
            Err(e) => {
                let span = e.span().unwrap_or(0..0);
                let msg = e.message().trim().to_string();
                let hint = toml_hint(&msg);
                self.err(span, msg, hint);
                return Err(TaskErrors(self.errors));
            }
        };
        // Every unknown key at once (serde would stop at the first); they are removed, so
        // serde reads the rest and the checks below still run.
        for u in super::keys::check_keys(doc.get_mut()) {
            self.err(u.span, u.what, u.hint);
        }
        // Every wrong type and missing field at once, too.
        let raw = match super::repair::deserialize_all::<RawTask>(doc) {
            Ok(r) => r,
            Err(found) => {
                for e in found {
                    let hint = toml_hint(&e.message);
                    self.err(e.span, e.message, hint);
                }
                self.errors.sort_by(|a, b| {
                    (a.location.line, a.location.col).cmp(&(b.location.line, b.location.col))
                });
                return Err(TaskErrors(self.errors));
            }
        };

        let id_span = raw.id.span();
        let id = raw.id.into_inner();
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        {
            self.err(
                id_span,
                format!("task id `{id}` is empty or has characters other than letters, digits, `-`, `_`, `.`"),
                "use a short slug such as `inbox-triage-01`; it names directories in run output",
            );
        }

        let timezone = match raw.timezone {
            None => Tz::UTC,
            Some(tz) => match parse_tz(tz.get_ref()) {
                Ok(t) => t,
                Err(msg) => {
                    self.err(tz.span(), msg, "see the IANA time zone database names");
                    Tz::UTC
                }
            },
        };

        let mut apps = Vec::new();
        for app in raw.apps {
            if !KNOWN_APPS.contains(&app.get_ref().as_str()) {
                self.err(
                    app.span(),
                    format!("unknown app `{}`", app.get_ref()),
                    format!(
                        "apps are services of the world: one of {}",
                        KNOWN_APPS.join(", ")
                    ),
                );
            }
            apps.push(app.into_inner());
        }

        let user_span = raw.user.span();
        let raw_user = raw.user.into_inner();
        if !raw_user.email.contains('@') {
            self.err(
                user_span,
                format!("user email `{}` is not an email address", raw_user.email),
                "write [user] email = \"name@company.test\"",
            );
        }
        let user = User {
            name: raw_user.name,
            email: raw_user.email.to_lowercase(),
        };

        let raw_file_deps = raw.file_deps;
        let raw_outputs = raw.outputs;
        let workspace = self.workspace(raw.workspace);

        if raw.limits.max_steps == 0 || raw.limits.wall_seconds == 0 {
            self.err(
                0..0,
                "limits must be positive",
                "set [limits] max_steps and wall_seconds to at least 1",
            );
        }

        let feedback = raw.feedback.map(|f| {
            let span = f.span();
            let f = f.into_inner();
            if let Some(t) = f.threshold
                && !(0.0..=1.0).contains(&t)
            {
                self.err(
                    span,
                    format!("[feedback] threshold {t} is not a score"),
                    "give the weighted score (0 to 1) a turn's items must reach, e.g. 0.6",
                );
            }
            f
        });

        if raw.turns.is_empty() {
            self.err(
                0..0,
                "the task has no turns",
                "add at least one [[turn]] with `at` and `prompt`",
            );
        }
        let mut turns = Vec::new();
        for (i, raw_turn) in raw.turns.into_iter().enumerate() {
            let index = i as u32 + 1;
            let turn_span = raw_turn.span();
            let raw_turn = raw_turn.into_inner();
            let at = self.time(&raw_turn.at, timezone);
            if raw_turn.prompt.trim().is_empty() {
                self.err(
                    turn_span.clone(),
                    format!("turn {index} has an empty prompt"),
                    "write the wake-up message the agent receives",
                );
            }
            let mut events = Vec::new();
            for ev in raw_turn.events {
                if let Some(e) = self.event(index, ev, &user, timezone) {
                    events.push(e);
                }
            }
            if let (Some(at), Some(prev)) = (at, turns.last().map(|t: &Turn| t.at))
                && at < prev
            {
                self.err(
                    raw_turn.at.span(),
                    format!("turn {index} starts before turn {}", index - 1),
                    "turns are working days in order; give each a later `at`",
                );
            }
            turns.push(Turn {
                index,
                at: at.unwrap_or_else(|| chrono::DateTime::UNIX_EPOCH.fixed_offset()),
                prompt: raw_turn.prompt,
                events,
            });
        }

        let n_turns = turns.len() as u32;
        let mut rubric = Vec::new();
        let mut seen: BTreeMap<String, Location> = BTreeMap::new();
        for item in raw.rubric {
            if let Some(r) = self.rubric_item(item, n_turns, timezone, &mut seen) {
                rubric.push(r);
            }
        }
        if rubric.is_empty() && self.errors.is_empty() {
            self.err(
                0..0,
                "the task has no rubric items",
                "add [[rubric]] items; a task without checks cannot be scored",
            );
        }

        let checks_path = self.dir.join("checks.star");
        let checks = match std::fs::read_to_string(&checks_path) {
            Ok(src) => Some((checks_path, src)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                self.errors.push(TaskError::new(
                    Location::file(&checks_path),
                    format!("cannot read checks.star: {e}"),
                    "make it a readable UTF-8 file",
                ));
                None
            }
        };
        if checks.is_none() {
            for r in &rubric {
                let named = match &r.evaluator {
                    Evaluator::Check(name) => Some(name),
                    Evaluator::Judge(JudgeSpec {
                        twin: Some(name), ..
                    }) => Some(name),
                    _ => None,
                };
                if let Some(name) = named {
                    self.errors.push(TaskError::new(
                        r.location.clone(),
                        format!(
                            "rubric item `{}` uses check `{name}` but the task has no checks.star",
                            r.id
                        ),
                        format!(
                            "add checks.star with `def {name}(w): ...` or use a built-in predicate"
                        ),
                    ));
                }
            }
        }

        let world = self.dir.join("world");
        if world.exists() && !world.is_dir() {
            self.errors.push(TaskError::new(
                Location::file(&world),
                "world is not a directory",
                "make world/ a directory holding files/, mail/ and calendar/",
            ));
        }

        let (file_deps, file_dep_nodes) =
            self.file_deps(raw_file_deps, &turns, workspace.is_some());
        let outputs = self.outputs(raw_outputs);

        let solution = self.solution(n_turns);
        let solution_messages = self.solution_messages(n_turns);
        let oracle = match raw.oracle {
            None => OracleKind::Authored,
            Some(o) => match OracleKind::parse(o.get_ref()) {
                Some(k) => k,
                None => {
                    self.err(
                        o.span(),
                        format!("unknown oracle kind `{}`", o.get_ref()),
                        "use \"authored\" (a person did the work), \"derived\" (generated from the checks) or \"none\"",
                    );
                    OracleKind::Authored
                }
            },
        };
        let skip_reason = match raw.skip_reason {
            None => None,
            Some(r) if r.get_ref().trim().is_empty() => {
                self.err(
                    r.span(),
                    "skip_reason is empty",
                    "say why the task cannot be run (e.g. \"needs OCR of a scanned image\"), or remove the key",
                );
                None
            }
            Some(r) => Some(r.into_inner().trim().to_string()),
        };

        // -- dialogue history (OdysseyBench) --
        let history_path = self.dir.join(crate::history::HISTORY_JSON);
        let history = if history_path.is_file() {
            let first = turns.first().map(|t| t.at);
            match crate::history::History::load(&history_path, timezone, first) {
                Ok(h) => Some(h),
                Err(errs) => {
                    self.errors.extend(errs);
                    None
                }
            }
        } else {
            None
        };

        // -- parameters: a parametrised task is played as rendered instances --
        let (params, variant) = match (&raw.params, raw.variant) {
            (Some(p), None) => {
                self.err(
                    p.span(),
                    format!("task `{id}` is parametrised ([params]): it is played as rendered instances"),
                    "run, validate and list it through bureau (`bureau run --variants N`, `bureau validate`, `bureau tasks --variant S <task>`), which render its instances (docs/variants.md)",
                );
                (BTreeMap::new(), None)
            }
            (Some(p), Some(_)) => {
                self.err(
                    p.span(),
                    "a rendered instance still has [params]",
                    "an instance carries [variant] only; render it again with bureau-variants",
                );
                (BTreeMap::new(), None)
            }
            (None, Some(v)) => {
                let v = v.into_inner();
                let params = v
                    .values
                    .into_iter()
                    .filter_map(|(k, val)| serde_json::to_value(val).ok().map(|j| (k, j)))
                    .collect();
                (
                    params,
                    Some(Variant {
                        base: v.base,
                        base_dir: PathBuf::from(v.base_dir),
                        seed: v.seed,
                        index: v.index,
                    }),
                )
            }
            (None, None) => (BTreeMap::new(), None),
        };

        if !self.errors.is_empty() {
            return Err(TaskErrors(self.errors));
        }
        Ok(Task {
            dir: self.dir,
            id,
            title: raw.title,
            persona: raw.persona,
            category: raw.category,
            difficulty: raw.difficulty,
            abilities: raw.abilities,
            apps,
            timezone,
            user,
            file_deps,
            file_dep_nodes,
            outputs,
            workspace,
            limits: raw.limits,
            feedback,
            turns,
            rubric,
            checks,
            solution,
            solution_messages,
            oracle,
            skip_reason,
            history,
            checkpoint_bonus: raw.checkpoint_bonus,
            params,
            variant,
        })
    }

    pub(super) fn time(&mut self, v: &Spanned<toml::Value>, tz: Tz) -> Option<WorldTime> {
        let text = match v.get_ref() {
            toml::Value::Datetime(d) => d.to_string(),
            toml::Value::String(s) => s.clone(),
            other => {
                self.err(
                    v.span(),
                    format!("expected a datetime, found {}", other.type_str()),
                    "write e.g. 2026-03-02T09:00:00",
                );
                return None;
            }
        };
        match parse_world_time(&text, tz) {
            Ok(t) => Some(t),
            Err(msg) => {
                self.err(
                    v.span(),
                    msg,
                    "datetimes without an offset are read in the task's `timezone`",
                );
                None
            }
        }
    }

    pub(super) fn opt_time(
        &mut self,
        v: &Option<Spanned<toml::Value>>,
        tz: Tz,
    ) -> Option<Option<WorldTime>> {
        match v {
            None => Some(None),
            Some(v) => self.time(v, tz).map(Some),
        }
    }
    // --- file_deps and [outputs] (issue 5) -------------------------------------------------

    /// `file_deps`: each entry `{ from, to }` or `{ file }`, paths relative and inside the
    /// workspace (stored normalised). A source (`from`, `file`) must be a file of
    /// `world/files/`, a file an event of some turn adds, or the `to` of another edge. With a
    /// generated `[workspace]`, other sources may come from the generated tree: the loader
    /// cannot see it (core does not depend on bureau-gen), so `World::build` checks them.
    pub(super) fn file_deps(
        &mut self,
        raw: Vec<Spanned<RawFileDep>>,
        turns: &[Turn],
        generated: bool,
    ) -> (Vec<FileDep>, Vec<String>) {
        let mut edges: Vec<(std::ops::Range<usize>, FileDep)> = Vec::new();
        let mut nodes: Vec<(std::ops::Range<usize>, String)> = Vec::new();
        for dep in raw {
            let span = dep.span();
            let dep = dep.into_inner();
            let path = |this: &mut Self, p: &str| match normalize_rel_path(p) {
                Some(n) if check_rel_path(p).is_ok() => Some(n),
                _ => {
                    let msg = check_rel_path(p)
                        .err()
                        .unwrap_or_else(|| "the path leaves the workspace".into());
                    this.err(
                        span.clone(),
                        format!("file_deps path `{p}`: {msg}"),
                        "write workspace paths relative to world/files/, e.g. reports/q3.md",
                    );
                    None
                }
            };
            match (dep.from, dep.to, dep.file) {
                (Some(from), Some(to), None) => {
                    if let (Some(from), Some(to)) = (path(self, &from), path(self, &to)) {
                        if from == to {
                            self.err(
                                span.clone(),
                                format!("file_deps edge from `{from}` to itself"),
                                "an edge links a source file to a different derived file",
                            );
                        } else {
                            edges.push((span.clone(), FileDep { from, to }));
                        }
                    }
                }
                (None, None, Some(file)) => {
                    if let Some(file) = path(self, &file) {
                        nodes.push((span.clone(), file));
                    }
                }
                _ => self.err(
                    span.clone(),
                    "a file_deps entry is either an edge `{ from, to }` or a file `{ file }`",
                    "write { from = \"data.csv\", to = \"report.md\" } or { file = \"policy.md\" }",
                ),
            }
        }
        let files_dir = self.dir.join("world").join("files");
        let mut produced: BTreeSet<String> = edges.iter().map(|(_, d)| d.to.clone()).collect();
        for t in turns {
            for e in &t.events {
                if let EventKind::AddFile { path, .. } | EventKind::ReplaceFile { path, .. } =
                    &e.kind
                    && let Some(p) = normalize_rel_path(path)
                {
                    produced.insert(p);
                }
            }
        }
        let sources = edges
            .iter()
            .map(|(s, d)| (s.clone(), d.from.clone()))
            .chain(nodes.iter().cloned())
            .collect::<Vec<_>>();
        for (span, p) in sources {
            if !generated && !files_dir.join(&p).is_file() && !produced.contains(&p) {
                self.err(
                    span,
                    format!(
                        "file_deps file `{p}` is neither in world/files/, nor added by an event, nor the `to` of an edge"
                    ),
                    "fix the path (it is relative to world/files/) or add the file",
                );
            }
        }
        let mut edges: Vec<FileDep> = edges.into_iter().map(|(_, d)| d).collect();
        edges.sort();
        edges.dedup();
        let mut nodes: Vec<String> = nodes.into_iter().map(|(_, n)| n).collect();
        nodes.sort();
        nodes.dedup();
        (edges, nodes)
    }

    /// `[workspace]`: a known persona and a file count the generator accepts.
    pub(super) fn workspace(
        &mut self,
        raw: Option<Spanned<WorkspaceSpec>>,
    ) -> Option<WorkspaceSpec> {
        let raw = raw?;
        let span = raw.span();
        let ws = raw.into_inner();
        let mut ok = true;
        if !WORKSPACE_PERSONAS.contains(&ws.persona.as_str()) {
            self.err(
                span.clone(),
                format!("unknown workspace persona `{}`", ws.persona),
                format!("use one of {}", WORKSPACE_PERSONAS.join(", ")),
            );
            ok = false;
        }
        if !WORKSPACE_FILES.contains(&ws.files) {
            self.err(
                span,
                format!("workspace files = {} is out of range", ws.files),
                format!(
                    "generate {} to {} files (a few hundred keep validation fast)",
                    WORKSPACE_FILES.start(),
                    WORKSPACE_FILES.end()
                ),
            );
            ok = false;
        }
        ok.then_some(ws)
    }

    /// `[outputs]`: `folder` a relative workspace folder, `names` bare file names.
    pub(super) fn outputs(&mut self, raw: Option<Spanned<OutputsSpec>>) -> OutputsSpec {
        let Some(raw) = raw else {
            return OutputsSpec::default();
        };
        let span = raw.span();
        let raw = raw.into_inner();
        let folder = match raw.folder {
            None => None,
            Some(f) => match (check_rel_path(&f), normalize_rel_path(&f)) {
                (Ok(()), Some(n)) => Some(n),
                (Err(msg), _) => {
                    self.err(
                        span.clone(),
                        format!("outputs folder `{f}`: {msg}"),
                        "write a folder relative to the workspace, e.g. folder = \"deliverables/\"",
                    );
                    None
                }
                (Ok(()), None) => {
                    self.err(
                        span.clone(),
                        format!("outputs folder `{f}` is the workspace itself"),
                        "name a sub-folder, or leave `folder` out",
                    );
                    None
                }
            },
        };
        let mut names = Vec::new();
        for n in raw.names {
            let bare = n.trim();
            if bare.is_empty()
                || bare.contains('/')
                || bare.contains('\\')
                || bare == "."
                || bare == ".."
            {
                self.err(
                    span.clone(),
                    format!("outputs name `{n}` is not a file name"),
                    "write bare file names such as \"q3-summary.xlsx\"; put the folder in `folder`",
                );
            } else {
                names.push(bare.to_string());
            }
        }
        OutputsSpec { folder, names }
    }

    pub(super) fn workspace_path(&mut self, p: &Spanned<String>) -> Option<String> {
        match check_rel_path(p.get_ref()) {
            Ok(()) => Some(p.get_ref().clone()),
            Err(msg) => {
                self.err(
                    p.span(),
                    format!("path `{}`: {msg}", p.get_ref()),
                    "write a path relative to the workspace, e.g. reports/q3.md",
                );
                None
            }
        }
    }

    pub(super) fn turn_file(
        &mut self,
        turn_dir: &Path,
        turn: u32,
        from: &Spanned<String>,
    ) -> Option<PathBuf> {
        if let Err(msg) = check_rel_path(from.get_ref()) {
            self.err(
                from.span(),
                format!("`from = \"{}\"`: {msg}", from.get_ref()),
                format!("name a file under turns/{turn}/"),
            );
            return None;
        }
        let source = turn_dir.join(from.get_ref());
        if !source.is_file() {
            self.err(
                from.span(),
                format!("seed file turns/{turn}/{} does not exist", from.get_ref()),
                format!("create it, or fix `from` (it is relative to turns/{turn}/)"),
            );
            return None;
        }
        Some(source)
    }

    /// `solution/<n>.message`: the oracle's final message of turn n (UTF-8 text).
    pub(super) fn solution_messages(&mut self, n_turns: u32) -> Vec<Option<String>> {
        let dir = self.dir.join("solution");
        let mut out = vec![None; n_turns as usize];
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return out;
        };
        let mut names: BTreeSet<PathBuf> = BTreeSet::new();
        for e in entries.flatten() {
            names.insert(e.path());
        }
        for path in names {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string();
            let Some(stem) = name.strip_suffix(".message") else {
                continue;
            };
            let n: u32 = match stem.parse() {
                Ok(n) if n >= 1 && n <= n_turns => n,
                _ => {
                    self.errors.push(TaskError::new(
                        Location::file(&path),
                        format!("solution message `{name}` does not name a turn of this task (it has {n_turns})"),
                        format!("name solution messages 1.message … {n_turns}.message"),
                    ));
                    continue;
                }
            };
            match std::fs::read_to_string(&path) {
                Ok(t) => out[n as usize - 1] = Some(t.trim_end().to_string()),
                Err(e) => self.errors.push(TaskError::new(
                    Location::file(&path),
                    format!("cannot read: {e}"),
                    "make it a UTF-8 text file holding the oracle's final message",
                )),
            }
        }
        out
    }

    pub(super) fn solution(&mut self, n_turns: u32) -> Vec<Vec<ToolCall>> {
        let dir = self.dir.join("solution");
        let mut out = vec![Vec::new(); n_turns as usize];
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return out;
        };
        let mut names: BTreeSet<PathBuf> = BTreeSet::new();
        for e in entries.flatten() {
            names.insert(e.path());
        }
        for path in names {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string();
            let Some(stem) = name.strip_suffix(".jsonl") else {
                continue;
            };
            let n: u32 = match stem.parse() {
                Ok(n) if n >= 1 && n <= n_turns => n,
                _ => {
                    self.errors.push(TaskError::new(
                        Location::file(&path),
                        format!("solution file `{name}` does not name a turn of this task (it has {n_turns})"),
                        format!("name solution files 1.jsonl … {n_turns}.jsonl"),
                    ));
                    continue;
                }
            };
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    self.errors.push(TaskError::new(
                        Location::file(&path),
                        format!("cannot read: {e}"),
                        "make it a UTF-8 JSONL file",
                    ));
                    continue;
                }
            };
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<ToolCall>(line) {
                    Ok(call) => out[n as usize - 1].push(call),
                    Err(e) => self.errors.push(TaskError::new(
                        Location {
                            path: path.clone(),
                            line: i + 1,
                            col: e.column().max(1),
                        },
                        format!("not a tool call: {e}"),
                        "each line is {\"tool\": \"files_write\", \"args\": {...}}",
                    )),
                }
            }
        }
        out
    }
}

fn toml_hint(msg: &str) -> String {
    if msg.contains("unknown field") {
        "remove the key or fix its spelling (see docs/task-format.md)".into()
    } else if msg.contains("missing field") {
        "add the field (see docs/task-format.md)".into()
    } else if msg.contains("invalid type") {
        "give the value the type docs/task-format.md lists for this key".into()
    } else if msg.contains("unknown variant") {
        "use one of the values listed".into()
    } else {
        "fix the TOML syntax here".into()
    }
}
