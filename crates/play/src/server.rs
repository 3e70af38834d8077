//! The web app: axum on 127.0.0.1, a session token on every request, server-rendered pages,
//! plain forms that POST and redirect.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Multipart, Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use base64::Engine;
use bureau_core::tool::ToolOutcome;
use minijinja::Environment;
use serde_json::{Value, json};

use crate::PlayError;
use crate::hub::{Hub, Phase};
use crate::schema::{FormError, args_from_form};
use crate::views;

/// The largest upload (a text file written with `files_write`).
const MAX_UPLOAD: usize = 8 * 1024 * 1024;
/// The largest form.
const MAX_FORM: usize = 10 * 1024 * 1024;

struct App {
    hub: Arc<Hub>,
    env: Environment<'static>,
    token: String,
    cookie: String,
    origin: String,
    out: PathBuf,
}

/// The running web app.
pub struct Server {
    port: u16,
    token: String,
    stop: std::sync::Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
    thread: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
}

fn new_token() -> Result<String, PlayError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| {
        PlayError::Config(format!(
            "no randomness for the session token: {e} — the system's random source is unavailable"
        ))
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Server {
    pub fn start(hub: Arc<Hub>, port: Option<u16>, out: PathBuf) -> Result<Server, PlayError> {
        let want = port.unwrap_or(0);
        let listener = std::net::TcpListener::bind(("127.0.0.1", want))
            .map_err(|source| PlayError::Bind { port: want, source })?;
        listener
            .set_nonblocking(true)
            .map_err(|source| PlayError::Bind { port: want, source })?;
        let port = listener
            .local_addr()
            .map_err(|source| PlayError::Bind { port: want, source })?
            .port();
        let token = new_token()?;
        let app = Arc::new(App {
            hub,
            env: views::environment(),
            token: token.clone(),
            cookie: format!("bureau_play_{port}"),
            origin: format!("http://127.0.0.1:{port}"),
            out,
        });
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| PlayError::Config(format!("starting the web app: {e}")))?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let router = router(app);
        let listener = {
            let _guard = runtime.enter();
            tokio::net::TcpListener::from_std(listener)
                .map_err(|source| PlayError::Bind { port, source })?
        };
        let thread = std::thread::Builder::new()
            .name("bureau-play-web".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let served = axum::serve(listener, router)
                        .with_graceful_shutdown(async move {
                            let _ = rx.await;
                        })
                        .await;
                    if let Err(e) = served {
                        eprintln!("bureau play: the web app stopped: {e}");
                    }
                });
            })
            .map_err(|e| PlayError::Config(format!("starting the web app: {e}")))?;
        Ok(Server {
            port,
            token,
            stop: std::sync::Mutex::new(Some(tx)),
            thread: std::sync::Mutex::new(Some(thread)),
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/?token={}", self.port, self.token)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    /// Stop serving and wait for the web app's thread.
    pub fn stop(&self) {
        if let Some(tx) = crate::hub::lock(&self.stop).take() {
            let _ = tx.send(());
        }
        if let Some(t) = crate::hub::lock(&self.thread).take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(home))
        .route("/inbox", get(|s| show(s, "inbox")))
        .route("/calendar", get(|s| show(s, "calendar")))
        .route("/files", get(|s| show(s, "files")))
        .route("/chat", get(|s| show(s, "chat")))
        .route("/tools", get(|s| show(s, "tools")))
        .route("/tools/{name}", get(tool_page))
        .route("/files/download", get(download))
        .route("/status", get(status))
        .route("/act/{tool}", post(act))
        .route("/upload", post(upload))
        .route("/end", post(end))
        .route("/close", post(close))
        .layer(DefaultBodyLimit::max(MAX_FORM))
        .layer(middleware::from_fn_with_state(app.clone(), guard))
        .with_state(app)
}

/// Constant-time comparison of the token.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn cookie_of<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// Every request: the session token (query or cookie) or 401; a POST from another origin is
/// refused; the answers are never cached and leak no referrer to another site.
async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let by_query = req.uri().query().is_some_and(|q| {
        form_urlencoded::parse(q.as_bytes()).any(|(k, v)| k == "token" && same(&v, &app.token))
    });
    let by_cookie = cookie_of(req.headers(), &app.cookie).is_some_and(|t| same(t, &app.token));
    if !by_query && !by_cookie {
        return (
            StatusCode::UNAUTHORIZED,
            "401: this play needs its session token — open the URL `bureau play` printed (it ends in ?token=...)\n",
        )
            .into_response();
    }
    if req.method() == Method::POST
        && let Some(origin) = req.headers().get(header::ORIGIN)
        && origin.as_bytes() != app.origin.as_bytes()
    {
        return (
            StatusCode::FORBIDDEN,
            "403: a form from another site was refused\n",
        )
            .into_response();
    }
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    if by_query
        && let Ok(v) = HeaderValue::from_str(&format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict",
            app.cookie, app.token
        ))
    {
        h.append(header::SET_COOKIE, v);
    }
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; img-src data:; media-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        ),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // `same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null`
    // with every form POST, which the origin check above refuses (found by
    // crates/cli/tests/browser.rs: every button of the play answered 403).
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    resp
}

