//! The browser driver of the browser tests: Debian's Chromium, headless, over the Chrome
//! DevTools Protocol (`headless_chrome`), and the `bureau` servers the tests open in it.
//!
//! A `Page` records every console error, uncaught exception, failed load and fetched URL of
//! its tab from the moment it is opened, so a test can assert that a page rendered cleanly and
//! fetched nothing it should not. Every wait is bounded.
//!
//! Why the records come from a script the tab runs in every document (`RECORDER`) and not
//! from the protocol's events (`Runtime.consoleAPICalled`, `Runtime.exceptionThrown`,
//! `Log.entryAdded`, `Network.requestWillBeSent`): starlark turns on serde_json's
//! `arbitrary_precision`, features are unified across the workspace, and with it
//! headless_chrome cannot parse any event that carries a number (it reads events through an
//! internally tagged enum, which buffers numbers as maps) and drops them silently. Commands
//! and their answers are unaffected, so the recorder is installed and read through commands.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use headless_chrome::browser::tab::{Tab, point::Point};
use headless_chrome::protocol::cdp::Page as Cdp;
use headless_chrome::{Browser, LaunchOptions};

/// How long any single wait (a page load, an element, a server's first line) may take.
pub const WAIT: Duration = Duration::from_secs(30);

/// The Debian package and command that provide the browser.
const PACKAGE: &str = "chromium";
const INSTALL: &str = "apt-get install --no-install-recommends chromium";

/// Chromium's executable: `$BUREAU_CHROMIUM`, else the first of the usual names on PATH.
/// Absent, the test fails (never skips): under CI naming the package `.ci/run` must install,
/// elsewhere with the command that installs it.
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("BUREAU_CHROMIUM") {
        return PathBuf::from(path);
    }
    let names = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ];
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in names {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "Chromium is not installed: the browser tests need Debian's package `{PACKAGE}`, \
             which .ci/run installs before the tests; check that step's output"
        );
    }
    panic!(
        "Chromium is not installed (looked for {} on PATH, and $BUREAU_CHROMIUM): the browser \
         tests need it. Install it with `{INSTALL}` (as root), or point BUREAU_CHROMIUM at a \
         Chromium or Chrome executable",
        names.join(", ")
    );
}

/// The folder a test's screenshots go to: `$CARGO_TARGET_TMPDIR/browser/<test>/`.
pub fn shots_dir(test: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("browser")
        .join(test)
}

/// One headless Chromium for one test.
pub struct Chrome {
    browser: Browser,
    shots: PathBuf,
    // The profile directory lives as long as the browser.
    _profile: tempfile::TempDir,
}

impl Chrome {
    /// Starts Chromium headless, its screenshots going to `shots_dir(test)`.
    pub fn launch(test: &str) -> Result<Chrome> {
        let path = chromium();
        let profile = tempfile::tempdir().context("a profile directory for Chromium")?;
        let options = LaunchOptions {
            headless: true,
            // Chromium's sandbox needs unprivileged user namespaces or a setuid helper and
            // refuses to start as root without them; CI runs as root in a container, so the
            // sandbox is off. The pages it opens are Bureau's own, served on 127.0.0.1.
            sandbox: false,
            window_size: Some((1280, 900)),
            path: Some(path.clone()),
            user_data_dir: Some(profile.path().to_path_buf()),
            idle_browser_timeout: Duration::from_secs(120),
            args: vec![
                OsStr::new("--disable-gpu"),
                OsStr::new("--no-proxy-server"),
                OsStr::new("--hide-scrollbars"),
            ],
            ..LaunchOptions::default()
        };
        let browser = Browser::new(options)
            .with_context(|| format!("starting Chromium ({})", path.display()))?;
        let shots = shots_dir(test);
        if shots.exists() {
            std::fs::remove_dir_all(&shots)
                .with_context(|| format!("clearing {}", shots.display()))?;
        }
        std::fs::create_dir_all(&shots).with_context(|| format!("creating {}", shots.display()))?;
        Ok(Chrome {
            browser,
            shots,
            _profile: profile,
        })
    }

    /// A new tab, recording console errors, exceptions and requests from now on.
    pub fn page(&self) -> Result<Page> {
        let tab = self.browser.new_tab().context("opening a tab")?;
        tab.set_default_timeout(WAIT);
        tab.call_method(Cdp::AddScriptToEvaluateOnNewDocument {
            source: RECORDER.to_string(),
            world_name: None,
            include_command_line_api: None,
            run_immediately: Some(true),
        })
        .context("installing the recorder")?;
        Ok(Page {
            tab,
            problems: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
            shots: self.shots.clone(),
        })
    }
}

