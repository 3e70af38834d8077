//! `bureau view`: the pages served on 127.0.0.1, rendered on request (the overview from the
//! run directories as they are now, so a run still going shows its progress; a trial page
//! only when it is opened).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::ViewError;
use crate::load::{RunData, label_runs, load_run};

#[derive(Clone)]
struct AppState {
    dirs: Arc<Vec<PathBuf>>,
    /// The runs as last loaded (by the overview), for trial pages.
    runs: Arc<Mutex<Arc<Vec<RunData>>>>,
}

impl AppState {
    fn reload(&self) -> Arc<Vec<RunData>> {
        let mut runs: Vec<RunData> = self.dirs.iter().map(|d| load_run(d)).collect();
        label_runs(&mut runs);
        let runs = Arc::new(runs);
        let mut guard = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        *guard = runs.clone();
        runs
    }

    fn last(&self) -> Arc<Vec<RunData>> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The viewer's router over `dirs` (one or several run directories).
pub fn router(dirs: Vec<PathBuf>) -> Router {
    let state = AppState {
        dirs: Arc::new(dirs),
        runs: Arc::new(Mutex::new(Arc::new(Vec::new()))),
    };
    Router::new()
        .route("/", get(overview))
        .route("/index.html", get(overview))
        .route("/trial/{run}/{task}/{agent}/{epoch}", get(trial))
        .fallback(not_found)
        .with_state(state)
}

async fn overview(State(state): State<AppState>) -> Response {
    let page = tokio::task::spawn_blocking(move || {
        let runs = state.reload();
        crate::pages::overview(&runs)
    })
    .await;
    match page {
        Ok(html) => page_response(html),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the overview failed: {e}"),
        )
            .into_response(),
    }
}

async fn trial(
    State(state): State<AppState>,
    UrlPath((run, task, agent, epoch)): UrlPath<(usize, String, String, String)>,
) -> Response {
    let epoch = epoch.strip_suffix(".html").unwrap_or(&epoch).to_string();
    let key = format!("{task}/{agent}/{epoch}");
    let page = tokio::task::spawn_blocking(move || {
        let mut runs = state.last();
        // A trial not seen yet (opened before the overview, or new since): load again.
        if runs.get(run).is_none_or(|r| r.trial(&key).is_none()) {
            runs = state.reload();
        }
        crate::trial::trial_page(runs.get(run)?, &key, "../../../../")
    })
    .await;
    match page {
        Ok(Some(html)) => page_response(html),
        Ok(None) => not_found().await,
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the trial page failed: {e}"),
        )
            .into_response(),
    }
}

fn page_response(html: String) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            // Everything is inline; nothing else may load.
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:",
            ),
        ],
        Html(html),
    )
        .into_response()
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "not found — the viewer serves / and the trial pages linked from it",
    )
        .into_response()
}

/// A bound viewer, not yet serving.
pub struct Viewer {
    listener: tokio::net::TcpListener,
    router: Router,
}

impl Viewer {
    /// Bind 127.0.0.1:`port` (0: a free port) for `dirs`.
    pub async fn bind(dirs: Vec<PathBuf>, port: u16) -> Result<Viewer, ViewError> {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))
            .await
            .map_err(|e| ViewError::Bind { port, source: e })?;
        Ok(Viewer {
            listener,
            router: router(dirs),
        })
    }

    /// The URL the viewer answers on.
    pub fn url(&self) -> Result<String, ViewError> {
        let addr = self
            .listener
            .local_addr()
            .map_err(|e| ViewError::Bind { port: 0, source: e })?;
        Ok(format!("http://{addr}/"))
    }

    /// Serve until the process ends.
    pub async fn serve(self) -> Result<(), ViewError> {
        axum::serve(self.listener, self.router)
            .await
            .map_err(|e| ViewError::Serve(e.to_string()))
    }
}

/// Serve `dirs` on 127.0.0.1:`port` (0: a free port) until the process ends, on a runtime
/// of its own; `announce` gets the URL once the port is bound.
pub fn serve_blocking(
    dirs: Vec<PathBuf>,
    port: u16,
    announce: impl FnOnce(&str),
) -> Result<(), ViewError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| ViewError::Serve(format!("starting the runtime: {e}")))?;
    rt.block_on(async move {
        let viewer = Viewer::bind(dirs, port).await?;
        announce(&viewer.url()?);
        viewer.serve().await
    })
}
