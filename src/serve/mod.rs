//! `ptxmc serve`: the playground, a page and a JSON API over HTTP (axum on
//! tokio), safe to leave running for a class.
//!
//! * Every asset is embedded in the binary ([`assets`], [`library`]); the
//!   server never reads or writes a file a request names.
//! * Every computation runs under the server's limits ([`api::ServerLimits`]);
//!   a request may lower them, not raise them.
//! * Request bodies are capped ([`Config::max_body`]); at most
//!   [`Config::max_running`] computations run at once and any more are
//!   answered `503` with a JSON "busy" error at once (no queue that grows).
//! * A malformed request gets a 4xx with a JSON `{"error": ...}`; a panic in
//!   a computation is caught and answered `500` with a JSON error, never a
//!   backtrace.
//! * The server is stateless: a step request carries the whole run.

pub mod api;
pub mod assets;
pub mod library;

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Semaphore;

use api::{Answer, Endpoint, ServerLimits};

/// How the server runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Limits of each computation.
    pub limits: ServerLimits,
    /// The largest request body, in bytes.
    pub max_body: usize,
    /// How many computations may run at once.
    pub max_running: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            limits: ServerLimits::default(),
            max_body: 256 << 10,
            max_running: std::thread::available_parallelism().map_or(2, |n| n.get()),
        }
    }
}

struct Shared {
    config: Config,
    running: Arc<Semaphore>,
}

type AppState = Arc<Shared>;

/// The playground's routes.
pub fn router(config: Config) -> Router {
    let cuda = config.limits.nvcc.is_some();
    let state = Arc::new(Shared {
        running: Arc::new(Semaphore::new(config.max_running.max(1))),
        config,
    });
    Router::new()
        .route("/", get(|| async { asset("index.html") }))
        .route("/app.js", get(|| async { asset("app.js") }))
        .route("/style.css", get(|| async { asset("style.css") }))
        .route(
            "/api/library",
            get(move || async move { json(api::library(cuda)) }),
        )
        .route("/api/library/file", get(library_file))
        .route("/api/run", post(|s, b| compute(s, b, Endpoint::Run)))
        .route(
            "/api/explain",
            post(|s, b| compute(s, b, Endpoint::Explain)),
        )
        .route("/api/step", post(|s, b| compute(s, b, Endpoint::Step)))
        .fallback(|| async { json(Answer::error(404, "no such page or API endpoint")) })
        .method_not_allowed_fallback(|| async {
            json(Answer::error(
                405,
                "method not allowed (the API's computations are POST requests)",
            ))
        })
        .with_state(state)
}

fn json(a: Answer) -> Response {
    let status = StatusCode::from_u16(a.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut r = (status, a.body.to_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn asset(name: &str) -> Response {
    match assets::get(name) {
        Some((mime, body)) => {
            let mut r = body.into_response();
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
            r
        }
        None => json(Answer::error(404, "no such asset")),
    }
}

async fn library_file(Query(q): Query<HashMap<String, String>>) -> Response {
    match q.get("path") {
        Some(p) => json(api::library_file(p)),
        None => json(Answer::error(
            400,
            "expected ?path=... naming a library test",
        )),
    }
}

/// Read the body (capped) and check the request, then take a running slot
/// or answer busy, and compute on a blocking thread, catching panics.
async fn compute(State(s): State<AppState>, body: Body, endpoint: Endpoint) -> Response {
    let max = s.config.max_body;
    let bytes = match read_body(body, max).await {
        Ok(b) => b,
        Err(a) => return json(a),
    };
    let limits = &s.config.limits;
    let job = match std::panic::catch_unwind(|| api::check(endpoint, &bytes, limits)) {
        Ok(Ok(job)) => job,
        Ok(Err(a)) => return json(a),
        Err(_) => return internal_error(),
    };
    let Ok(permit) = s.running.clone().try_acquire_owned() else {
        return json(Answer::error(
            503,
            format!(
                "busy: {} computations are running; try again in a moment",
                s.config.max_running
            ),
        ));
    };
    let answer = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job.run()))
    })
    .await;
    match answer {
        Ok(Ok(a)) => json(a),
        _ => internal_error(),
    }
}

/// How much of a too-large body is read (and dropped) before the answer, so
/// that the client, still sending, reads the 413 instead of a reset connection.
const DRAIN: usize = 16 << 20;

/// The request body, at most `max` bytes; a longer one is drained (up to
/// [`DRAIN`]) and answered 413.
async fn read_body(mut body: Body, max: usize) -> Result<Vec<u8>, Answer> {
    use http_body_util::BodyExt;
    let mut buf = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(Answer::error(400, "the request body could not be read"));
        };
        if let Ok(data) = frame.into_data() {
            seen = seen.saturating_add(data.len());
            if seen <= max {
                buf.extend_from_slice(&data);
            } else if seen > DRAIN {
                break;
            }
        }
    }
    if seen > max {
        return Err(Answer::error(
            413,
            format!("request body too large (this server takes at most {max} bytes)"),
        ));
    }
    Ok(buf)
}

fn internal_error() -> Response {
    json(Answer::error(
        500,
        "internal error: the computation failed (please report the test)",
    ))
}

/// Serve the playground on `listener` until `shutdown` completes; requests
/// in flight are finished first.
pub async fn serve(
    listener: tokio::net::TcpListener,
    config: Config,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(config))
        .with_graceful_shutdown(shutdown)
        .await
}
