//! `bureau view` and `bureau report --html` in a browser: the overview and every trial page
//! render with no console error, every heat-map link leads to its trial, a trial page shows
//! the verdicts and the timeline of its files, two runs are compared with the differences
//! their results give, and the static report fetches nothing.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::{self, Chrome, Page, Server};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `bureau run <suite> --agent … --out <out>` (no model: oracle, null, replay).
fn run(suite: &str, agents: &[&str], out: &Path) {
    let suite = repo().join(suite);
    let mut args: Vec<&OsStr> = vec![OsStr::new("run"), suite.as_os_str()];
    for agent in agents {
        args.push(OsStr::new("--agent"));
        args.push(OsStr::new(agent));
    }
    args.extend([OsStr::new("--out"), out.as_os_str(), OsStr::new("--quiet")]);
    // `bureau run` exits 0, or 1 when some trial failed (the null agent's all do).
    support::bureau(&args, Duration::from_secs(120), &[0, 1]).expect("bureau run");
}

/// The starter suite by the oracle and the null agent.
fn run_a(tmp: &Path) -> PathBuf {
    let out = tmp.join("run-a");
    run("suites/starter", &["oracle", "null"], &out);
    out
}

/// The lite subset replayed from the solution of customer-spec-answer with the answer cut
/// after its second point: a partial score there, nothing elsewhere. Its agent is not one of
/// run A's, so the viewer compares run A's first agent with it.
fn run_b(tmp: &Path) -> PathBuf {
    let solution = std::fs::read_to_string(
        repo().join("suites/starter/customer-spec-answer/solution/1.jsonl"),
    )
    .expect("the solution");
    let mut lines = Vec::new();
    for line in solution.lines().filter(|l| !l.trim().is_empty()) {
        let mut step: Value = serde_json::from_str(line).expect("a solution line");
        if step["tool"] == "mail_send" {
            let body = step["args"]["body"].as_str().expect("a body").to_string();
            let cut = body.split("3. Hubs").next().unwrap_or_default();
            step["args"]["body"] = Value::String(format!("{cut}Kind regards,\nEline"));
        }
        lines.push(step.to_string());
    }
    let partial = tmp.join("partial.jsonl");
    std::fs::write(&partial, lines.join("\n") + "\n").expect("writing the partial answer");
    let out = tmp.join("run-b");
    run(
        "suites/starter@lite",
        &[&format!("replay:{}", partial.display())],
        &out,
    );
    out
}

pub fn view(runs: &[&Path]) -> Server {
    let mut args = vec![OsStr::new("view")];
    args.extend(runs.iter().map(|r| r.as_os_str()));
    Server::start(&args, "Bureau viewer: ").expect("bureau view starts and prints its URL")
}

fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// Every trial directory of a run (those holding a result.json): (task, agent, trial dir).
pub fn trials(run: &Path) -> Vec<(String, String, PathBuf)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(run.join("trials"))
        .expect("the trials")
        .flatten()
    {
        for agent in std::fs::read_dir(task.path())
            .expect("a task's agents")
            .flatten()
        {
            for epoch in std::fs::read_dir(agent.path()).expect("epochs").flatten() {
                if epoch.path().join("result.json").is_file() {
                    let result = read_json(&epoch.path().join("result.json"));
                    out.push((
                        result["task"]["id"]
                            .as_str()
                            .expect("a task id")
                            .to_string(),
                        result["agent"].as_str().expect("an agent").to_string(),
                        epoch.path(),
                    ));
                }
            }
        }
    }
    out.sort();
    out
}

/// What a trial page shows, read in one call: the verdict rows (id, status) and the number
/// of tool-call steps in the timeline.
pub fn trial_page(page: &Page) -> (Vec<(String, String)>, usize) {
    let seen = page
        .eval_json(
            "({ verdicts: [...document.querySelectorAll('#verdicts ~ table tr.verdict, table.verdicts tr.verdict')]
                 .map(r => [r.id.replace(/^verdict-/, ''), (r.querySelector('td[class^=status-]') || {}).innerText || '']),
                calls: document.querySelectorAll('#timeline ~ .turn .step.tool_call').length,
                timeline: !!document.getElementById('timeline') })",
        )
        .expect("reading the trial page");
    assert_eq!(seen["timeline"], true, "the trial page has a timeline");
    let mut verdicts: Vec<(String, String)> =
        serde_json::from_value(seen["verdicts"].clone()).expect("verdict rows");
    verdicts.sort();
    verdicts.dedup();
    (
        verdicts,
        seen["calls"].as_u64().unwrap_or_default() as usize,
    )
}

