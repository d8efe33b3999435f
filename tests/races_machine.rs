//! Races replayed on the machine (`docs/races.md`, "Replayed on the
//! machine"; `step::race`): every race the oracle finds in `litmus/races/`
//! is shown by a run of the operational machine — both accesses retire,
//! each without the other in its causal past, and the run ends in a final
//! state — and the run replays with `trace --follow`; on the race-free
//! tests the machine finds no conflicting pair that is not morally strong
//! unordered in any run either. `trace --race N` prints the machine's run.

use std::path::{Path, PathBuf};
use std::process::Command;

use ptxmc::ax::race::{Access, AccessKind, Race, RaceKind};
use ptxmc::engine::{self, RaceStatus, RunOptions};
use ptxmc::ir::elect::Variants;
use ptxmc::step::{Options, Session};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn ptxmc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("ptxmc runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn race_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("litmus/races"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "litmus"))
        .collect();
    v.sort();
    v
}

fn trace_options() -> Options {
    Options {
        every_step: false,
        ..Options::default()
    }
}

#[test]
fn every_race_of_the_races_suite_is_shown_by_a_machine_run() {
    let mut replayed = 0;
    let mut racy_tests = 0;
    let mut free_tests = 0;
    for file in race_files() {
        let t = &ptxmc::litmus::parse_file(&file).unwrap()[0];
        let r = engine::run(&t.program, &RunOptions::default());
        assert_eq!(r.races.status, RaceStatus::Complete, "{file:?}");
        if r.races.found.is_empty() {
            free_tests += 1;
            continue;
        }
        racy_tests += 1;
        let variants = Variants::of(&t.program).unwrap();
        for f in &r.races.found {
            let mut s = Session::new(&variants, trace_options()).unwrap();
            let choices = s
                .go_to_race(&f.race)
                .unwrap()
                .unwrap_or_else(|| panic!("{file:?}: no machine run shows {:?}", f.race));
            s.replay(&choices).unwrap();
            let shown = s
                .shows_race(&f.race)
                .unwrap_or_else(|| panic!("{file:?}: the run does not show {:?}", f.race));
            assert!(s.final_states().is_some(), "{file:?}: the run ends");
            // The marked steps retire the race's two instructions.
            let steps = s.steps();
            for (k, side) in [
                (shown.first_step, &f.race.first),
                (shown.second_step, &f.race.second),
            ] {
                let step = &steps[k - 1];
                assert_eq!(step.kind, "retire", "{file:?} step {k}");
                if !side.agent {
                    assert_eq!(
                        step.thread, t.program.threads[side.thread].name,
                        "{file:?} step {k}"
                    );
                }
            }
            // A fresh session replays the same choices to the same answer.
            let mut again = Session::new(&variants, trace_options()).unwrap();
            again.replay(&choices).unwrap();
            assert_eq!(again.shows_race(&f.race), Some(shown), "{file:?}");
            replayed += 1;
        }
    }
    assert_eq!((racy_tests, free_tests), (33, 10));
    assert_eq!(replayed, 39);
}

/// Every conflicting pair of instructions that is not morally strong, as
/// a race to look for.
fn candidate_pairs(s: &Session<'_>) -> Vec<Race> {
    let m = s.machine();
    let p = &m.program;
    let l = &m.layout;
    let side = |x: usize| {
        let info = &l.slots[x];
        let t = info.thread.unwrap();
        let (thread, pc, agent) = match &p.threads[t].agent {
            Some(a) => (a.issuer, a.spawn_pc, true),
            None => (t, info.pc, false),
        };
        Access {
            thread,
            pc,
            access: if info.reads() && info.writes() {
                AccessKind::ReadModifyWrite
            } else if info.writes() {
                AccessKind::Write
            } else {
                AccessKind::Read
            },
            agent,
            proxy: info.proxy,
        }
    };
    let mut out: Vec<Race> = Vec::new();
    for a in 0..l.len() {
        for b in a + 1..l.len() {
            let (ia, ib) = (&l.slots[a], &l.slots[b]);
            if ia.thread.is_none() || ib.thread.is_none() || !ia.is_mem() || !ib.is_mem() {
                continue;
            }
            if ia.loc != ib.loc || !(ia.writes() || ib.writes()) || l.ms(a, b) {
                continue;
            }
            let race = Race {
                loc: ia.loc,
                first: side(a),
                second: side(b),
                kind: RaceKind::DataRace,
                reason: String::new(),
            };
            if !out.contains(&race) {
                out.push(race);
            }
        }
    }
    out
}

/// A racing pair of instructions, whatever the order of its sides: the
/// location and each side's (thread, instruction, by its agent).
type Key = (usize, (usize, usize, bool), (usize, usize, bool));

fn key(r: &Race) -> Key {
    let a = (r.first.thread, r.first.pc, r.first.agent);
    let b = (r.second.thread, r.second.pc, r.second.agent);
    (r.loc, a.min(b), a.max(b))
}

