//! Rubric items: `[[rubric]]` checked and turned into [`RubricItem`]s.

use super::load::Loader;
use super::raw::*;
use super::*;

impl Loader {
    /// The predicates of the services beyond files, mail and calendar: checked for
    /// consistency (min ≤ max, one target) and pushed as evaluators. Returns false on a problem.
    pub(super) fn service_predicates(
        &mut self,
        item: &RawRubric,
        evaluators: &mut Vec<(std::ops::Range<usize>, Evaluator)>,
    ) -> bool {
        let mut ok = true;
        let range = |this: &mut Self,
                     name: &str,
                     span: std::ops::Range<usize>,
                     min: u32,
                     max: Option<u32>| {
            if let Some(max) = max
                && max < min
            {
                this.err(
                    span,
                    format!("{name} max {max} is below min {min}"),
                    "make max ≥ min",
                );
                return false;
            }
            true
        };
        if let Some(f) = &item.chat_posted {
            let v = f.get_ref();
            ok &= range(self, "chat_posted", f.span(), v.min, v.max);
            if v.channel.is_some() && v.dm_with.is_some() {
                self.err(
                    f.span(),
                    "chat_posted has both `channel` and `dm_with`",
                    "keep one: a message is in a channel or in a direct conversation",
                );
                ok = false;
            }
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::ChatPosted(v.clone())),
            ));
        }
        if let Some(f) = &item.chat_channel {
            let v = f.get_ref();
            if v.channel.trim().trim_start_matches('#').trim().is_empty() {
                self.err(
                    f.span(),
                    "chat_channel has an empty `channel`",
                    "name the channel, e.g. channel = \"general\"",
                );
                ok = false;
            }
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::ChatChannel(v.clone())),
            ));
        }
        if let Some(f) = &item.colleague_asked {
            let v = f.get_ref();
            ok &= range(self, "colleague_asked", f.span(), v.min, v.max);
            if v.who.trim().is_empty() {
                self.err(
                    f.span(),
                    "colleague_asked has an empty `who`",
                    "name the colleague by email or chat handle",
                );
                ok = false;
            }
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::ColleagueAsked(v.clone())),
            ));
        }
        if let Some(f) = &item.kb_page {
            let v = f.get_ref();
            ok &= range(self, "kb_page", f.span(), v.min, v.max);
            evaluators.push((f.span(), Evaluator::Predicate(Predicate::KbPage(v.clone()))));
        }
        if let Some(f) = &item.kb_row {
            let v = f.get_ref();
            ok &= range(self, "kb_row", f.span(), v.min, v.max);
            evaluators.push((f.span(), Evaluator::Predicate(Predicate::KbRow(v.clone()))));
        }
        if let Some(f) = &item.sheet_cell {
            let v = f.get_ref();
            match (&v.spreadsheet, &v.file) {
                (Some(_), Some(_)) | (None, None) => {
                    self.err(
                        f.span(),
                        "sheet_cell needs exactly one of `spreadsheet` and `file`",
                        "name a spreadsheet of the sheets service or a workspace .xlsx/.csv file",
                    );
                    ok = false;
                }
                (None, Some(path)) => {
                    let sp = Spanned::new(f.span(), path.clone());
                    ok &= self.workspace_path(&sp).is_some();
                }
                _ => {}
            }
            if !is_a1(&v.cell) {
                self.err(
                    f.span(),
                    format!("`{}` is not an A1 cell reference", v.cell),
                    "write a column letter and a row number, like B7",
                );
                ok = false;
            }
            if !matches!(
                v.equals,
                serde_json::Value::String(_)
                    | serde_json::Value::Number(_)
                    | serde_json::Value::Bool(_)
            ) {
                self.err(
                    f.span(),
                    "sheet_cell `equals` must be a string, a number or a boolean",
                    "write equals = 1250.5 or equals = \"Approved\"",
                );
                ok = false;
            }
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::SheetCell(v.clone())),
            ));
        }
        if let Some(f) = &item.tracker_issue {
            let v = f.get_ref();
            ok &= range(self, "tracker_issue", f.span(), v.min, v.max);
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::TrackerIssue(v.clone())),
            ));
        }
        if let Some(f) = &item.merge_request {
            let v = f.get_ref();
            ok &= range(self, "merge_request", f.span(), v.min, v.max);
            if let Some(st) = &v.state
                && !["open", "merged", "closed"].contains(&st.as_str())
            {
                self.err(
                    f.span(),
                    format!("unknown merge request state `{st}`"),
                    "use open, merged or closed",
                );
                ok = false;
            }
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::MergeRequest(v.clone())),
            ));
        }
        if let Some(f) = &item.repo_file_contains {
            let v = f.get_ref();
            if v.all.is_empty() && v.none.is_empty() {
                self.err(
                    f.span(),
                    "repo_file_contains has no keywords",
                    "give `all = [...]` and/or `none = [...]`",
                );
                ok = false;
            }
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::RepoFileContains(v.clone())),
            ));
        }
        ok
    }

    /// `judge_render`: workspace paths of files Bureau can render, at least one.
    fn judge_render(&mut self, list: &Spanned<Vec<Spanned<String>>>) -> Option<Vec<String>> {
        if list.get_ref().is_empty() {
            self.err(
                list.span(),
                "`judge_render` is empty",
                "name the deliverables the judge must look at, e.g. judge_render = [\"deliverables/deck.pptx\"], or remove it",
            );
            return None;
        }
        let mut ok = true;
        let mut out = Vec::new();
        for f in list.get_ref() {
            let Some(p) = self.workspace_path(f) else {
                ok = false;
                continue;
            };
            let ext = p
                .rsplit_once('.')
                .map(|(_, e)| e.to_ascii_lowercase())
                .unwrap_or_default();
            if !RENDERABLE.contains(&ext.as_str()) {
                self.err(
                    f.span(),
                    format!("`{p}` cannot be rendered to pages"),
                    format!(
                        "judge_render takes files ending in .{}; show other files as text with judge_files",
                        RENDERABLE.join(", .")
                    ),
                );
                ok = false;
                continue;
            }
            out.push(p);
        }
        ok.then_some(out)
    }

    /// The `image` predicate: a workspace path, a reference picture that exists, sane bounds.
    fn image_predicate(&mut self, f: &Spanned<ImageFilter>) -> bool {
        let v = f.get_ref();
        let span = f.span();
        let mut ok = self
            .workspace_path(&Spanned::new(span.clone(), v.path.clone()))
            .is_some();
        if let Some(page) = v.page {
            if page == 0 {
                self.err(span.clone(), "image `page` is 0", "pages count from 1");
                ok = false;
            }
            if !v.path.to_ascii_lowercase().ends_with(".pdf") {
                self.err(
                    span.clone(),
                    format!("image has `page` but `{}` is not a .pdf", v.path),
                    "give `page` only with a PDF; a picture file is checked as it is",
                );
                ok = false;
            }
        }
        match &v.reference {
            Some(r) => match check_rel_path(r) {
                Err(msg) => {
                    self.err(
                        span.clone(),
                        format!("image `reference = \"{r}\"`: {msg}"),
                        "name a file of the task's reference/ folder, relative to it",
                    );
                    ok = false;
                }
                Ok(()) if !self.dir.join("reference").join(r).is_file() => {
                    self.err(
                        span.clone(),
                        format!("image reference file reference/{r} does not exist"),
                        "put the expected picture in the task's reference/ folder, or fix `reference`",
                    );
                    ok = false;
                }
                Ok(()) => {}
            },
            None if v.max_distance.is_some() => {
                self.err(
                    span.clone(),
                    "image has `max_distance` but no `reference`",
                    "add reference = \"<picture in reference/>\" to compare against, or remove max_distance",
                );
                ok = false;
            }
            None => {}
        }
        if let Some(d) = v.max_distance
            && d > 256
        {
            self.err(
                span.clone(),
                format!("image `max_distance` {d} is more than the hash's 256 bits"),
                format!("use 0–256; {IMAGE_MAX_DISTANCE} (the default) allows a re-encoded or lightly changed copy"),
            );
            ok = false;
        }
        if let Some(fmt) = &v.format
            && !IMAGE_FORMATS.contains(&fmt.as_str())
        {
            self.err(
                span.clone(),
                format!("unknown image format `{fmt}`"),
                format!("use one of {}", IMAGE_FORMATS.join(", ")),
            );
            ok = false;
        }
        for (name, x) in [("width", v.width), ("height", v.height)] {
            if x == Some(0) {
                self.err(
                    span.clone(),
                    format!("image `{name}` is 0"),
                    "give pixels ≥ 1",
                );
                ok = false;
            }
        }
        for c in &v.colours {
            let h = c.trim().trim_start_matches('#');
            if !(matches!(h.len(), 3 | 6) && h.chars().all(|c| c.is_ascii_hexdigit())) {
                self.err(
                    span.clone(),
                    format!("`{c}` is not a colour"),
                    "write colours as #rrggbb, like #d62728",
                );
                ok = false;
            }
        }
        ok
    }

    pub(super) fn rubric_item(
        &mut self,
        item: Spanned<RawRubric>,
        n_turns: u32,
        tz: Tz,
        seen: &mut BTreeMap<String, Location>,
    ) -> Option<RubricItem> {
        let span = item.span();
        let item = item.into_inner();
        let id_loc = self.at(item.id.span());
        let id = item.id.get_ref().clone();
        let mut ok = true;
        if id.trim().is_empty() {
            self.err(
                item.id.span(),
                "empty rubric id",
                "give every rubric item a unique id",
            );
            ok = false;
        }
        if let Some(first) = seen.get(&id) {
            let first = first.to_string();
            self.err(
                item.id.span(),
                format!("duplicate rubric id `{id}` (first used at {first})"),
                "rubric ids must be unique within a task",
            );
            ok = false;
        } else {
            seen.insert(id.clone(), id_loc);
        }
        let weight = match &item.weight {
            None => 1.0,
            Some(w) => {
                let v = *w.get_ref();
                if !(v.is_finite() && v > 0.0) {
                    self.err(
                        w.span(),
                        format!("weight {v} of `{id}` is not positive"),
                        "weights must be > 0; to exclude an item, delete it",
                    );
                    ok = false;
                }
                v
            }
        };
        if let TurnRef::Turn(n) = item.turn.get_ref()
            && *n > n_turns
        {
            self.err(
                item.turn.span(),
                format!("rubric item `{id}` is for turn {n} but the task has {n_turns} turn(s)"),
                format!("use a turn from 1 to {n_turns}, or \"final\""),
            );
            ok = false;
        }

        let mut evaluators: Vec<(std::ops::Range<usize>, Evaluator)> = Vec::new();
        if let Some(c) = &item.check {
            if !is_identifier(c.get_ref()) {
                self.err(
                    c.span(),
                    format!("`{}` is not a Starlark function name", c.get_ref()),
                    "name a `def` in checks.star",
                );
                ok = false;
            }
            evaluators.push((c.span(), Evaluator::Check(c.get_ref().clone())));
        }
        if let Some(p) = &item.file_exists {
            let path = self.workspace_path(p);
            ok &= path.is_some();
            evaluators.push((
                p.span(),
                Evaluator::Predicate(Predicate::FileExists {
                    path: path.unwrap_or_default(),
                }),
            ));
        }
        if let Some(p) = &item.file_absent {
            let path = self.workspace_path(p);
            ok &= path.is_some();
            evaluators.push((
                p.span(),
                Evaluator::Predicate(Predicate::FileAbsent {
                    path: path.unwrap_or_default(),
                }),
            ));
        }
        if let Some(fc) = &item.file_contains {
            let raw = fc.get_ref();
            let path = self.workspace_path(&raw.path);
            ok &= path.is_some();
            if raw.all.is_empty() && raw.none.is_empty() {
                self.err(
                    fc.span(),
                    "file_contains has no keywords",
                    "give `all = [...]` and/or `none = [...]`",
                );
                ok = false;
            }
            evaluators.push((
                fc.span(),
                Evaluator::Predicate(Predicate::FileContains {
                    path: path.unwrap_or_default(),
                    all: raw.all.clone(),
                    none: raw.none.clone(),
                }),
            ));
        }
        if let Some(fm) = &item.final_message {
            let raw = fm.get_ref();
            if raw.all.is_empty() && raw.none.is_empty() {
                self.err(
                    fm.span(),
                    "final_message has no keywords",
                    "give `all = [...]` and/or `none = [...]`",
                );
                ok = false;
            }
            evaluators.push((
                fm.span(),
                Evaluator::Predicate(Predicate::FinalMessage {
                    all: raw.all.clone(),
                    none: raw.none.clone(),
                }),
            ));
        }
        if let Some(m) = &item.mail_sent {
            let f = m.get_ref().clone();
            if let Some(max) = f.max
                && max < f.min
            {
                self.err(
                    m.span(),
                    format!("mail_sent max {max} is below min {}", f.min),
                    "make max ≥ min",
                );
                ok = false;
            }
            evaluators.push((m.span(), Evaluator::Predicate(Predicate::MailSent(f))));
        }
        if let Some(c) = &item.calendar_event {
            let raw = c.get_ref();
            let start = self.opt_time(&raw.start, tz);
            let end = self.opt_time(&raw.end, tz);
            ok &= start.is_some() && end.is_some();
            if let Some(max) = raw.max
                && max < raw.min
            {
                self.err(
                    c.span(),
                    format!("calendar_event max {max} is below min {}", raw.min),
                    "make max ≥ min",
                );
                ok = false;
            }
            evaluators.push((
                c.span(),
                Evaluator::Predicate(Predicate::CalendarEvent(CalendarEventFilter {
                    user: raw.user.clone().map(|u| u.to_lowercase()),
                    summary_contains: raw.summary_contains.clone(),
                    start: start.flatten(),
                    end: end.flatten(),
                    attendees: raw.attendees.iter().map(|a| a.to_lowercase()).collect(),
                    location_contains: raw.location_contains.clone(),
                    cancelled: raw.cancelled,
                    min: raw.min,
                    max: raw.max,
                })),
            ));
        }
        if let Some(c) = &item.calendar_no_overlap {
            let raw = c.get_ref();
            let from = self.opt_time(&raw.from, tz);
            let to = self.opt_time(&raw.to, tz);
            ok &= from.is_some() && to.is_some();
            evaluators.push((
                c.span(),
                Evaluator::Predicate(Predicate::CalendarNoOverlap {
                    user: raw.user.clone().map(|u| u.to_lowercase()),
                    from: from.flatten(),
                    to: to.flatten(),
                }),
            ));
        }
        ok &= self.service_predicates(&item, &mut evaluators);
        if let Some(f) = &item.image {
            ok &= self.image_predicate(f);
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::Image(f.get_ref().clone())),
            ));
        }
        if let Some(j) = &item.judge {
            if j.get_ref().trim().is_empty() {
                self.err(
                    j.span(),
                    "`judge` is empty",
                    "write the proposition the judge must find true, e.g. judge = \"The reply declines to share the unit cost\"",
                );
                ok = false;
            }
            let mut files = Vec::new();
            for f in item.judge_files.iter().flat_map(|v| v.get_ref()) {
                match self.workspace_path(f) {
                    Some(p) => files.push(p),
                    None => ok = false,
                }
            }
            let render = match &item.judge_render {
                Some(r) => self.judge_render(r),
                None => Some(Vec::new()),
            };
            ok &= render.is_some();
            let twin = match &item.twin {
                Some(t) if !is_identifier(t.get_ref()) => {
                    self.err(
                        t.span(),
                        format!("twin `{}` is not a Starlark function name", t.get_ref()),
                        "name a `def` in checks.star that decides the proposition without a model",
                    );
                    ok = false;
                    None
                }
                Some(t) => Some(t.get_ref().clone()),
                None => None,
            };
            evaluators.push((
                j.span(),
                Evaluator::Judge(JudgeSpec {
                    proposition: j.get_ref().trim().to_string(),
                    files,
                    render: render.unwrap_or_default(),
                    twin,
                }),
            ));
        } else {
            if let Some(t) = &item.twin {
                self.err(
                    t.span(),
                    "`twin` without `judge`",
                    "a twin stands in for a judge: add judge = \"...\", or use check = \"...\" instead",
                );
                ok = false;
            }
            if let Some(f) = &item.judge_files {
                self.err(
                    f.span(),
                    "`judge_files` without `judge`",
                    "add judge = \"...\" or remove judge_files",
                );
                ok = false;
            }
            if let Some(f) = &item.judge_render {
                self.err(
                    f.span(),
                    "`judge_render` without `judge`",
                    "add judge = \"...\" (what the judge must see in the pages) or remove judge_render",
                );
                ok = false;
            }
        }
        let (ev_span, evaluator) = match evaluators.len() {
            1 => evaluators.pop()?,
            0 => {
                self.err(
                    span,
                    format!("rubric item `{id}` has no evaluator"),
                    format!(
                        "give exactly one of: check, judge, {}",
                        PREDICATES.join(", ")
                    ),
                );
                return None;
            }
            _ => {
                let names: Vec<String> = evaluators
                    .iter()
                    .map(|(_, e)| match e {
                        Evaluator::Check(_) => "check".to_string(),
                        Evaluator::Predicate(p) => p.name().to_string(),
                        Evaluator::Judge(_) => "judge".to_string(),
                    })
                    .collect();
                self.err(
                    span,
                    format!(
                        "rubric item `{id}` has {} evaluators ({})",
                        names.len(),
                        names.join(", ")
                    ),
                    "keep exactly one; split it into several items if you need several",
                );
                return None;
            }
        };
        let sources = match item.source {
            Some(src) => {
                let span = src.span();
                let list = src.into_inner().into_vec();
                ok &= self.sources(span, &list, n_turns);
                list
            }
            None => Vec::new(),
        };
        if !ok {
            return None;
        }
        Some(RubricItem {
            id,
            description: item.description,
            weight,
            turn: *item.turn.get_ref(),
            kind: item.kind,
            red_line: item.red_line,
            categories: item.categories,
            evaluator,
            sources,
            location: self.at(ev_span),
        })
    }
}

