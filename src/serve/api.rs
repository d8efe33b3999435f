//! The playground's JSON API as plain functions: a request body in, a
//! status and a JSON body out. No state is kept between requests: a step
//! request carries the test text and the run's choices, and the session is
//! replayed ([`crate::step`]). `docs/playground.md` documents every field.
//!
//! Every computation runs under the server's limits; a request may lower
//! them, never raise them. Nothing here reads or writes a file: a request's
//! `file` is only a name (its extension picks the dialect).

use serde::Deserialize;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

use crate::engine::{EngineChoice, RunOptions};
use crate::explain::axiomatic::Caps;
use crate::explain::enumerate::Limits as ExplainLimits;
use crate::explain::{explain_outcome, pictures};
use crate::ir::Prop;
use crate::limits::Limits;
use crate::litmus::{self, LitmusError, LitmusTest, cond};
use crate::model::Model;
use crate::report::herd;
use crate::step::{self, GoTo, Session, picture};

/// The server's own limits: the most any request may use.
#[derive(Clone, Debug)]
pub struct ServerLimits {
    /// Wall-clock time of one request's computation.
    pub timeout: Duration,
    /// Machine states (or oracle nodes) of one exploration.
    pub max_states: u64,
    /// Resident memory of the process, in bytes.
    pub max_memory: Option<u64>,
    /// The largest loop bound a request may ask for.
    pub max_loop_bound: u32,
    /// The longest history a step request may replay.
    pub max_history: usize,
    /// The nvcc that compiles `.cu` requests (`ptxmc serve --nvcc`); without
    /// one the playground takes kernels as PTX only.
    pub nvcc: Option<std::path::PathBuf>,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            timeout: Duration::from_secs(5),
            max_states: 200_000,
            max_memory: None,
            max_loop_bound: 4,
            max_history: 4096,
            nvcc: None,
        }
    }
}

/// A JSON answer with its HTTP status.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// HTTP status code.
    pub status: u16,
    /// The body.
    pub body: Value,
}

impl Answer {
    fn ok(body: Value) -> Answer {
        Answer { status: 200, body }
    }
    /// A client error: status `status`, `{"error": message}`.
    pub fn error(status: u16, message: impl Into<String>) -> Answer {
        Answer {
            status,
            body: json!({ "error": message.into() }),
        }
    }
    fn parse_error(e: &LitmusError) -> Answer {
        Answer {
            status: 400,
            body: json!({
                "error": e.rendered(),
                "message": e.diagnostic.message(),
                "line": e.line,
                "column": e.column,
            }),
        }
    }
}

/// Options every request that names a test may give.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestRequest {
    /// The test's text.
    test: String,
    /// Its file name (only its extension is used: `.test` is mixedproxy).
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    engine: Option<String>,
    #[serde(default)]
    loop_bound: Option<u32>,
    #[serde(default)]
    timeout: Option<f64>,
    #[serde(default)]
    max_states: Option<u64>,
    #[serde(default)]
    instance: Option<usize>,
    // Step requests.
    #[serde(default)]
    history: Vec<usize>,
    #[serde(default)]
    every_step: Option<bool>,
    #[serde(default)]
    reachable: bool,
    #[serde(default)]
    goal: Option<String>,
    // Explain requests.
    #[serde(default)]
    outcome: Option<String>,
    /// A kernel's launch description (`docs/kernels.md`, "Launch"); without
    /// it, a `/* ptxmc-launch: ... */` comment in the text is the launch.
    #[serde(default)]
    launch: Option<String>,
}

/// A request's test, parsed and admitted, with the limits it runs under.
struct Prepared {
    file: String,
    tests: Vec<LitmusTest>,
    instance: usize,
    model: Model,
    engine: EngineChoice,
    loop_bound: u32,
    limits: Limits,
    deadline: Instant,
}

impl Prepared {
    fn test(&self) -> &LitmusTest {
        &self.tests[self.instance]
    }
}

fn read(body: &[u8]) -> Result<TestRequest, Answer> {
    serde_json::from_slice(body).map_err(|e| Answer::error(400, format!("bad request: {e}")))
}

