//! The viewer over real runs: pages, links, comparison, the server, bad input.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bureau_run::RunConfig;

fn suites() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites")
}

/// Two real runs made once: `a` = oracle + null over starter@lite, `b` = oracle over
/// starter@core.
fn runs() -> &'static (tempfile::TempDir, PathBuf, PathBuf) {
    static RUNS: OnceLock<(tempfile::TempDir, PathBuf, PathBuf)> = OnceLock::new();
    RUNS.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        let lite = format!("{}@lite", suites().join("starter").display());
        let core = format!("{}@core", suites().join("starter").display());
        let mut config =
            RunConfig::new(vec![lite], vec!["oracle".into(), "null".into()], a.clone());
        config.quiet = true;
        config.concurrency = 2;
        bureau_run::run(&config).unwrap();
        let mut config = RunConfig::new(vec![core], vec!["null".into()], b.clone());
        config.quiet = true;
        bureau_run::run(&config).unwrap();
        (tmp, a, b)
    })
}

/// The shape of a page: its elements with their ids and classes, one per line, text and
/// attribute values left out (SVG charts are one line: their content is plotters').
fn shape(html: &str) -> String {
    let no_svg = regex::Regex::new(r"(?s)<svg.*?</svg>")
        .unwrap()
        .replace_all(html, "<svg/>");
    let no_style = regex::Regex::new(r"(?s)<(style|script)>.*?</(style|script)>")
        .unwrap()
        .replace_all(&no_svg, "<$1/>");
    let tag = regex::Regex::new(r#"<([a-z0-9]+)([^>]*)>"#).unwrap();
    let attr = regex::Regex::new(r#"\b(id|class)="([^"]*)""#).unwrap();
    let digits = regex::Regex::new(r"[0-9]+").unwrap();
    let mut out = String::new();
    let mut last = String::new();
    for c in tag.captures_iter(&no_style) {
        let mut line = c[1].to_string();
        for a in attr.captures_iter(&c[2]) {
            // Ids that carry data (step numbers, item ids) are shown by kind only.
            let v = digits.replace_all(&a[2], "N");
            line.push_str(&format!(
                " {}={}",
                &a[1],
                if &a[1] == "id" {
                    v.split('-').next().unwrap_or("").to_string()
                } else {
                    v.to_string()
                }
            ));
        }
        // Repeated identical elements (rows, steps) collapse into one line.
        if line != last {
            out.push_str(&line);
            out.push('\n');
        }
        last = line;
    }
    out
}

fn export(dirs: &[PathBuf]) -> (tempfile::TempDir, PathBuf) {
    let out = tempfile::tempdir().unwrap();
    let written = bureau_view::export_html(dirs, out.path()).unwrap();
    let index = written.index.clone();
    (out, index)
}

#[test]
fn every_heat_map_link_opens_a_trial_page_that_shows_its_verdicts() {
    let (_, a, _) = runs();
    let (out, index) = export(std::slice::from_ref(a));
    let html = std::fs::read_to_string(&index).unwrap();
    let link = regex::Regex::new(r#"<a class="heat-cell" href="([^"]+)""#).unwrap();
    let hrefs: Vec<String> = link.captures_iter(&html).map(|c| unescape(&c[1])).collect();
    // 4 tasks × 2 agents × 1 epoch.
    assert_eq!(hrefs.len(), 8, "{hrefs:?}");
    for href in &hrefs {
        let page = std::fs::read_to_string(out.path().join(href))
            .unwrap_or_else(|e| panic!("{href}: {e}"));
        assert!(page.contains("id=\"verdicts\""), "{href}");
        assert!(page.contains("id=\"timeline\""), "{href}");
        // Every verdict of the trial is listed.
        let dir = a.join("trials").join(
            href.trim_start_matches("trial/0/")
                .trim_end_matches(".html"),
        );
        let verdicts: Vec<serde_json::Value> =
            serde_json::from_slice(&std::fs::read(dir.join("verdicts.json")).unwrap()).unwrap();
        for v in &verdicts {
            let id = v["id"].as_str().unwrap();
            assert!(
                page.contains(&format!("id=\"verdict-{id}\"")),
                "{href}: {id}"
            );
        }
        // Nothing is fetched: no external URL in src or href.
        assert!(!page.contains("src=\"http"), "{href}");
        assert!(!page.contains("href=\"http"), "{href}");
    }
}

#[test]
fn two_runs_are_compared_task_by_task() {
    let (_, a, b) = runs();
    let (_out, index) = export(&[a.clone(), b.clone()]);
    let html = std::fs::read_to_string(&index).unwrap();
    // null in a vs null in b: the same agent in both runs.
    assert!(html.contains("null · a → null · b"), "{html}");
    // Every task of either run has a row; the tasks of only one have no delta.
    let row = regex::Regex::new(r#"<tr data-task="([^"]+)">.*?data-delta="([^"]*)""#).unwrap();
    let rows: Vec<(String, String)> = row
        .captures_iter(&html)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect();
    let in_b = ["customer-spec-answer", "q2-planning-scheduling"];
    for (task, delta) in &rows {
        if in_b.contains(&task.as_str()) {
            // Both runs are the null agent on the same task: the same score.
            assert_eq!(delta, "0.0000", "{task}");
        }
    }
    assert!(
        rows.iter()
            .any(|(t, d)| t == "marketing-budget-reconcile" && d.is_empty())
    );
}

#[test]
fn the_overview_keeps_its_shape() {
    let (_, a, _) = runs();
    let (_out, index) = export(std::slice::from_ref(a));
    insta::assert_snapshot!(
        "overview_shape",
        shape(&std::fs::read_to_string(index).unwrap())
    );
}

#[test]
fn a_trial_page_keeps_its_shape() {
    let (_, a, _) = runs();
    let run = bureau_view::load::load_run(a);
    let page =
        bureau_view::trial::trial_page(&run, "customer-spec-answer/oracle/1", "../../../../")
            .unwrap();
    insta::assert_snapshot!("trial_shape", shape(&page));
}

#[test]
fn a_run_killed_mid_write_is_shown_with_what_could_not_be_read() {
    let (_, a, _) = runs();
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("killed");
    copy_dir(a, &copy);
    let trial = copy.join("trials/customer-spec-answer/oracle/1");
    std::fs::remove_file(trial.join("result.json")).unwrap();
    let traj = std::fs::read_to_string(trial.join("trajectory.jsonl")).unwrap();
    std::fs::write(trial.join("trajectory.jsonl"), &traj[..traj.len() / 2]).unwrap();
    std::fs::write(
        copy.join("trials/q2-planning-scheduling/null/1/result.json"),
        b"{\"schema\": 7,",
    )
    .unwrap();
    let run = bureau_view::load::load_run(&copy);
    let html = unescape(&bureau_view::pages::overview(&run_vec(run.clone())));
    assert!(html.contains("What the viewer could not read"));
    assert!(html.contains("trials/customer-spec-answer/oracle/1/result.json"));
    assert!(html.contains("trials/q2-planning-scheduling/null/1/result.json"));
    let page = bureau_view::trial::trial_page(&run, "customer-spec-answer/oracle/1", "").unwrap();
    assert!(
        page.contains("cut short"),
        "the cut trajectory line is named"
    );
    assert!(page.contains("the trial is running or was stopped"));
    assert!(
        page.contains("class=\"step prompt\""),
        "the steps before the cut are shown"
    );
}

#[test]
fn a_directory_that_is_not_a_run_says_so_on_the_page() {
    let tmp = tempfile::tempdir().unwrap();
    let html = bureau_view::pages::overview(&run_vec(bureau_view::load::load_run(tmp.path())));
    assert!(html.contains("not a run directory"), "{html}");
}

/// Attribute values as a browser reads them (minijinja escapes `/` as `&#x2f;`).
fn unescape(s: &str) -> String {
    s.replace("&#x2f;", "/").replace("&amp;", "&")
}

fn run_vec(r: bureau_view::load::RunData) -> Vec<bureau_view::load::RunData> {
    vec![r]
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        let dest = to.join(e.file_name());
        if t.is_dir() {
            copy_dir(&e.path(), &dest);
        } else if t.is_file() {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn the_server_serves_pages_on_loopback_and_nothing_outside_the_runs() {
    let (_, a, _) = runs();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let viewer = rt
        .block_on(bureau_view::Viewer::bind(vec![a.clone()], 0))
        .unwrap();
    let url = viewer.url().unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    rt.spawn(viewer.serve());
    let client = reqwest::blocking::Client::new();
    let get = |path: &str| client.get(format!("{url}{path}")).send().unwrap();
    let index = get("");
    assert_eq!(index.status(), 200);
    let csp = index.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(index.text().unwrap().contains("heat-cell"));
    assert_eq!(
        get("trial/0/customer-spec-answer/oracle/1.html").status(),
        200
    );
    assert_eq!(
        get("trial/0/customer-spec-answer/nobody/1.html").status(),
        404
    );
    assert_eq!(
        get("trial/0/..%2F..%2F..%2Fetc/passwd/1.html").status(),
        404
    );
    assert_eq!(
        get("trial/7/customer-spec-answer/oracle/1.html").status(),
        404
    );
    assert_eq!(get("run.json").status(), 404);
}

#[test]
fn a_sharded_run_shows_its_progress_per_shard_until_every_trial_is_in() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("sharded");
    let lite = format!("{}@lite", suites().join("starter").display());
    let config = |k| {
        let mut c = RunConfig::new(vec![lite.clone()], vec!["null".into()], run.clone());
        c.quiet = true;
        c.shard = Some(bureau_run::Shard { k, n: 2 });
        c
    };
    // Only shard 1 of 2 has run.
    bureau_run::run(&config(1)).unwrap();
    let status = bureau_run::status::status(&run).unwrap();
    let (one, two) = (&status.shards[0], &status.shards[1]);
    assert!(one.trials > 0 && one.done == one.trials);
    assert!(two.trials > 0 && two.done == 0);
    let html = |run: &Path| {
        let (_out, index) = export(&[run.to_path_buf()]);
        std::fs::read_to_string(index).unwrap()
    };
    let page = html(&run);
    assert!(page.contains("<table class=\"shards\">"), "{page}");
    // Shard, done, trials (`/` is escaped by the templates).
    let row = |k: u32, done: usize, trials: usize| {
        format!(
            "<tr><td>{k}&#x2f;2</td><td class=\"num\">{done}</td><td class=\"num\">{trials}</td>"
        )
    };
    assert!(page.contains(&row(1, one.done, one.trials)), "{page}");
    assert!(page.contains(&row(2, 0, two.trials)), "{page}");
    assert!(page.contains("<td>done</td>") && page.contains("<td>not started</td>"));
    assert!(page.contains("the figures below are provisional"));

    // Shard 2 runs: every trial is in, the summary is final.
    bureau_run::run(&config(2)).unwrap();
    let page = html(&run);
    assert!(!page.contains("<td>not started</td>"), "{page}");
    assert!(page.contains("the summary is final"));

    // A run that is not sharded has no shard table.
    let (_tmp, a, _) = runs();
    assert!(!html(a).contains("class=\"shards\""));
}
