//! Latency of the playground's API on the litmus library, over HTTP on the
//! loopback interface: `POST /api/run` (both engines) and `POST /api/step`
//! for one step (the test replayed with a one-choice history), one client at
//! a time. Prints the median and the worst of each, and the page's size.
//!
//! `cargo run --release --example playground_latency` (figures in
//! `docs/playground.md`).

use serde_json::json;
use std::time::{Duration, Instant};

fn post(agent: &ureq::Agent, url: &str, body: &serde_json::Value) -> (u16, Duration) {
    let start = Instant::now();
    let mut r = agent
        .post(url)
        .header("content-type", "application/json")
        .send(body.to_string())
        .expect("an answer");
    let status = r.status().as_u16();
    let _ = r.body_mut().read_to_string().expect("a body");
    (status, start.elapsed())
}

fn summary(name: &str, mut times: Vec<(Duration, &str)>) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let median = times[times.len() / 2].0;
    let p90 = times[times.len() * 9 / 10].0;
    let (worst, which) = times[times.len() - 1];
    println!(
        "{name}: {} requests, median {:.2} ms, 90th percentile {:.2} ms, worst {:.1} ms ({which})",
        times.len(),
        ms(median),
        ms(p90),
        ms(worst)
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let config = ptxmc::serve::Config::default();
    runtime.spawn(ptxmc::serve::serve(
        listener,
        config.clone(),
        std::future::pending::<()>(),
    ));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let base = format!("http://{addr}");
    let tests: Vec<&(&str, &str)> = ptxmc::serve::library::FILES
        .iter()
        .filter(|(p, _)| p.starts_with("litmus/"))
        .collect();
    let mut run = Vec::new();
    let mut step = Vec::new();
    for (path, text) in &tests {
        let (s, d) = post(
            &agent,
            &format!("{base}/api/run"),
            &json!({"test": text, "file": path}),
        );
        assert_eq!(s, 200, "{path}");
        run.push((d, *path));
        let (s, d) = post(
            &agent,
            &format!("{base}/api/step"),
            &json!({"test": text, "file": path, "history": [0]}),
        );
        assert_eq!(s, 200, "{path}");
        step.push((d, *path));
    }
    println!(
        "{} library tests, server defaults (timeout {:?}, {} states)",
        tests.len(),
        config.limits.timeout,
        config.limits.max_states
    );
    summary("POST /api/run", run);
    summary("POST /api/step (one step)", step);
    println!(
        "page: {} bytes (HTML, CSS and JavaScript, uncompressed)",
        ptxmc::serve::assets::page_bytes()
    );
}