fn choice<T: clap::ValueEnum>(what: &str, v: Option<&str>) -> Result<Option<T>, Answer> {
    match v {
        None => Ok(None),
        Some(s) => T::from_str(s, true).map(Some).map_err(|_| {
            let names: Vec<String> = T::value_variants()
                .iter()
                .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
                .collect();
            Answer::error(
                400,
                format!("expected {what} {}, found `{s}`", names.join(" or ")),
            )
        }),
    }
}

/// The name launch errors carry when the launch came in the request's
/// `launch` field (the page marks that box, not the editor).
const LAUNCH_FIELD: &str = "launch";

/// A kernel request's test: the PTX text (or, where the server has an nvcc,
/// CUDA C++ compiled by it) lowered under the request's launch, or under the
/// `/* ptxmc-launch: ... */` comment in the text — what `ptxmc kernel`
/// reads (`docs/kernels.md`).
fn kernel(req: &TestRequest, file: &str, server: &ServerLimits) -> Result<LitmusTest, Answer> {
    let given = req.launch.as_deref().filter(|l| !l.trim().is_empty());
    let launch = match given {
        Some(l) => crate::ptx::LaunchText::whole(LAUNCH_FIELD, l),
        None => crate::ptx::launch_in(file, &req.test).ok_or_else(|| {
            let mut a = Answer::error(
                400,
                "expected a launch description (the `launch` field, or a `/* ptxmc-launch: ... */` comment in the text; docs/kernels.md), found none",
            );
            a.body["field"] = json!("launch");
            a
        })?,
    };
    let error = |e: LitmusError| {
        let mut a = Answer::parse_error(&e);
        if given.is_some() && e.path == LAUNCH_FIELD && file != LAUNCH_FIELD {
            a.body["field"] = json!("launch");
        }
        a
    };
    let ptx_text = if file.ends_with(".cu") {
        let Some(nvcc) = &server.nvcc else {
            return Err(Answer::error(
                400,
                format!(
                    "expected PTX (a file name ending in `.ptx`): this server compiles no CUDA C++ (it was started without `--nvcc`); paste what `nvcc -ptx -arch=sm_90a -lineinfo` prints for `{file}`"
                ),
            ));
        };
        crate::ptx::nvcc::compile_text(file, &req.test, nvcc, server.timeout).map_err(error)?
    } else {
        req.test.clone()
    };
    // Named as `ptxmc kernel` names it.
    let shown = if file.ends_with(".cu") {
        format!("{file} (nvcc -ptx)")
    } else {
        file.to_string()
    };
    crate::ptx::load_source(&shown, &ptx_text, &launch).map_err(error)
}

fn prepare(req: &TestRequest, server: &ServerLimits, per_test: bool) -> Result<Prepared, Answer> {
    let file = req
        .file
        .clone()
        .unwrap_or_else(|| "playground.litmus".into());
    if file.len() > 256 || file.contains('\n') {
        return Err(Answer::error(
            400,
            "expected a file name of at most 256 characters on one line",
        ));
    }
    let model: Model = choice("model", req.model.as_deref())?.unwrap_or_default();
    let engine: EngineChoice = choice("engine", req.engine.as_deref())?.unwrap_or_default();
    let loop_bound = req.loop_bound.unwrap_or(2);
    if loop_bound > server.max_loop_bound {
        return Err(Answer::error(
            400,
            format!(
                "expected a loop bound of at most {} (this server's limit), found {loop_bound}",
                server.max_loop_bound
            ),
        ));
    }
    let timeout = match req.timeout {
        Some(t) if t.is_finite() && t > 0.0 => {
            Duration::try_from_secs_f64(t).map_or(server.timeout, |d| d.min(server.timeout))
        }
        Some(t) => {
            return Err(Answer::error(
                400,
                format!("expected a positive timeout in seconds, found {t}"),
            ));
        }
        None => server.timeout,
    };
    let max_states = req
        .max_states
        .map_or(server.max_states, |m| m.min(server.max_states));
    let tests = if crate::ptx::is_kernel_path(std::path::Path::new(&file)) {
        vec![kernel(req, &file, server)?]
    } else {
        litmus::parse_source(&file, &req.test).map_err(|e| Answer::parse_error(&e))?
    };
    for t in &tests {
        model
            .admit(&t.program, &t.spans)
            .map_err(|d| Answer::parse_error(&t.error(d)))?;
    }
    let instance = req.instance.unwrap_or(1);
    if per_test && (instance == 0 || instance > tests.len()) {
        return Err(Answer::error(
            400,
            format!(
                "expected an instance between 1 and {}, found {instance}",
                tests.len()
            ),
        ));
    }
    Ok(Prepared {
        file,
        tests,
        instance: instance.saturating_sub(1),
        model,
        engine,
        loop_bound,
        limits: Limits {
            max_states: Some(max_states),
            timeout: Some(timeout),
            max_memory: server.max_memory,
        },
        deadline: Instant::now() + timeout,
    })
}