/// Clicks a verdict's first evidence link: the page jumps to it (the address names it and
/// it is on screen).
fn jump_to_evidence(page: &Page) {
    let target = page
        .eval("document.querySelector('a[data-evidence]').getAttribute('href')")
        .expect("the evidence link");
    let target = target.as_str().expect("an href").to_string();
    page.click("a[data-evidence]")
        .expect("a click on the evidence");
    page.wait_until("the jump to the evidence", || {
        let seen = page.eval_json(&format!(
            "(() => {{ const e = document.getElementById({id}); if (!e) return null; \
             const r = e.getBoundingClientRect(); \
             return [location.hash, r.top >= -1 && r.top < window.innerHeight]; }})()",
            id = support::js(target.trim_start_matches('#'))
        ))?;
        Ok(seen[0] == Value::String(target.clone()) && seen[1] == Value::Bool(true))
    })
    .expect("the evidence is shown after the click");
}

/// In-page links (`href="#…"`: tabs, a verdict's evidence) whose target is not on the page.
fn broken_anchors(page: &Page) -> Vec<String> {
    let broken = page
        .eval_json(
            "[...document.querySelectorAll('a[href^=\"#\"]')]
                 .map(a => decodeURIComponent(a.getAttribute('href').slice(1)))
                 .filter(id => id && !document.getElementById(id))",
        )
        .expect("reading the page's anchors");
    serde_json::from_value(broken).expect("a list of ids")
}

/// What a trial's files say the page must show: its verdicts (id, status) and tool calls.
pub fn trial_files(dir: &Path) -> (Vec<(String, String)>, usize) {
    let verdicts = read_json(&dir.join("verdicts.json"));
    let mut expected: Vec<(String, String)> = verdicts
        .as_array()
        .expect("verdicts.json is a list")
        .iter()
        .map(|v| {
            (
                v["id"].as_str().expect("an id").to_string(),
                v["status"].as_str().expect("a status").to_string(),
            )
        })
        .collect();
    expected.sort();
    let trajectory = std::fs::read_to_string(dir.join("trajectory.jsonl")).expect("trajectory");
    let calls = trajectory
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|s| s["type"] == "tool_call")
        .count();
    (expected, calls)
}

#[test]
fn view_overview_and_every_trial_page() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let run = run_a(tmp.path());
    let server = view(&[&run]);
    let chrome = Chrome::launch("view_overview_and_every_trial_page").expect("Chromium starts");
    let page = chrome.page().expect("a tab");

    page.goto(&server.url).expect("the overview");
    page.wait_for("a.heat-cell").expect("the heat map");
    page.screenshot("overview").expect("screenshot");
    page.assert_clean("the overview");

    let expected = trials(&run);
    let links = page
        .attrs("a.heat-cell", "href")
        .expect("the heat map's links");
    assert_eq!(
        links.len(),
        expected.len(),
        "one heat-map cell per trial: {links:?}"
    );
    let overview = server.url.clone();

    // The first cell by a click, the rest by their address.
    page.click_to_navigate("a.heat-cell")
        .expect("a click on the first cell");
    assert_eq!(
        page.url().expect("url"),
        links[0],
        "the click opened the cell's link"
    );
    let mut checked = Vec::new();
    let mut jumped = false;
    for (i, link) in links.iter().enumerate() {
        if i > 0 {
            page.goto(link).expect("a trial page");
        }
        let title = page.eval("document.title").expect("the title");
        let title = title.as_str().unwrap_or_default().to_string();
        // The page names its trial: find it among the run's.
        let (task, agent, dir) = expected
            .iter()
            .filter(|(task, agent, _)| {
                title.contains(task.as_str()) && title.contains(agent.as_str())
            })
            .max_by_key(|(task, agent, _)| task.len() + agent.len())
            .unwrap_or_else(|| {
                panic!("the trial page {link} titled {title:?} names a trial of the run")
            });
        let (verdicts, calls) = trial_page(&page);
        let (want_verdicts, want_calls) = trial_files(dir);
        assert_eq!(
            verdicts, want_verdicts,
            "{task} · {agent}: the verdicts of verdicts.json"
        );
        assert_eq!(
            calls, want_calls,
            "{task} · {agent}: one timeline step per tool call"
        );
        let broken = broken_anchors(&page);
        assert!(
            broken.is_empty(),
            "{task} · {agent}: links to nothing: {broken:?}"
        );
        if !jumped && page.count("a[data-evidence]").expect("count") > 0 {
            jump_to_evidence(&page);
            page.screenshot(&format!("trial-{task}-{agent}-evidence"))
                .expect("screenshot");
            jumped = true;
        }
        page.screenshot(&format!("trial-{task}-{agent}"))
            .expect("screenshot");
        page.assert_clean(&format!("the trial page of {task} · {agent}"));
        checked.push((task.clone(), agent.clone()));
    }
    checked.sort();
    checked.dedup();
    assert_eq!(
        checked.len(),
        expected.len(),
        "every trial has its own cell"
    );
    assert!(jumped, "some verdict of the run links to its evidence");

    // Back to the overview: still clean.
    page.goto(&overview).expect("the overview again");
    page.assert_clean("the overview");
}

