//! The playground in a real browser: headless Chromium driven through
//! WebDriver (Debian's `chromium` and `chromium-driver`, which `.ci/run`
//! installs). Loads the page, picks MP from the menu, runs it, opens the
//! picture, steps to the weak outcome of an allowed test by clicking
//! transitions, undoes, goes to an outcome, opens a share link in a fresh
//! page and finds the same state; a parse error is shown at its line; a
//! hanging test shows its hang and steps into it; a corpus kernel runs with
//! its launch, and a launch error marks the Launch box.
//!
//! Without Chromium the test is skipped with a loud message, unless `CI` is
//! set: then it fails. `PTXMC_SCREENSHOTS=DIR` saves the page's main views
//! there (`docs/img` is where the committed ones live:
//! `PTXMC_SCREENSHOTS=docs/img cargo test --release --test browser`).

mod playground;

use fantoccini::{Client, ClientBuilder, Locator};
use playground::{Server, post};

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const WAIT: Duration = Duration::from_secs(30);

/// The driver, killed when dropped.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// chromedriver on a free loopback port, once it accepts connections.
fn start_driver() -> (Driver, String) {
    let port = free_port();
    let child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < WAIT, "chromedriver does not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    (Driver(child), format!("http://127.0.0.1:{port}"))
}

async fn browser(driver: &str, profile: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": CHROMIUM,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                "--hide-scrollbars", "--window-size=1400,1000",
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(driver)
        .await
        .expect("a browser session")
}