/// What a computing endpoint does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// `POST /api/run`.
    Run,
    /// `POST /api/explain`.
    Explain,
    /// `POST /api/step`.
    Step,
}

/// A request that has been read and checked (its JSON, its options, its
/// test parsed and admitted), ready to compute.
pub struct Job {
    endpoint: Endpoint,
    req: TestRequest,
    prepared: Prepared,
}

/// Read and check a request body: cheap (parsing is linear in the capped
/// body), so a malformed request is answered 4xx even when the server is busy.
pub fn check(endpoint: Endpoint, body: &[u8], server: &ServerLimits) -> Result<Job, Answer> {
    let req = read(body)?;
    if endpoint == Endpoint::Step && req.history.len() > server.max_history {
        return Err(Answer::error(
            400,
            format!(
                "expected a history of at most {} steps, found {}",
                server.max_history,
                req.history.len()
            ),
        ));
    }
    let prepared = prepare(&req, server, endpoint != Endpoint::Run)?;
    Ok(Job {
        endpoint,
        req,
        prepared,
    })
}

impl Job {
    /// Compute the answer, within the request's limits.
    pub fn run(self) -> Answer {
        match self.endpoint {
            Endpoint::Run => run(&self.req, &self.prepared),
            Endpoint::Explain => explain(&self.req, &self.prepared),
            Endpoint::Step => step(&self.req, &self.prepared),
        }
    }
}

/// [`check`] then [`Job::run`], for callers without a notion of busy.
pub fn answer(endpoint: Endpoint, body: &[u8], server: &ServerLimits) -> Answer {
    match check(endpoint, body, server) {
        Ok(job) => job.run(),
        Err(a) => a,
    }
}

/// `POST /api/run`: exactly what `ptxmc run --format json FILE` prints.
fn run(req: &TestRequest, p: &Prepared) -> Answer {
    // As `ptxmc run` with the request's options (one worker per request).
    let opts = RunOptions {
        model: p.model,
        engine: p.engine,
        loop_bound: p.loop_bound,
        limits: p.limits,
        jobs: 1,
        progress: false,
        ..RunOptions::default()
    };
    let _ = req;
    Answer::ok(Value::Array(crate::report::run::json_of_tests(
        &p.tests, &opts,
    )))
}

/// An outcome typed by the user: a condition or a final-state line.
fn outcome(t: &LitmusTest, text: &str) -> Result<Prop, Answer> {
    cond::parse_outcome(&t.program, &t.spans, text).map_err(|d| {
        let e = LitmusError::new("outcome", text, d);
        let mut a = Answer::parse_error(&e);
        a.body["field"] = json!("outcome");
        a
    })
}