fn render(app: &App, template: &str, ctx: Value) -> Response {
    match app
        .env
        .get_template(template)
        .and_then(|t| t.render(views::to_template(&ctx)))
    {
        Ok(html) => Html(html).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("500: the page {template} could not be rendered: {e:#}\n"),
        )
            .into_response(),
    }
}

/// A page: the final page once the trial is written, a waiting page between turns.
fn page(app: &App, name: &str, tool: Option<&str>) -> Response {
    let mut s = app.hub.lock();
    let mut ctx = views::base(&mut s, name);
    let template = match &s.phase {
        _ if s.closed => "closed.html",
        Phase::Finished => {
            ctx.insert("final".into(), json!(s.final_view));
            "final.html"
        }
        Phase::Waiting | Phase::Failed(_) => "waiting.html",
        // "End my day" was pressed: the run loop is closing the turn.
        Phase::Turn if s.end.is_some() => {
            ctx.insert("phase".into(), json!("waiting"));
            "waiting.html"
        }
        Phase::Turn => {
            let Some(extra) = views::page(&s, name, tool) else {
                return (StatusCode::NOT_FOUND, "404: no such page or tool\n").into_response();
            };
            ctx.extend(extra);
            match name {
                "home" => "home.html",
                "inbox" => "inbox.html",
                "calendar" => "calendar.html",
                "files" => "files.html",
                "chat" => "chat.html",
                "tools" => "tools.html",
                _ => "tool.html",
            }
        }
    };
    ctx.insert("run_dir".into(), json!(app.out.display().to_string()));
    drop(s);
    render(app, template, json!(ctx))
}

async fn home(State(app): State<Arc<App>>) -> Response {
    page(&app, "home", None)
}

async fn show(State(app): State<Arc<App>>, name: &'static str) -> Response {
    page(&app, name, None)
}

async fn tool_page(State(app): State<Arc<App>>, Path(name): Path<String>) -> Response {
    page(&app, "tool", Some(&name))
}

/// The play's state for scripts: phase, turn, calls.
async fn status(State(app): State<Arc<App>>) -> Response {
    let s = app.hub.lock();
    let phase = match &s.phase {
        // "End my day" was pressed: the turn is closing.
        Phase::Turn if s.end.is_some() => "waiting",
        Phase::Waiting => "waiting",
        Phase::Turn => "turn",
        Phase::Finished => "finished",
        Phase::Failed(_) => "failed",
    };
    let body = json!({
        "phase": phase,
        "turn": s.turn.as_ref().map(|t| t.index),
        "round": s.turn.as_ref().map(|t| t.round),
        "turns": s.task.turns,
        "calls": s.session.as_ref().map(|x| x.calls_made()),
        "closed": s.closed,
        "final": s.final_view,
    });
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        serde_json::to_string(&body).unwrap_or_default(),
    )
        .into_response()
}

/// Where a form goes back to: a path of this app, else the home page.
fn back_to(pairs: &[(String, String)]) -> String {
    let back = pairs
        .iter()
        .rev()
        .find(|(k, _)| k == "_back")
        .map(|(_, v)| v.as_str())
        .unwrap_or("/");
    let safe = back.starts_with('/')
        && !back.starts_with("//")
        && back.len() < 512
        && back
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/-_.?=&%".contains(c));
    if safe { back.to_string() } else { "/".into() }
}

fn notice(app: &App, text: String) {
    app.hub.lock().notice = Some(text);
}

/// A tool call from a form: the fields are the tool's arguments (by its schema).
async fn act(State(app): State<Arc<App>>, Path(tool): Path<String>, body: Bytes) -> Response {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let back = back_to(&pairs);
    let schema = app
        .hub
        .lock()
        .specs
        .iter()
        .find(|t| t.name == tool)
        .map(|t| t.input_schema.clone());
    let Some(schema) = schema else {
        notice(
            &app,
            format!("`{tool}` is not a tool of this office (nothing was called)"),
        );
        return Redirect::to(&back).into_response();
    };
    match args_from_form(&schema, &pairs) {
        Ok(args) => call(&app, tool, args).await,
        Err(FormError(why)) => notice(&app, format!("{tool}: {why}")),
    }
    Redirect::to(&back).into_response()
}

async fn call(app: &Arc<App>, tool: String, args: Value) {
    let hub = app.hub.clone();
    let done = tokio::task::spawn_blocking(move || hub.call(&tool, args)).await;
    match done {
        Ok(Ok(_)) => {}
        Ok(Err(why)) => notice(app, why),
        Err(e) => notice(app, format!("the call failed: {e}")),
    }
}