/// Wait until the element `css` exists and its text contains `want`.
async fn wait_text(c: &Client, css: &str, want: &str) -> String {
    let start = Instant::now();
    loop {
        if let Ok(e) = c.find(Locator::Css(css)).await {
            if let Ok(t) = e.text().await {
                if t.contains(want) {
                    return t;
                }
                assert!(
                    start.elapsed() < WAIT,
                    "`{css}` reads `{t}`, never `{want}`"
                );
            }
        }
        assert!(start.elapsed() < WAIT, "no `{css}` containing `{want}`");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Wait until `css` no longer exists.
async fn wait_gone(c: &Client, css: &str) {
    let start = Instant::now();
    while c.find(Locator::Css(css)).await.is_ok() {
        assert!(start.elapsed() < WAIT, "`{css}` stays");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Click `css` once it exists; again if the page re-rendered it in between
/// (a stale element).
async fn click(c: &Client, css: &str) {
    let start = Instant::now();
    loop {
        let err = match c.find(Locator::Css(css)).await {
            Ok(e) => match e.click().await {
                Ok(()) => return,
                Err(e) => e.to_string(),
            },
            Err(e) => e.to_string(),
        };
        assert!(start.elapsed() < WAIT, "`{css}` cannot be clicked: {err}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn value(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default()
}

async fn pick(c: &Client, path: &str) {
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Css(&format!("#library option[value='{path}']")))
        .await
        .expect("the library menu lists the test");
    c.find(Locator::Css("#library"))
        .await
        .unwrap()
        .select_by_value(path)
        .await
        .unwrap();
    // The editor shows the test once it is loaded.
    let start = Instant::now();
    while value(c, "#file").await != path {
        assert!(start.elapsed() < WAIT, "{path} never loads");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn screenshot(c: &Client, name: &str) {
    let Some(dir) = std::env::var_os("PTXMC_SCREENSHOTS") else {
        return;
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    // The whole page, from the top: the window as tall as the page.
    let height = c
        .execute(
            "window.scrollTo(0, 0); return document.documentElement.scrollHeight;",
            vec![],
        )
        .await
        .unwrap()
        .as_u64()
        .unwrap_or(1000)
        .saturating_add(200)
        .clamp(900, 1800);
    c.set_window_size(1400, height as u32).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let png = c.screenshot().await.expect("a screenshot");
    std::fs::write(dir.join(name), png).unwrap();
    c.set_window_size(1400, 1000).await.unwrap();
}

fn chromium_present() -> bool {
    if Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists() {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "CI is set but {CHROMIUM} or {CHROMEDRIVER} is missing: .ci/run installs chromium and chromium-driver"
        );
    }
    eprintln!(
        "\n!!! SKIPPED: the browser tests need Debian's chromium and chromium-driver \
         ({CHROMIUM}, {CHROMEDRIVER}); install them with `apt-get install chromium chromium-driver`.\n"
    );
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_playground_in_a_browser() {
    if !chromium_present() {
        return;
    }
    let server = Server::start(&["--timeout", "20"]);
    let (_driver, url) = start_driver();
    let profile = std::env::temp_dir().join(format!("ptxmc-browser-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let c = browser(&url, &profile).await;
    // On its own task, so that a failed check still closes the browser.
    let outcome = tokio::spawn(session(c.clone(), server.base.clone())).await;
    let _ = c.close().await;
    let _ = std::fs::remove_dir_all(&profile);
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

async fn session(client: Client, base: String) {
    let c = &client;
    let base = &base;
    c.goto(&format!("{base}/")).await.unwrap();

    // Run: pick MP from the menu; the outcome table and the verdict.
    pick(c, "litmus/mp/MP+rel+acq.gpu.litmus").await;
    // Neutral: whether the condition holds is no error.
    let verdict = wait_text(c, "#verdict.neutral", "exists (1:r0=1 /\\ 1:r1=0)").await;
    assert!(verdict.contains("does not hold: the model forbids the outcome (0 of 3 final states satisfy its proposition)"), "{verdict}");
    let rows = c.find_all(Locator::Css("table.outcomes tr")).await.unwrap();
    assert_eq!(rows.len(), 4, "a header and three final states");
    let table = c
        .find(Locator::Css("table.outcomes"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for row in ["0 0 1 1", "0 1 1 1", "1 1 1 1"] {
        assert!(table.contains(row), "{table}");
    }
    // The picture of the forbidden outcome's candidate, with its cycle.
    click(c, "#explain-condition").await;
    wait_text(c, "#explanation .picture h3", "MP+rel+acq.gpu-candidate1").await;
    let why = wait_text(c, "#explanation pre", "is forbidden").await;
    assert!(why.contains("Causality"), "{why}");
    assert!(
        c.find(Locator::Css("#explanation .picture svg"))
            .await
            .is_ok()
    );
    screenshot(c, "playground-run.png").await;

    // Step: an allowed weak outcome, reached by clicking transitions.
    let file = "litmus/mp/MP+rlx+rlx.gpu.litmus";
    pick(c, file).await;
    wait_text(c, "#verdict", "holds: the outcome is allowed").await;
    click(c, "#tab-step").await;
    wait_text(c, "#step-status", "step 0").await;
    let text =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    let (status, path) = post(
        base,
        "/api/step",
        &json!({"test": text, "file": file, "goal": "1:r0=1 /\\ 1:r1=0"}),
    );
    assert_eq!(status, 200);
    let choices: Vec<u64> = path["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert!(choices.len() >= 4, "{choices:?}");
    for (k, choice) in choices.iter().enumerate() {
        click(c, &format!("button.transition[data-index='{choice}']")).await;
        wait_text(c, "#step-status", &format!("step {}", k + 1)).await;
        if k + 2 == choices.len() {
            screenshot(c, "playground-step.png").await;
        }
    }
    let fin = wait_text(c, "#final-state", "Final state: ").await;
    assert!(fin.contains("1:r0=1; 1:r1=0;"), "{fin}");
    let follow = value(c, "#follow").await;
    let list: Vec<String> = choices.iter().map(u64::to_string).collect();
    assert_eq!(
        follow,
        format!(
            "ptxmc trace {file} --follow {} --every-step",
            list.join(",")
        )
    );
    // Undo: back one step, the transitions are there again.
    click(c, "#undo").await;
    wait_text(c, "#step-status", &format!("step {}", choices.len() - 1)).await;
    wait_gone(c, "#final-state").await;
    assert!(c.find(Locator::Css("button.transition")).await.is_ok());
    // Go to another outcome from here: the one that reads x=1.
    let goal = c.find(Locator::Css("#goal")).await.unwrap();
    goal.send_keys("1:r0=1 /\\ 1:r1=1").await.unwrap();
    click(c, "#go").await;
    // The read of x was already taken: the session says since when the
    // outcome is out of reach, and how far to undo.
    let said = wait_text(c, "#step-message", "is no longer reachable").await;
    let back: usize = said
        .split("Undo back to step ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    for k in (back..choices.len() - 1).rev() {
        click(c, "#undo").await;
        wait_text(c, "#step-status", &format!("step {k}")).await;
    }
    click(c, "#go").await;
    let said = wait_text(c, "#step-message", "Took ").await;
    assert!(said.ends_with("to reach 1:r0=1 /\\ 1:r1=1."), "{said}");
    let fin = wait_text(c, "#final-state", "Final state: ").await;
    assert!(fin.contains("1:r0=1; 1:r1=1;"), "{fin}");
    let history = c.find_all(Locator::Css("#history li")).await.unwrap().len();
    let follow = value(c, "#follow").await;

    // Share: the link opens the same state in a fresh page.
    click(c, "#share").await;
    let start = Instant::now();
    let mut link = String::new();
    while !link.contains("#z=") && !link.contains("#u=") {
        assert!(start.elapsed() < WAIT, "no share link: {link}");
        tokio::time::sleep(Duration::from_millis(50)).await;
        link = value(c, "#share-url").await;
    }
    let first = c.window().await.unwrap();
    let fresh = c.new_window(true).await.unwrap();
    c.switch_to_window(fresh.handle).await.unwrap();
    c.goto(&link).await.unwrap();
    let fin2 = wait_text(c, "#final-state", "Final state: ").await;
    assert_eq!(fin2, fin);
    assert_eq!(value(c, "#follow").await, follow);
    assert_eq!(
        c.find_all(Locator::Css("#history li")).await.unwrap().len(),
        history
    );
    assert_eq!(value(c, "#file").await, file);
    assert_eq!(value(c, "#test").await, text);
    c.close_window().await.unwrap();
    c.switch_to_window(first).await.unwrap();

    // A parse error is shown at its line, with the CLI's message.
    click(c, "#tab-run").await;
    c.execute(
        "const t = document.getElementById('test'); t.value = t.value.replace('ld.relaxed.gpu r0, f', 'ld.relaxed.gpu r0 f'); t.dispatchEvent(new Event('input'));",
        vec![],
    )
    .await
    .unwrap();
    click(c, "#run").await;
    let err = wait_text(c, "#parse-error", "-->").await;
    assert!(err.contains(&format!("--> {file}:8:")), "{err}");
    let marked = wait_text(c, "#gutter .err", "8").await;
    assert_eq!(marked, "8");

    // A test that can hang: the Run view says so, and steps into it.
    pick(c, "litmus/liveness/Flag-never-set.litmus").await;
    // In red (`bad`), before the condition's verdict, which is neutral.
    let hang = wait_text(c, "#hang.verdict.bad", "This program can hang (spin)").await;
    assert!(hang.contains("P1 spins in the loop"), "{hang}");
    wait_text(c, "#verdict.neutral", "Among the executions that end: ").await;
    click(c, "#hang button").await;
    wait_text(c, "#hang-here", "Hang (spin): P1 spins in the loop").await;

    // A kernel from the menu: its PTX in the editor, its `.cu`'s launch in
    // the Launch box, `ptxmc kernel`'s verdict; this server takes PTX only.
    click(c, "#tab-run").await;
    pick(c, "kernels/mp_relaxed.ptx").await;
    let verdict = wait_text(c, "#verdict.neutral", "forall (out[0]=42)").await;
    assert!(
        verdict.contains("does not hold: some final state does not satisfy it (1 of 2 final states satisfies its proposition)"),
        "{verdict}"
    );
    assert!(value(c, "#launch").await.starts_with("--grid 2 --block 1"));
    wait_text(c, "#kernel-note", "PTX only").await;
    // A launch error is shown with its position in the launch, the box marked.
    c.execute(
        "const l = document.getElementById('launch'); l.value = '--grid 2 --buffer data:int33[1]'; l.dispatchEvent(new Event('input'));",
        vec![],
    )
    .await
    .unwrap();
    click(c, "#run").await;
    let err = wait_text(c, "#parse-error", "int33").await;
    assert!(err.contains("--> launch:1:24"), "{err}");
    assert!(c.find(Locator::Css("#launch.err")).await.is_ok());
    // A litmus test hides the Launch box again.
    pick(c, "litmus/mp/MP+rel+acq.gpu.litmus").await;
    assert!(
        !c.find(Locator::Css("#launch-box"))
            .await
            .unwrap()
            .is_displayed()
            .await
            .unwrap()
    );
}