/// Runs first in every document of a tab: records `console.error`/`console.assert`, uncaught
/// exceptions and unhandled rejections, elements that failed to load and CSP violations;
/// `HARVEST` adds every URL the document fetched (resource timing) and every fetch answered
/// with an HTTP error.
const RECORDER: &str = r#"(() => {
  if (window.__bureau) return;
  const problems = [];
  window.__bureau = { problems };
  const text = (a) => {
    if (a instanceof Error) return a.stack || String(a);
    if (typeof a === 'string') return a;
    try { return JSON.stringify(a); } catch (_) { return String(a); }
  };
  const error = console.error.bind(console);
  console.error = (...args) => { problems.push('console.error: ' + args.map(text).join(' ')); error(...args); };
  const assert = console.assert.bind(console);
  console.assert = (ok, ...args) => { if (!ok) problems.push('console.assert: ' + args.map(text).join(' ')); assert(ok, ...args); };
  window.addEventListener('error', (e) => {
    if (e instanceof ErrorEvent) {
      problems.push('uncaught exception: ' + (e.error ? text(e.error) : e.message) + ' at ' + e.filename + ':' + e.lineno);
    } else if (e.target && e.target !== window) {
      const t = e.target;
      problems.push('failed to load <' + t.tagName.toLowerCase() + '> ' + (t.currentSrc || t.src || t.href || ''));
    }
  }, true);
  window.addEventListener('unhandledrejection', (e) => problems.push('unhandled rejection: ' + text(e.reason)));
  document.addEventListener('securitypolicyviolation', (e) => problems.push('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));
})();"#;

/// What the current document recorded since it was last harvested (and clears it): its
/// problems, the URLs it fetched, and an HTTP error status for any of them (a fetch whose
/// error the page handled would log nothing of its own, while the browser's console shows it).
const HARVEST: &str = r#"(() => {
  const b = window.__bureau;
  if (!b) return { problems: ['the recorder is missing from ' + location.href], requests: [] };
  const problems = b.problems.splice(0);
  const seen = b.seen || 0;
  const entries = performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'));
  b.seen = entries.length;
  const fresh = entries.slice(seen);
  for (const e of fresh) {
    // The browser asks for /favicon.ico by itself; the page did not, and it logs nothing.
    if (e.responseStatus >= 400 && !e.name.endsWith('/favicon.ico')) problems.push('HTTP ' + e.responseStatus + ' for ' + e.name);
  }
  return { problems, requests: fresh.map((e) => e.name) };
})()"#;

/// A tab and what happened in it.
pub struct Page {
    pub tab: Arc<Tab>,
    problems: Mutex<Vec<String>>,
    requests: Mutex<Vec<String>>,
    shots: PathBuf,
}

impl Page {
    /// Opens `url` and waits until the new document has loaded.
    pub fn goto(&self, url: &str) -> Result<()> {
        self.mark_document()?;
        self.tab
            .navigate_to(url)
            .with_context(|| format!("navigating to {url}"))?;
        self.wait_new_document()
            .with_context(|| format!("waiting for {url} to load"))
    }

    /// Waits until the current document's `readyState` is `complete`.
    pub fn wait_loaded(&self) -> Result<()> {
        self.wait_value(
            "the page to load",
            "document.readyState === 'complete' || null",
        )
        .map(|_| ())
    }

    /// Harvests the current document's records and marks it, so that `wait_new_document`
    /// can tell it from the next.
    fn mark_document(&self) -> Result<()> {
        self.harvest();
        self.eval("window.__bureauOld = true").map(|_| ())
    }

