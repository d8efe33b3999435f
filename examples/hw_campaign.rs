//! The tables of a recorded campaign of generated tests on a GPU
//! (`docs/hardware-results.md`, "Generated campaign"), in Markdown:
//!
//! ```sh
//! cargo run --release --example hw_campaign -- tests/data/hw/h100-gen [--seen]
//! ```
//!
//! Reads `DIR/histograms/*.json` and `DIR/roles.sass`, compares every
//! histogram with the model (as `ptxmc hw compare` does) and groups the tests
//! by shape, placement and what orders their threads
//! (`ptxmc::hw::campaign`). `--seen` adds every test whose weak outcome the
//! GPU showed. Run it from the repository root: the histograms name their
//! tests by paths relative to it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ptxmc::hw::campaign::{CycleOrders, Ordering, weak_outcome};
use ptxmc::hw::compare::compare;
use ptxmc::hw::histogram::Histogram;
use ptxmc::hw::sass;
use ptxmc::ir::Scope;

/// One test of the campaign.
#[derive(Clone)]
struct Row {
    name: String,
    part: String,
    family: String,
    places: String,
    runs: u64,
    cluster_dim: u64,
    forbidden_seen: u64,
    altered: Vec<String>,
    allowed: bool,
    seen: u64,
    by_config: Vec<u64>,
    cycle: CycleOrders,
}

/// Tests, tests whose weak outcome the model allows, those where the GPU
/// showed it, how often, out of how many runs (of the allowed ones), and the
/// highest rate.
#[derive(Default)]
struct Tally {
    tests: usize,
    allowed: usize,
    seen_tests: usize,
    seen: u64,
    runs: u64,
    best: f64,
}

impl Tally {
    fn add(&mut self, r: &Row) {
        self.tests += 1;
        if r.allowed {
            self.allowed += 1;
            self.runs += r.runs;
            if r.seen > 0 {
                self.seen_tests += 1;
                self.seen += r.seen;
                self.best = self.best.max(100.0 * r.seen as f64 / r.runs as f64);
            }
        }
    }
    fn cells(&self) -> String {
        let rate = if self.runs == 0 {
            "–".to_string()
        } else {
            format!("{:.4}%", 100.0 * self.seen as f64 / self.runs as f64)
        };
        format!(
            "{} | {} | {} | {} | {} | {:.4}%",
            self.tests,
            self.allowed,
            self.seen_tests,
            thousands(self.seen),
            rate,
            self.best
        )
    }
}

const TALLY_HEAD: &str = "tests | weak allowed | weak seen (tests) | weak seen (instances) | rate (allowed tests) | highest rate";

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The family of a generated name: `MP`, `2+2W`, `WsW+RsR`, …
fn family(name: &str) -> String {
    if name.starts_with("2+2W+") {
        return "2+2W".into();
    }
    let shape = |t: &str| !t.is_empty() && t.chars().all(|c| matches!(c, 'W' | 'R' | 's'));
    let tokens: Vec<&str> = name.split('@').next().unwrap().split('+').collect();
    if !shape(tokens[0]) {
        return tokens[0].into();
    }
    tokens
        .iter()
        .take_while(|t| shape(t))
        .copied()
        .collect::<Vec<_>>()
        .join("+")
}

/// `cta`, `cluster`, `gpu` when every communication edge has that placement,
/// else `mixed`.
fn placement(places: &str) -> &str {
    let mut it = places.split('.');
    let first = it.next().unwrap();
    if it.all(|p| p == first) {
        first
    } else {
        "mixed"
    }
}

fn load(dir: &Path) -> Vec<Row> {
    let funcs = sass::parse(&std::fs::read_to_string(dir.join("roles.sass")).expect("roles.sass"));
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir.join("histograms"))
        .expect("histograms/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let h = Histogram::read(path).unwrap_or_else(|e| panic!("{e}"));
            let p = ptxmc::litmus::parse_file(Path::new(&h.test))
                .unwrap_or_else(|e| panic!("{}: {e:?}", h.test))
                .remove(0)
                .program;
            let c = compare(&h, &p, Some(&funcs)).unwrap_or_else(|e| panic!("{e}"));
            let w = weak_outcome(&p, &h, &c);
            let cycle = CycleOrders::of(&p).unwrap_or_else(|e| panic!("{e}"));
            let part = Path::new(&h.test)
                .parent()
                .and_then(|d| d.file_name())
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default();
            Row {
                family: family(&c.name),
                places: c.name.rsplit('@').next().unwrap().to_string(),
                name: c.name.clone(),
                part,
                runs: c.runs,
                cluster_dim: h.cluster_dim,
                forbidden_seen: c.forbidden_observed.iter().map(|(_, n)| n).sum(),
                altered: c
                    .sass
                    .as_ref()
                    .filter(|s| s.compiler_altered())
                    .map(|s| s.reasons())
                    .unwrap_or_default(),
                allowed: w.allowed,
                seen: w.seen,
                by_config: w.by_config,
                cycle,
            }
        })
        .collect()
}