impl Loader {
    /// `source = [...]`: every entry a known kind with the reference it needs. Whether a
    /// named file or mail exists is checked by the lint (`bureau validate`), which sees the
    /// task's folders and generated workspace.
    fn sources(&mut self, span: std::ops::Range<usize>, list: &[String], n_turns: u32) -> bool {
        let mut ok = true;
        if list.is_empty() {
            self.err(
                span.clone(),
                "`source` is empty",
                "name where the expected value comes from, e.g. source = [\"prompt\", \"file:finance/budget.xlsx\"]",
            );
            return false;
        }
        for s in list {
            let (kind, reference) = match s.split_once(':') {
                Some((k, r)) => (k.trim(), Some(r.trim())),
                None => (s.trim(), None),
            };
            let problem = if !SOURCE_KINDS.contains(&kind) {
                Some(format!("unknown source kind `{kind}` in `{s}`"))
            } else {
                match (kind, reference) {
                    ("prompt" | "history", Some(_)) => {
                        Some(format!("source `{kind}` takes no reference (`{s}`)"))
                    }
                    ("prompt" | "history", None) => None,
                    ("turn", Some(n)) => match n.parse::<u32>() {
                        Ok(n) if (1..=n_turns).contains(&n) => None,
                        _ => Some(format!(
                            "source `{s}` names no turn of this task (it has {n_turns})"
                        )),
                    },
                    (_, Some(r)) if !r.is_empty() => None,
                    _ => Some(format!(
                        "source `{kind}` needs a reference, like `{kind}:<name>`"
                    )),
                }
            };
            if let Some(what) = problem {
                self.err(
                    span.clone(),
                    what,
                    format!(
                        "write `prompt`, `turn:<n>`, `history` or `<kind>:<reference>` with a kind of: {}",
                        SOURCE_KINDS.join(", ")
                    ),
                );
                ok = false;
            }
        }
        ok
    }
}