/// A number as the viewer prints a difference (`+84.2`, `-100.0`, `±0.0`).
fn shown_number(text: &str) -> f64 {
    text.trim()
        .trim_start_matches('±')
        .replace('−', "-")
        .parse()
        .unwrap_or_else(|_| panic!("{text:?} is not a number"))
}

#[test]
fn view_compares_two_runs() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let (a, b) = (run_a(tmp.path()), run_b(tmp.path()));
    let server = view(&[&a, &b]);
    let chrome = Chrome::launch("view_compares_two_runs").expect("Chromium starts");
    let page = chrome.page().expect("a tab");
    page.goto(&server.url).expect("the overview of two runs");
    page.wait_for("#compare").expect("a comparison");
    page.screenshot("comparison").expect("screenshot");
    page.assert_clean("the comparison");

    let tables = page
        .eval_json(
            "[...document.querySelectorAll('table.compare')].map(t => ({
                 head: [...t.querySelectorAll('tr:first-child th')].map(h => h.innerText),
                 rows: [...t.querySelectorAll('tr[data-task]')].map(r => ({
                     task: r.dataset.task,
                     delta: r.querySelector('[data-delta]').dataset.delta,
                     shown: r.querySelector('[data-delta]').innerText })) }))",
        )
        .expect("reading the comparison");
    let tables = tables.as_array().expect("a list of tables");
    assert!(!tables.is_empty(), "two runs are compared");

    // A column is "<agent> · <run label>"; the label is the run directory's name.
    let runs = [&a, &b];
    let weighted = |column: &str, task: &str| -> Option<f64> {
        let (agent, label) = column
            .rsplit_once(" · ")
            .expect("a column names agent · run");
        let run = runs
            .iter()
            .find(|r| r.file_name().is_some_and(|n| n == label))
            .unwrap_or_else(|| panic!("no run is labelled {label}"));
        trials(run)
            .into_iter()
            .find(|(t, a, _)| t == task && a == agent)
            .map(|(_, _, dir)| {
                read_json(&dir.join("result.json"))["score"]["weighted"]
                    .as_f64()
                    .expect("a weighted score")
            })
    };
    let mut differing = 0;
    for table in tables {
        let head: Vec<String> = serde_json::from_value(table["head"].clone()).expect("headers");
        let (col_a, col_b) = (&head[1], &head[2]);
        for row in table["rows"].as_array().expect("rows") {
            let task = row["task"].as_str().expect("a task");
            let delta = row["delta"].as_str().unwrap_or_default();
            let shown = row["shown"].as_str().unwrap_or_default();
            match (weighted(col_a, task), weighted(col_b, task)) {
                (Some(wa), Some(wb)) => {
                    let want = wb - wa;
                    let got: f64 = delta.parse().expect("data-delta is a number");
                    assert!(
                        (got - want).abs() < 1e-3,
                        "{task}: {col_a} → {col_b} differs by {want} in result.json, the page says {got}"
                    );
                    assert!(
                        (shown_number(shown) - want * 100.0).abs() < 0.051,
                        "{task}: the page shows {shown} for a difference of {want}"
                    );
                    if want.abs() > 1e-9 {
                        differing += 1;
                    }
                }
                _ => assert!(
                    delta.is_empty(),
                    "{task} is in only one of {col_a}, {col_b}, yet has a difference {delta}"
                ),
            }
        }
    }
    assert!(
        differing > 0,
        "the runs differ on some task, and the page shows it"
    );
}