/// Upload a text file into the workspace (`files_write`).
async fn upload(State(app): State<Arc<App>>, mut form: Multipart) -> Response {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut file: Option<(String, Vec<u8>)> = None;
    loop {
        let field = match form.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                notice(&app, format!("the upload could not be read: {e}"));
                return Redirect::to("/files").into_response();
            }
        };
        let name = field.name().unwrap_or_default().to_string();
        if name == "file" {
            let filename = field.file_name().unwrap_or_default().to_string();
            match field.bytes().await {
                Ok(b) if b.len() <= MAX_UPLOAD => file = Some((filename, b.to_vec())),
                Ok(_) => {
                    notice(
                        &app,
                        format!(
                            "the file is over {} MiB (nothing was written)",
                            MAX_UPLOAD >> 20
                        ),
                    );
                    return Redirect::to("/files").into_response();
                }
                Err(e) => {
                    notice(&app, format!("the upload could not be read: {e}"));
                    return Redirect::to("/files").into_response();
                }
            }
        } else if let Ok(text) = field.text().await {
            pairs.push((name, text));
        }
    }
    let back = back_to(&pairs);
    let Some((filename, bytes)) = file.filter(|(n, _)| !n.is_empty()) else {
        notice(&app, "choose a file to upload (nothing was written)".into());
        return Redirect::to(&back).into_response();
    };
    let Ok(content) = String::from_utf8(bytes) else {
        notice(
            &app,
            format!(
                "`{filename}` is not a text file: the office's files_write tool writes text only, as for agents (nothing was written)"
            ),
        );
        return Redirect::to(&back).into_response();
    };
    let base = std::path::Path::new(&filename)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or(filename);
    let dir = pairs
        .iter()
        .rev()
        .find(|(k, _)| k == "path")
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    let path = if dir.is_empty() {
        base
    } else if dir.ends_with('/') {
        format!("{dir}{base}")
    } else {
        dir
    };
    call(
        &app,
        "files_write".into(),
        json!({"path": path, "content": content}),
    )
    .await;
    Redirect::to(&back).into_response()
}

/// Download a file as the office showed it: the last `files_read` of that path (its picture,
/// or its text rendering).
async fn download(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Response {
    let path = query
        .as_deref()
        .and_then(|q| {
            form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k == "path")
                .map(|(_, v)| v.into_owned())
        })
        .unwrap_or_default();
    let read = app.hub.lock().results.get("files_read").cloned();
    let Some(read) = read.filter(|c| c.args.get("path").and_then(Value::as_str) == Some(&path))
    else {
        return (
            StatusCode::NOT_FOUND,
            "404: open the file first (Files → Open): a download gives what the office showed you\n",
        )
            .into_response();
    };
    let ToolOutcome::Ok { value, media } = &read.outcome else {
        return (StatusCode::NOT_FOUND, "404: the file could not be opened\n").into_response();
    };
    let name: String = path
        .rsplit('/')
        .next()
        .unwrap_or("file")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".-_".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let disposition = |n: &str| format!("attachment; filename=\"{n}\"");
    if let Some(m) = media.first()
        && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(&m.data)
    {
        let mime = HeaderValue::from_str(&m.mime_type)
            .unwrap_or(HeaderValue::from_static("application/octet-stream"));
        return (
            [
                (header::CONTENT_TYPE, mime),
                (
                    header::CONTENT_DISPOSITION,
                    HeaderValue::from_str(&disposition(&name))
                        .unwrap_or(HeaderValue::from_static("attachment")),
                ),
            ],
            bytes,
        )
            .into_response();
    }
    let text = value
        .get("text")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| serde_json::to_string_pretty(value).unwrap_or_default());
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            ),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_str(&disposition(&format!("{name}.txt")))
                    .unwrap_or(HeaderValue::from_static("attachment")),
            ),
        ],
        text,
    )
        .into_response()
}

/// "End my day" / "Finish the task", with the person's optional note.
async fn end(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let field = |name: &str| {
        form_urlencoded::parse(&body)
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    let note = field("note")
        .map(|v| v.replace("\r\n", "\n"))
        .unwrap_or_default();
    let number = |name: &str| field(name).and_then(|v| v.trim().parse::<u32>().ok());
    let which = number("turn").map(|t| (t, number("round").unwrap_or(0)));
    if let Err(why) = app.hub.end_turn(note, which) {
        notice(&app, why);
    }
    Redirect::to("/").into_response()
}

/// "Close": the play ends (only once the trial is written).
async fn close(State(app): State<Arc<App>>) -> Response {
    let finished = matches!(app.hub.lock().phase, Phase::Finished | Phase::Failed(_));
    if !finished {
        notice(
            &app,
            "finish the task first: Close ends the play once it is scored".into(),
        );
        return Redirect::to("/").into_response();
    }
    app.hub.close();
    page(&app, "closed", None)
}