    /// Moves what the current document recorded into this page's records. A document that
    /// cannot be read (one being replaced) is skipped.
    fn harvest(&self) {
        let Ok(records) = self.eval_json(HARVEST) else {
            return;
        };
        let strings = |key: &str| -> Vec<String> {
            records[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        if let Ok(mut p) = self.problems.lock() {
            p.extend(strings("problems"));
        }
        if let Ok(mut r) = self.requests.lock() {
            r.extend(strings("requests"));
        }
    }

    /// Waits until a document without the mark has loaded (`readyState` is `complete`).
    /// The browser's lifecycle events are not relied on (see the module's note on events).
    /// A new document answered with an HTTP error is an error, with the page's text.
    fn wait_new_document(&self) -> Result<()> {
        let status = self.wait_value(
            "the next page to load",
            "(window.__bureauOld !== true && document.readyState === 'complete') \
             ? ((performance.getEntriesByType('navigation')[0] || {}).responseStatus || 0) : null",
        )?;
        if status.as_u64().is_some_and(|s| s >= 400) {
            let text = self.eval("document.body ? document.body.innerText.slice(0, 500) : ''")?;
            bail!(
                "{} answered HTTP {status}: {}",
                self.url().unwrap_or_default(),
                text.as_str().unwrap_or_default()
            );
        }
        Ok(())
    }

    /// Polls `ready` until it says yes, for at most `WAIT`. Errors while polling (a page that
    /// is navigating) count as "not yet".
    pub fn wait_until(&self, what: &str, mut ready: impl FnMut() -> Result<bool>) -> Result<()> {
        let deadline = Instant::now() + WAIT;
        let mut last = None;
        loop {
            match ready() {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => last = Some(e),
            }
            if Instant::now() > deadline {
                let why = last
                    .map(|e| format!(" (last error: {e:#})"))
                    .unwrap_or_default();
                bail!(
                    "waited {WAIT:?} for {what} on {}{why}",
                    self.url().unwrap_or_default()
                );
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Polls a JavaScript expression until it yields something other than `null` or
    /// `undefined` (at most `WAIT`), and returns that value (through JSON).
    pub fn wait_value(&self, what: &str, expression: &str) -> Result<serde_json::Value> {
        let mut value = serde_json::Value::Null;
        self.wait_until(what, || {
            value = self.eval(&format!(
                "(() => {{ const v = ({expression}); return v == null ? null : JSON.stringify(v); }})()"
            ))?;
            Ok(!value.is_null())
        })?;
        match value {
            serde_json::Value::String(s) => {
                serde_json::from_str(&s).with_context(|| format!("parsing the value of {what}"))
            }
            other => bail!("{what} gave {other}"),
        }
    }

    /// The page's location.
    pub fn url(&self) -> Result<String> {
        match self.eval("location.href")? {
            serde_json::Value::String(s) => Ok(s),
            other => bail!("location.href is {other}"),
        }
    }

    /// Evaluates `expression` in the page (awaiting a promise) and returns its value if it is
    /// a primitive; wrap objects in `JSON.stringify(...)` or use `eval_json`.
    ///
    /// Each call to the browser costs about 100 ms with headless_chrome (its reader holds the
    /// socket for up to 100 ms at a time), so the helpers here do each step in one call.
    pub fn eval(&self, expression: &str) -> Result<serde_json::Value> {
        let object = self
            .tab
            .evaluate(expression, true)
            .with_context(|| format!("evaluating {expression}"))?;
        if let Some(exception) = object.subtype.as_ref().filter(|s| {
            matches!(
                s,
                headless_chrome::protocol::cdp::Runtime::RemoteObjectSubtype::Error
            )
        }) {
            bail!(
                "evaluating {expression} threw ({exception:?}): {}",
                object.description.unwrap_or_default()
            );
        }
        Ok(object.value.unwrap_or(serde_json::Value::Null))
    }

    /// Evaluates an expression and returns its value through `JSON.stringify`.
    pub fn eval_json(&self, expression: &str) -> Result<serde_json::Value> {
        match self.eval(&format!("JSON.stringify({expression})"))? {
            serde_json::Value::String(s) => serde_json::from_str(&s)
                .with_context(|| format!("parsing the value of {expression}")),
            other => bail!("{expression} gave {other}, not JSON text"),
        }
    }

    /// Waits for an element matching `selector` (bounded by `WAIT`).
    pub fn wait_for(&self, selector: &str) -> Result<()> {
        self.wait_value(
            &format!("`{selector}`"),
            &format!("document.querySelector({}) ? true : null", js(selector)),
        )
        .map(|_| ())
    }

    /// How many elements match `selector` now.
    pub fn count(&self, selector: &str) -> Result<usize> {
        let n = self.eval(&format!(
            "document.querySelectorAll({}).length",
            js(selector)
        ))?;
        n.as_u64()
            .map(|n| n as usize)
            .ok_or_else(|| anyhow!("counting `{selector}` gave {n}"))
    }

    /// Clicks the element matching `selector`: scrolled into view, a real mouse click (move,
    /// press, release) at the middle of its first box (a link that wraps has one box per
    /// line, and the middle of the whole may be on neither).
    pub fn click(&self, selector: &str) -> Result<()> {
        // The click may replace the document: keep what this one recorded.
        self.harvest();
        let point = self.wait_value(
            &format!("`{selector}` to be visible to click"),
            &format!(
                "(() => {{ const e = document.querySelector({}); if (!e) return null; \
                 e.scrollIntoView({{block: 'center', inline: 'center', behavior: 'instant'}}); \
                 const r = [...e.getClientRects()].find(r => r.width > 0 && r.height > 0); \
                 return r ? [r.x + r.width / 2, r.y + r.height / 2] : null; }})()",
                js(selector)
            ),
        )?;
        let (Some(x), Some(y)) = (point[0].as_f64(), point[1].as_f64()) else {
            bail!("`{selector}` has no position: {point}");
        };
        self.tab
            .click_point(Point { x, y })
            .with_context(|| format!("clicking `{selector}`"))?;
        Ok(())
    }

    /// Clicks a link or button that loads another page, and waits for the new page.
    pub fn click_to_navigate(&self, selector: &str) -> Result<()> {
        self.mark_document()?;
        self.click(selector)?;
        self.wait_new_document()
    }

    /// Clicks into the input or textarea matching `selector`, clears it and types `text`:
    /// each line as text input (`Input.insertText`, what a keyboard's input method sends;
    /// key by key would cost two round trips a character), each line break as the Enter key.
    pub fn fill(&self, selector: &str, text: &str) -> Result<()> {
        self.click(selector)?;
        self.eval(&format!(
            "(() => {{ const e = document.querySelector({}); e.focus(); e.select(); }})()",
            js(selector)
        ))?;
        // Typing over the selection replaces it; an empty text deletes it.
        if text.is_empty() {
            self.tab.press_key("Backspace")?;
        }
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                self.tab.press_key("Enter")?;
            }
            if !line.is_empty() {
                self.tab
                    .send_character(line)
                    .with_context(|| format!("typing into `{selector}`"))?;
            }
        }
        let typed = self.eval(&format!("document.querySelector({}).value", js(selector)))?;
        if typed != serde_json::json!(text) {
            bail!("typed {text:?} into `{selector}` but it holds {typed}");
        }
        Ok(())
    }

    /// The visible text of the first element matching `selector` (waiting for it).
    pub fn text(&self, selector: &str) -> Result<String> {
        let value = self.wait_value(
            &format!("`{selector}` to read"),
            &format!(
                "(() => {{ const e = document.querySelector({}); return e ? e.innerText : null; }})()",
                js(selector)
            ),
        )?;
        value
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| anyhow!("the text of `{selector}` is {value}"))
    }

    /// An attribute of every element matching `selector` (absent attributes are skipped);
    /// for `href` and `src`, the resolved absolute URL.
    pub fn attrs(&self, selector: &str, name: &str) -> Result<Vec<String>> {
        let value = self.eval_json(&format!(
            "[...document.querySelectorAll({s})].filter(e => e.hasAttribute({n})).map(e => \
             ({n} === 'href' || {n} === 'src') ? e[{n}] : e.getAttribute({n}))",
            s = js(selector),
            n = js(name)
        ))?;
        serde_json::from_value(value).context("reading attributes")
    }

    /// Everything that went wrong on the page so far (console errors, uncaught exceptions,
    /// browser log errors).
    pub fn problems(&self) -> Vec<String> {
        self.harvest();
        self.problems.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Fails, listing them, if anything went wrong on the page so far.
    pub fn assert_clean(&self, what: &str) {
        let problems = self.problems();
        assert!(
            problems.is_empty(),
            "{what} ({}) logged errors:\n  {}",
            self.url().unwrap_or_default(),
            problems.join("\n  ")
        );
    }

    /// Every URL the page requested so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.harvest();
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// A PNG of the whole page (up to 8,000 px tall) at `<shots>/<name>.png`; prints the path.
    pub fn screenshot(&self, name: &str) -> Result<PathBuf> {
        let metrics = self.tab.call_method(Cdp::GetLayoutMetrics(None))?;
        let size = metrics.css_content_size;
        let clip = Cdp::Viewport {
            x: 0.0,
            y: 0.0,
            width: size.width.clamp(1.0, 4000.0),
            height: size.height.clamp(1.0, 8000.0),
            scale: 1.0,
        };
        let shot = self.tab.call_method(Cdp::CaptureScreenshot {
            format: Some(Cdp::CaptureScreenshotFormatOption::Png),
            quality: None,
            clip: Some(clip),
            from_surface: Some(true),
            capture_beyond_viewport: Some(true),
            optimize_for_speed: None,
        })?;
        use base64::Engine as _;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot.data)
            .context("decoding the screenshot")?;
        if !png.starts_with(b"\x89PNG\r\n\x1a\n") {
            bail!("the screenshot of {name} is not a PNG");
        }
        let path = self.shots.join(format!("{name}.png"));
        std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
        println!("screenshot: {}", path.display());
        Ok(path)
    }
}

/// `s` as a JavaScript string literal.
pub fn js(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// A `bureau` server (`view`, `play`) running as a child process; killed when dropped.
pub struct Server {
    child: Child,
    /// The URL from its first stdout line.
    pub url: String,
}

impl Server {
    /// Starts `bureau <args>` and reads its first stdout line, which must start with `prefix`
    /// followed by the URL (within `WAIT`).
    pub fn start(args: &[&OsStr], prefix: &str) -> Result<Server> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bureau"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting bureau")?;
        let stdout = child.stdout.take().context("bureau's stdout")?;
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let first = lines.next();
            let _ = tx.send(first);
            // Keep draining so the server never blocks on a full pipe.
            for line in lines {
                match line {
                    Ok(line) => println!("bureau: {line}"),
                    Err(_) => break,
                }
            }
        });
        let mut server = Server {
            child,
            url: String::new(),
        };
        let line = match rx.recv_timeout(WAIT) {
            Ok(Some(Ok(line))) => line,
            Ok(Some(Err(e))) => bail!("reading bureau's first line: {e}"),
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = server.child.wait().ok();
                bail!("bureau {args:?} printed nothing and ended ({status:?})")
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                bail!("bureau {args:?} printed no line within {WAIT:?}")
            }
        };
        let url = line
            .strip_prefix(prefix)
            .ok_or_else(|| anyhow!("bureau's first line is {line:?}, not `{prefix}<url>`"))?
            .trim();
        server.url = url.to_string();
        Ok(server)
    }

    /// The server's URL with `path` (starting with `/`) in place of its path and query.
    pub fn origin(&self) -> String {
        let after_scheme = self.url.find("://").map(|i| i + 3).unwrap_or(0);
        let end = self.url[after_scheme..]
            .find('/')
            .map(|i| after_scheme + i)
            .unwrap_or(self.url.len());
        self.url[..end].to_string()
    }
}