#[test]
fn report_html_is_self_contained() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let run = run_a(tmp.path());
    let html = tmp.path().join("html");
    support::bureau(
        &[
            OsStr::new("report"),
            run.as_os_str(),
            OsStr::new("--html"),
            OsStr::new("--html-out"),
            html.as_os_str(),
        ],
        Duration::from_secs(120),
        &[0],
    )
    .expect("bureau report --html");
    let index = html.join("index.html");
    assert!(index.is_file(), "{} written", index.display());

    let chrome = Chrome::launch("report_html_is_self_contained").expect("Chromium starts");
    let page = chrome.page().expect("a tab");
    let url = format!("file://{}", index.display());
    page.goto(&url).expect("the static overview");
    page.wait_for("a.heat-cell").expect("the heat map");
    page.screenshot("overview").expect("screenshot");
    page.assert_clean("the static overview");
    let links = page.attrs("a.heat-cell", "href").expect("links");
    assert!(!links.is_empty(), "the static heat map has links");
    for link in &links {
        assert!(
            link.starts_with("file://"),
            "a static page links to files: {link}"
        );
    }
    // A trial page, by a click.
    page.click_to_navigate("a.heat-cell")
        .expect("a click on a cell");
    page.wait_for("#verdicts").expect("the trial's verdicts");
    page.screenshot("trial").expect("screenshot");
    page.assert_clean("a static trial page");

    let requests = page.requests();
    let fetched: Vec<&String> = requests
        .iter()
        .filter(|u| {
            ["http:", "https:", "ws:", "wss:", "ftp:"]
                .iter()
                .any(|scheme| u.starts_with(scheme))
        })
        .collect();
    assert!(fetched.is_empty(), "the static report fetched {fetched:?}");
    assert!(
        requests.iter().any(|u| u.starts_with("file://")),
        "the requests were recorded at all: {requests:?}"
    );
}

/// A damaged run — a trajectory cut short mid-line (a run killed while writing), a
/// result.json that is not one — still renders cleanly, says on the page what it could not
/// read, and shows the lines before the cut.
#[test]
fn view_damaged_run_says_what_it_could_not_read() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let run = tmp.path().join("damaged");
    self::run("suites/starter@core", &["oracle", "null"], &run);
    let trials = trials(&run);
    let (_, _, cut) = trials
        .iter()
        .find(|(task, agent, _)| task == "customer-spec-answer" && agent == "oracle")
        .expect("the oracle's customer-spec-answer trial");
    let trajectory = std::fs::read(cut.join("trajectory.jsonl")).expect("the trajectory");
    let kept = &trajectory[..trajectory.len() / 2];
    std::fs::write(cut.join("trajectory.jsonl"), kept).expect("cutting the trajectory");
    let whole_calls = String::from_utf8_lossy(kept)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|s| s["type"] == "tool_call")
        .count();
    assert!(whole_calls > 0, "the cut keeps some calls");
    let (_, _, broken) = trials
        .iter()
        .find(|(task, agent, _)| task == "q2-planning-scheduling" && agent == "null")
        .expect("the null agent's q2-planning-scheduling trial");
    std::fs::write(broken.join("result.json"), "{\"task\": {\"id\": ").expect("breaking a result");

    let server = view(&[&run]);
    let chrome =
        Chrome::launch("view_damaged_run_says_what_it_could_not_read").expect("Chromium starts");
    let page = chrome.page().expect("a tab");
    page.goto(&server.url).expect("the overview");
    page.wait_for("#problems")
        .expect("the overview lists what it could not read");
    page.screenshot("overview").expect("screenshot");
    let problems = page.text("#problems").expect("the problems");
    assert!(
        problems.contains("q2-planning-scheduling") && problems.contains("result.json"),
        "the overview names the broken result: {problems}"
    );
    page.assert_clean("the overview of a damaged run");

    let links = page
        .attrs("a.heat-cell", "href")
        .expect("the heat map's links");
    assert!(!links.is_empty(), "the readable trials are still linked");
    let mut saw_cut = false;
    for (i, link) in links.iter().enumerate() {
        page.goto(link).expect("a trial page");
        page.assert_clean(&format!("the trial page {link}"));
        let title = page.eval("document.title").expect("the title");
        let title = title.as_str().unwrap_or_default();
        if title.contains("customer-spec-answer") && title.contains("oracle") {
            saw_cut = true;
            let problems = page
                .text("#problems")
                .expect("the trial page says what is wrong");
            assert!(
                problems.contains("trajectory.jsonl"),
                "the trial page names the cut trajectory: {problems}"
            );
            let (_, calls) = trial_page(&page);
            assert_eq!(calls, whole_calls, "the calls before the cut are shown");
            page.screenshot("trial-cut").expect("screenshot");
        } else {
            page.screenshot(&format!("trial-{i}")).expect("screenshot");
        }
    }
    assert!(
        saw_cut,
        "the trial with the cut trajectory is linked from the heat map"
    );
}
