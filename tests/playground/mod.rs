//! Helpers shared by `tests/serve.rs` and `tests/browser.rs`: a `ptxmc
//! serve` child process on a loopback port the system picks, and a small
//! blocking HTTP client (ureq) for its JSON API.

#![allow(dead_code)] // each test file uses a part

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `ptxmc serve`, killed when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The port.
    pub port: u16,
}

impl Server {
    /// Start `ptxmc serve --port 0 ARGS` and wait for its address line.
    pub fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
            .args(["serve", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("ptxmc serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .expect("the address line");
        let base = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .expect("an address")
            .trim_end_matches('/')
            .to_string();
        let port = base.rsplit(':').next().unwrap().parse().unwrap();
        Server { child, base, port }
    }

    /// Send SIGINT (Ctrl-C) and wait for the exit status, at most `limit`.
    pub fn interrupt(mut self, limit: Duration) -> (Option<i32>, String) {
        let pid = self.child.id().to_string();
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .expect("kill runs");
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut out = String::new();
                let _ = self.child.stdout.take().unwrap().read_to_string(&mut out);
                return (status.code(), out);
            }
            if start.elapsed() > limit {
                return (None, String::new());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        // Well past the server's own 60 s limit per question, so that a
        // question that stops at that limit is answered "incomplete"
        // rather than cut off here on a loaded machine.
        .timeout_global(Some(Duration::from_secs(300)))
        .build()
        .into()
}

/// POST `body` (raw) to `path`: the status and the parsed JSON answer.
pub fn post_raw(base: &str, path: &str, body: &str) -> (u16, Value) {
    let mut r = agent()
        .post(&format!("{base}{path}"))
        .header("content-type", "application/json")
        .send(body)
        .expect("an answer");
    let status = r.status().as_u16();
    let text = r.body_mut().read_to_string().expect("a body");
    let v = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
    (status, v)
}

/// POST a JSON value.
pub fn post(base: &str, path: &str, body: &Value) -> (u16, Value) {
    post_raw(base, path, &body.to_string())
}

/// GET `path`: status, content type and body.
pub fn get(base: &str, path: &str) -> (u16, String, String) {
    let mut r = agent()
        .get(&format!("{base}{path}"))
        .call()
        .expect("an answer");
    let ct = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    (
        r.status().as_u16(),
        ct,
        r.body_mut().read_to_string().unwrap(),
    )
}