impl Server {
    /// Waits (at most `limit`) for the server to exit by itself.
    pub fn wait_exit(&mut self, limit: Duration) -> Result<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                bail!("bureau did not exit within {limit:?}");
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `bureau <args>` to completion (within `limit`), returning its stdout; fails with its
/// output if it did not exit with one of `ok_codes`.
pub fn bureau(args: &[&OsStr], limit: Duration, ok_codes: &[i32]) -> Result<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bureau"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting bureau")?;
    let mut out = child.stdout.take().context("stdout")?;
    let mut err = child.stderr.take().context("stderr")?;
    let out_thread = thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_thread = thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!("bureau {args:?} took longer than {limit:?}");
        }
        thread::sleep(Duration::from_millis(50));
    };
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    if !status.code().is_some_and(|c| ok_codes.contains(&c)) {
        bail!("bureau {args:?} ended with {status}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    }
    Ok(stdout)
}

/// A tiny HTTP server for the driver's self-check: serves `pages` (path → HTML) on
/// 127.0.0.1 from a thread until the process ends; returns its origin.
pub fn static_server(pages: BTreeMap<&'static str, &'static str>) -> Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let origin = format!("http://{}", listener.local_addr()?);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let pages = pages.clone();
            // One thread per connection: a browser's speculative connection that sends
            // nothing must not hold up the next request.
            thread::spawn(move || serve_one(stream, &pages));
        }
    });
    Ok(origin)
}

fn serve_one(mut stream: std::net::TcpStream, pages: &BTreeMap<&'static str, &'static str>) {
    {
        {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut reader = BufReader::new(match stream.try_clone() {
                Ok(s) => s,
                Err(_) => return,
            });
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                return;
            }
            // Skip the headers.
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                header.clear();
            }
            let path = request_line.split_whitespace().nth(1).unwrap_or("/");
            let (status, body) = match pages.get(path) {
                Some(body) => ("200 OK", *body),
                None => ("404 Not Found", "not found"),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    }
}