/// A table of [`Tally`]s, one row per key; rows are sorted by the key and
/// labelled by its text.
fn tally_table<K: Ord>(
    title: &str,
    key_head: &str,
    rows: &[Row],
    key: impl Fn(&Row) -> Option<(K, String)>,
) {
    let mut t: BTreeMap<K, (String, Tally)> = BTreeMap::new();
    for r in rows {
        if let Some((k, label)) = key(r) {
            t.entry(k)
                .or_insert_with(|| (label, Tally::default()))
                .1
                .add(r);
        }
    }
    println!("### {title}\n\n| {key_head} | {TALLY_HEAD} |");
    println!("|---|---|---|---|---|---|---|");
    for (label, v) in t.values() {
        println!("| {label} | {} |", v.cells());
    }
    println!();
}

/// The threads that are not ordered at a scope covering their partners,
/// counted by what they have: program order alone (`po`), an ordering at
/// `.cta` or at `.cluster` only; `none` when every thread is covered. The
/// key sorts the most unordered first.
fn weak_links(c: &CycleOrders) -> (std::cmp::Reverse<(usize, usize)>, String) {
    let mut po = 0;
    let mut narrow = BTreeMap::<Scope, usize>::new();
    for t in c.threads.iter().filter(|t| t.accesses.len() == 2) {
        match t.widest() {
            None => po += 1,
            Some(w) if w < t.reach => *narrow.entry(w).or_default() += 1,
            Some(_) => {}
        }
    }
    let key = std::cmp::Reverse((po, narrow.values().sum()));
    let mut parts = Vec::new();
    if po > 0 {
        parts.push(format!("po ×{po}"));
    }
    for (s, n) in narrow {
        parts.push(format!(".{s} ×{n}"));
    }
    if parts.is_empty() {
        (key, "none".into())
    } else {
        (key, parts.join(", "))
    }
}

