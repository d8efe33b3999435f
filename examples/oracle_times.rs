//! Time the axiomatic oracle (library call, no report) on generated tests,
//! one test at a time, and print per-test figures with the median and max:
//!
//! ```sh
//! cargo run --release --example oracle_times -- random THREADS INSTRS COUNT [TIMEOUT_S]
//! cargo run --release --example oracle_times -- family iriw|mp-chain|sb-ring|writers [TIMEOUT_S]
//! ```
//!
//! `random` runs seeds 1..=COUNT of `families::random`; `family` runs n = 1,
//! 2, … until a run takes more than 10 s (or hits the timeout, default 60 s).
//! These are the figures of `docs/oracle.md` ("Performance").

use std::time::{Duration, Instant};

use ptxmc::ax::{self, AxOptions};
use ptxmc::families;
use ptxmc::limits::{Budget, Limits};

fn run(text: &str, timeout: f64) -> (f64, bool, usize, u64) {
    let p = ptxmc::litmus::parse_source("gen.litmus", text)
        .expect("generated tests parse")
        .remove(0)
        .program;
    let budget = Budget::new(Limits {
        timeout: Some(Duration::from_secs_f64(timeout)),
        ..Limits::default()
    });
    let start = Instant::now();
    let r = ax::run_within(&p, &AxOptions::default(), &budget);
    let secs = start.elapsed().as_secs_f64();
    (
        secs,
        r.incomplete.is_none(),
        r.outcomes.len(),
        r.stats.nodes,
    )
}

fn arg(args: &[String], i: usize) -> Option<f64> {
    args.get(i).and_then(|a| a.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("random") => {
            let (Some(t), Some(i), Some(n)) = (arg(&args, 1), arg(&args, 2), arg(&args, 3)) else {
                return usage();
            };
            let timeout = arg(&args, 4).unwrap_or(60.0);
            let mut times = Vec::new();
            println!("seed seconds complete outcomes nodes");
            for seed in 1..=n as u64 {
                let text = families::random(seed, t as usize, i as usize);
                let (secs, done, outs, nodes) = run(&text, timeout);
                println!("{seed} {secs:.3} {done} {outs} {nodes}");
                times.push(if done { secs } else { f64::INFINITY });
            }
            times.sort_by(f64::total_cmp);
            let median = (times[(times.len() - 1) / 2] + times[times.len() / 2]) / 2.0;
            let max = times[times.len() - 1];
            println!("median {median:.3} s, max {max:.3} s (inf: stopped at {timeout} s)");
        }
        Some("family") => {
            let make: fn(usize) -> String = match args.get(1).map(String::as_str) {
                Some("iriw") => families::iriw,
                Some("mp-chain") => families::mp_chain,
                Some("sb-ring") => families::sb_ring,
                Some("writers") => families::writers,
                _ => return usage(),
            };
            let timeout = arg(&args, 2).unwrap_or(60.0);
            println!("n seconds complete outcomes nodes");
            for n in 1.. {
                let (secs, done, outs, nodes) = run(&make(n), timeout);
                println!("{n} {secs:.3} {done} {outs} {nodes}");
                if secs > 10.0 || !done {
                    break;
                }
            }
        }
        _ => usage(),
    }
}

fn usage() {
    eprintln!(
        "usage: oracle_times random THREADS INSTRS COUNT [TIMEOUT_S] | oracle_times family NAME [TIMEOUT_S]"
    );
    std::process::exit(2);
}