/// `POST /api/explain`: why an outcome (default: the test's condition) is
/// allowed or forbidden, in words, with the pictures (SVG) of the witness or
/// of each group of rejected candidates.
fn explain(req: &TestRequest, p: &Prepared) -> Answer {
    let t = p.test();
    let (want, goal) = match req.outcome.as_deref() {
        Some(text) => match outcome(t, text) {
            Ok(w) => (w, text.to_string()),
            Err(a) => return a,
        },
        None => {
            let prop = t.program.condition.target();
            let text = herd::proposition(&t.program, &prop);
            (prop, text)
        }
    };
    let limits = ExplainLimits {
        loop_bound: p.loop_bound,
        max_candidates: p.limits.max_states.unwrap_or(u64::MAX),
        deadline: Some(p.deadline),
        barriers: Default::default(),
        fairness: Default::default(),
    };
    let x = explain_outcome(
        t,
        &p.file,
        &want,
        &limits,
        Caps::default(),
        p.limits.max_states.unwrap_or(u64::MAX),
    );
    let pics: Vec<Value> = pictures(&x)
        .into_iter()
        .map(|(title, e)| json!({ "title": title, "svg": crate::report::svg::render(&title, e) }))
        .collect();
    Answer::ok(json!({
        "name": t.program.name,
        "outcome": goal,
        "allowed": x.allowed(),
        "incomplete": x.incomplete(),
        "termination": x.termination,
        "undefined": x.undefined,
        "text": crate::report::explain::text(&x),
        "missing": crate::explain::missing_of(&x),
        "missing_text": crate::report::explain::missing_answer_text(&crate::explain::missing_of(&x)),
        "pictures": pics,
    }))
}

/// `POST /api/step`: replay `history`, then answer with the state, the
/// enabled transitions, the run so far and its replay command; with
/// `"reachable": true` also the outcomes reachable from here, with
/// `"goal": COND` first extend the run by a shortest path to that outcome.
fn step(req: &TestRequest, p: &Prepared) -> Answer {
    // The machine at the width the program's slots need, like `engine::run`'s.
    let answer = match step_at::<u128>(req, p) {
        Err(too) => crate::with_width!(
            too.needed,
            S => step_at::<S>(req, p),
            Err(too)
        ),
        done => done,
    };
    answer.unwrap_or_else(|too| Answer::error(422, too.to_string()))
}