/// A matrix of a two-thread family at one placement: rows the first
/// thread's orderings, columns the second's; a cell is how often the GPU
/// showed the weak outcome, `·` where the model forbids it.
fn matrix(rows: &[Row], family: &str, place: &str) {
    let cells: Vec<(&Row, String, String)> = rows
        .iter()
        .filter(|r| r.part == "default" && r.family == family && r.places == place)
        .map(|r| (r, r.cycle.threads[0].label(), r.cycle.threads[1].label()))
        .collect();
    let order = |l: &String| {
        let scope = Scope::ALL
            .iter()
            .position(|s| l.ends_with(s.as_str()))
            .unwrap_or(0);
        let kind = ["po", "rel", "acq", "acq_rel", "sc"]
            .iter()
            .position(|k| l.split('.').next() == Some(k))
            .unwrap_or(9);
        (kind, scope, l.clone())
    };
    let mut firsts: Vec<String> = cells.iter().map(|c| c.1.clone()).collect();
    let mut seconds: Vec<String> = cells.iter().map(|c| c.2.clone()).collect();
    for v in [&mut firsts, &mut seconds] {
        v.sort_by_key(order);
        v.dedup();
    }
    let runs: u64 = cells.iter().map(|c| c.0.runs).sum();
    println!(
        "### {family} at `@{place}`: weak outcomes seen ({} tests, {} runs; `·` forbidden by the model; ᶜ a cluster launch)\n",
        cells.len(),
        thousands(runs)
    );
    println!("| P0 \\ P1 | {} |", seconds.join(" | "));
    println!("|---|{}", "---|".repeat(seconds.len()));
    for f in &firsts {
        let line: Vec<String> = seconds
            .iter()
            .map(|s| {
                // A family whose two threads have one shape (SB, LB, 2+2W)
                // lists each pair once: the mirrored cell is the same test.
                let cell = cells
                    .iter()
                    .find(|c| &c.1 == f && &c.2 == s)
                    .or_else(|| cells.iter().find(|c| &c.1 == s && &c.2 == f));
                match cell {
                    None => String::new(),
                    Some((r, _, _)) if !r.allowed => "·".into(),
                    Some((r, _, _)) if r.cluster_dim > 0 => format!("{}ᶜ", thousands(r.seen)),
                    Some((r, _, _)) => thousands(r.seen),
                }
            })
            .collect();
        println!("| {f} | {} |", line.join(" | "));
    }
    println!();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: hw_campaign DIR [--seen]");
        std::process::exit(2)
    };
    let rows = load(Path::new(dir));
    let runs: u64 = rows.iter().map(|r| r.runs).sum();
    let forbidden: Vec<&Row> = rows.iter().filter(|r| r.forbidden_seen > 0).collect();
    let altered: Vec<&Row> = rows.iter().filter(|r| !r.altered.is_empty()).collect();
    let mut all = Tally::default();
    rows.iter().for_each(|r| all.add(r));
    println!("## Summary\n");
    println!("* tests: {}, instances: {}", rows.len(), thousands(runs));
    println!(
        "* tests with an outcome the model forbids: {} ({} instances)",
        forbidden.len(),
        thousands(forbidden.iter().map(|r| r.forbidden_seen).sum())
    );
    println!("* compiler-altered (SASS check): {}", altered.len());
    println!(
        "* weak outcome allowed by the model: {} tests; seen on the GPU: {} tests, {} instances",
        all.allowed,
        all.seen_tests,
        thousands(all.seen)
    );
    println!();

    let text = |k: String| Some((k.clone(), k));
    tally_table("By part of the set", "part", &rows, |r| {
        text(r.part.clone())
    });
    tally_table("By shape", "shape", &rows, |r| text(r.family.clone()));
    let place_rank = |r: &Row| {
        let p = placement(&r.places);
        let rank = ["cta", "cluster", "gpu"].iter().position(|q| *q == p);
        (rank.unwrap_or(3), p.to_string())
    };
    tally_table("By placement", "placement", &rows, |r| {
        let (rank, p) = place_rank(r);
        Some((rank, format!("`@{p}`")))
    });
    tally_table(
        "By launch (a cluster launch for every test with a `.cluster`-scoped instruction)",
        "launch",
        &rows,
        |r| {
            let d = r.cluster_dim;
            Some((
                d,
                match d {
                    0 => "ordinary".to_string(),
                    1 => "clusters of 1 CTA".to_string(),
                    _ => format!("clusters of {d} CTAs"),
                },
            ))
        },
    );
    // Cluster launches showed no weak outcome at all (and every `.cluster`
    // scope makes one): the groups are counted on ordinary launches.
    let ordinary: Vec<Row> = rows
        .iter()
        .filter(|r| r.cluster_dim == 0)
        .cloned()
        .collect();
    let rows_all = &rows;
    let rows = &ordinary[..];
    tally_table(
        "By what orders the threads (ordinary launches)",
        "group",
        rows,
        |r| {
            let g = r.cycle.ordering();
            Some((g, g.to_string()))
        },
    );
    tally_table(
        "By group and placement (ordinary launches)",
        "group, placement",
        rows,
        |r| {
            let g = r.cycle.ordering();
            let (rank, p) = place_rank(r);
            Some(((g, rank), format!("{g}, `@{p}`")))
        },
    );
    tally_table(
        "Threads not ordered at a scope covering their partners (ordinary launches of tests with threads in two CTAs or more; no aliases, no coherence)",
        "weak links",
        rows,
        |r| {
            let g = r.cycle.ordering();
            (matches!(
                g,
                Ordering::Unordered | Ordering::Narrow(_) | Ordering::Covered
            ) && r.places != "cta")
                .then(|| {
                    let (key, label) = weak_links(&r.cycle);
                    ((key, label.clone()), label)
                })
        },
    );
    let rows = rows_all;
    for place in ["cta", "cluster", "gpu"] {
        matrix(rows, "MP", place);
    }
    for family in ["SB", "LB", "S", "R", "2+2W"] {
        matrix(rows, family, "gpu");
    }

    // Weak outcomes by harness configuration (all tests share the order).
    let names = ["plain", "barrier-start", "stress", "barrier-start+stress"];
    let mut by_config = [0u64; 4];
    for r in rows.iter().filter(|r| r.allowed) {
        for (s, n) in by_config.iter_mut().zip(&r.by_config) {
            *s += n;
        }
    }
    println!("### Weak outcomes by harness configuration\n");
    println!("| {} |\n|---|---|---|---|", names.join(" | "));
    println!("| {} |\n", by_config.map(thousands).join(" | "));

    println!("### Compiler-altered tests\n");
    for r in &altered {
        println!("* `{}`: {}", r.name, r.altered.join("; "));
    }
    println!();
    if !forbidden.is_empty() {
        println!("### Forbidden outcomes observed\n");
        for r in &forbidden {
            println!("* `{}`: {} instances", r.name, r.forbidden_seen);
        }
        println!();
    }
    if args.iter().any(|a| a == "--seen") {
        println!("### Every weak outcome seen\n\n| test | seen | runs | rate |\n|---|---|---|---|");
        for r in rows.iter().filter(|r| r.allowed && r.seen > 0) {
            println!(
                "| `{}` | {} | {} | {:.4}% |",
                r.name,
                thousands(r.seen),
                thousands(r.runs),
                100.0 * r.seen as f64 / r.runs as f64
            );
        }
    }
}