/// On the race-free tests, no run of the machine shows any conflicting pair
/// that is not morally strong unordered: the machine agrees they are
/// race-free. On the racy ones it shows exactly the oracle's races among
/// those pairs.
#[test]
fn the_machine_finds_the_oracles_races_among_all_pairs() {
    let mut pairs = 0;
    for file in race_files() {
        let t = &ptxmc::litmus::parse_file(&file).unwrap()[0];
        let r = engine::run(&t.program, &RunOptions::default());
        let variants = Variants::of(&t.program).unwrap();
        let s = Session::new(&variants, trace_options()).unwrap();
        let mut shown: Vec<Key> = Vec::new();
        for race in candidate_pairs(&s) {
            pairs += 1;
            if s.go_to_race(&race).unwrap().is_some() {
                shown.push(key(&race));
            }
        }
        shown.sort();
        shown.dedup();
        let mut oracle: Vec<Key> = r.races.found.iter().map(|f| key(&f.race)).collect();
        oracle.sort();
        oracle.dedup();
        assert_eq!(shown, oracle, "{file:?}");
    }
    assert!(pairs > 0);
}

#[test]
fn trace_race_prints_the_machine_run_and_its_replay() {
    let (code, out, err) = ptxmc(&["trace", "litmus/races/DR-MP-weak.litmus", "--race", "2"]);
    assert_eq!(code, 0, "{err}");
    let machine = out
        .split_once("A run of the machine in which they race")
        .map(|(_, m)| m)
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(machine, GOLDEN_DR_MP_WEAK_2, "{out}");
    // The replay line replays.
    let follow = machine
        .lines()
        .find_map(|l| {
            l.strip_prefix("Replay: ptxmc trace litmus/races/DR-MP-weak.litmus --follow ")
        })
        .unwrap();
    let (code, replay, err) = ptxmc(&[
        "trace",
        "litmus/races/DR-MP-weak.litmus",
        "--follow",
        follow,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(replay.contains("Final state:"), "{replay}");
    // JSON: the machine's run with the steps that retire the pair.
    let (code, out, _) = ptxmc(&[
        "trace",
        "litmus/races/MX-tma-load-try-wait.litmus",
        "--race",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["machine"]["shown"], true, "{out}");
    let marks = v["machine"]["race_steps"].as_array().unwrap();
    assert_eq!(marks.len(), 2);
    let steps = v["machine"]["steps"].as_array().unwrap();
    for m in marks {
        let k = m.as_u64().unwrap() as usize;
        assert_eq!(steps[k - 1]["kind"], "retire", "{out}");
    }
    // Race-free: nothing to replay.
    let (code, out, _) = ptxmc(&["trace", "litmus/races/RF-bar-ordered.litmus", "--race", "1"]);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "No race 1 in litmus/races/RF-bar-ordered.litmus: no race was found.\n"
    );
}

const GOLDEN_DR_MP_WEAK_2: &str = r#" (a shortest one; the two retirements marked):
  1. P0 st.weak x, 1   retires: the store is performed (its value is a version at the L2 coherence point)
       new version in memory: x=1 (P0 `st.weak x, 1`)
       coherence x: 0 < 1
  2. P0 st.weak f, 1   retires: the store is performed (its value is a version at the L2 coherence point)   <- race
       new version in memory: f=1 (P0 `st.weak f, 1`)
       coherence f: 0 < 1
  3. P1 ld.weak r0, f  reads f=0 (initial)
       newer: f=1 (P0 `st.weak f, 1`); it is not in P1's causal past
  4. P1 ld.weak r0, f  retires: the value read is checked against what this thread's cache line must show   <- race
  5. P1 ld.weak r1, x  reads x=0 (initial)
       newer: x=1 (P0 `st.weak x, 1`); it is not in P1's causal past
  6. P1 ld.weak r1, x  retires: the value read is checked against what this thread's cache line must show
Final state: 1:r0=0; 1:r1=0; x=1; f=1;
The machine checks it: step 2 retires P0 `st.weak f, 1` and step 4 retires P1 `ld.weak r0, f`, each without the other in its causal past (its view of the line it accesses: Front and Front⁺, docs/machine.md §2).
Replay: ptxmc trace litmus/races/DR-MP-weak.litmus --follow 0,0,0,0,0,0
"#;

/// README's tour of `trace --race N` shows the binary's output verbatim:
/// the block under its command line is compared byte for byte.
#[test]
fn readme_race_replay_block_is_the_binary_output() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let cmd = "$ ptxmc trace litmus/mp/MP+rel+acq.gpu.litmus --race 1\n";
    let start = readme.find(cmd).expect("README shows the command") + cmd.len();
    let len = readme[start..].find("```").expect("the block ends");
    let shown = &readme[start..start + len];
    let (code, out, err) = ptxmc(&["trace", "litmus/mp/MP+rel+acq.gpu.litmus", "--race", "1"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(shown, out);
}