/// [`step`] with event sets of type `S`; `Err` if the program has more
/// event slots than `S` holds.
fn step_at<S: crate::rel::Bits>(
    req: &TestRequest,
    p: &Prepared,
) -> Result<Answer, crate::op::TooManySlots> {
    let t = p.test();
    let options = step::Options {
        loop_bound: p.loop_bound,
        every_step: req.every_step.unwrap_or(true),
        limits: p.limits,
        barriers: Default::default(),
        fairness: Default::default(),
    };
    let variants = match crate::ir::elect::Variants::of(&t.program) {
        Ok(v) => v,
        Err(e) => return Ok(Answer::error(400, e.to_string())),
    };
    let mut s = Session::<S>::build(&variants, options)?;
    if let Err(crate::op::trace::TraceError::BadChoice {
        step,
        choice,
        available,
    }) = s.replay(&req.history)
    {
        return Ok(Answer::error(
            400,
            format!("expected a choice below {available} at step {step}, found {choice}"),
        ));
    }
    let mut goto = Value::Null;
    if let Some(goal) = &req.goal {
        let (answer, message) = if goal == "hang" {
            let answer = s.go_to_hang();
            let message = step::text::go_to_hang(&s, &answer);
            (answer, message)
        } else if goal == "undefined" {
            // Worded below, once the run has taken the path.
            (s.go_to_undefined(), String::new())
        } else {
            let want = match outcome(t, goal) {
                Ok(w) => w,
                Err(a) => return Ok(a),
            };
            let answer = s.go_to(&want);
            let message = step::text::go_to(&s, goal, &answer);
            (answer, message)
        };
        let (reached, taken, since, incomplete) = match &answer {
            GoTo::Path(path) => (true, path.len(), None, None),
            GoTo::Unreachable { since } => (false, 0, *since, None),
            GoTo::Incomplete(e) => (false, 0, None, Some(e.to_string())),
        };
        if let GoTo::Path(path) = &answer {
            // Found from this very state, so every choice exists.
            let _ = s.replay(path);
        }
        let message = if goal == "undefined" {
            let line = s
                .undefined()
                .map(|u| crate::report::ub::line(&crate::report::ub::of(t, &u)));
            step::text::go_to_undefined(&s, &answer, line.as_deref())
        } else {
            message
        };
        goto = json!({
            "goal": goal,
            "reached": reached,
            "steps_taken": taken,
            "since": since,
            "forbidden": matches!(answer, GoTo::Unreachable { since: None }),
            "incomplete": incomplete,
            "message": message.trim_end(),
        });
    }
    let m = s.machine();
    let state_text = |o: &crate::outcome::State| herd::state(&m.program, &m.columns, o);
    let reachable = if req.reachable {
        let r = s.reachable();
        let cond = &t.program.condition.prop;
        let list: Vec<Value> = r
            .outcomes
            .iter()
            .map(|o| json!({ "state": state_text(o), "condition": s.satisfies(o, cond) }))
            .collect();
        json!({
            "outcomes": list,
            "complete": r.incomplete.is_none(),
            "incomplete_reason": r.incomplete.map(|e| e.to_string()),
            "bound_hit": r.bound_hit,
        })
    } else {
        Value::Null
    };
    let final_states = s
        .final_states()
        .map(|v| v.iter().map(state_text).collect::<Vec<_>>());
    // Whether the program can hang, as `run` says, when a session starts
    // (no history): the Step view says it up front. Not on every click: it
    // costs a run of the engines and does not depend on the history.
    // Undefined behaviour likewise, from the same run.
    let (termination, undefined) = if req.history.is_empty() && req.goal.is_none() {
        let limits = ExplainLimits {
            loop_bound: p.loop_bound,
            deadline: Some(p.deadline),
            ..ExplainLimits::default()
        };
        let (note, ub) = crate::explain::TerminationNote::with_undefined(
            &t.program,
            &limits,
            p.limits.max_states.unwrap_or(u64::MAX),
        );
        (
            serde_json::to_value(note).unwrap_or_default(),
            serde_json::to_value(ub.map(|u| crate::report::ub::of(t, &u))).unwrap_or_default(),
        )
    } else {
        (Value::Null, Value::Null)
    };
    Ok(Answer::ok(json!({
        "name": t.program.name,
        "file": p.file,
        "step": s.steps().len(),
        "history": s.history(),
        "every_step": options.every_step,
        "steps": s.steps(),
        "picture": picture::picture_at(m, s.current(), Some(&crate::explain::words::Positions::of(t))),
        "transitions": s.transitions(),
        "over": s.is_final(),
        "hang": s.hang().map(|h| json!({
            "kind": h.kind().as_str(),
            "why": crate::report::hang::sentence(&t.program, &h),
        })),
        "final_states": final_states,
        "follow": format!("ptxmc trace {} {}", shell_word(&p.file), s.follow_args()),
        "reachable": reachable,
        "goto": goto,
        "termination": termination,
        "undefined": undefined,
        "undefined_here": s.undefined().map(|u| crate::report::ub::of(t, &u)),
    })))
}

/// `s` quoted for a POSIX shell when it needs it.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./+@:,=".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `GET /api/library`: the embedded tests, grouped by directory, then the
/// corpus kernels (group `kernels`); `cuda`: whether this server compiles
/// `.cu` requests (`ptxmc serve --nvcc`).
pub fn library(cuda: bool) -> Answer {
    let files: Vec<Value> = super::library::FILES
        .iter()
        .map(|(path, _)| *path)
        .chain(super::library::KERNELS.iter().map(|(path, _, _)| *path))
        .map(|path| {
            let (group, name) = path.rsplit_once('/').unwrap_or(("", path));
            json!({ "path": path, "group": group, "name": name })
        })
        .collect();
    Answer::ok(json!({ "files": files, "cuda": cuda }))
}

/// `GET /api/library/file?path=P`: one embedded test's text; for a corpus
/// kernel also `launch`, the launch of its `.cu`'s `ptxmc-launch` comment.
pub fn library_file(path: &str) -> Answer {
    if let Some((p, text)) = super::library::FILES.iter().find(|(p, _)| *p == path) {
        return Answer::ok(json!({ "path": p, "text": text }));
    }
    match super::library::KERNELS.iter().find(|(p, _, _)| *p == path) {
        Some((p, text, cu)) => {
            let launch = crate::ptx::launch::from_cuda_comment(cu).map(|(_, l)| l.trim());
            Answer::ok(json!({ "path": p, "text": text, "launch": launch }))
        }
        None => Answer::error(404, format!("no test `{path}` in the library")),
    }
}
