//! Turning a canonical cycle into a litmus test whose `exists` condition is
//! the cycle's outcome (`docs/gen.md` §3).
//!
//! The test is written in ptxmc's `.litmus` dialect, read back with ptxmc's
//! own parser and printed in canonical form: the text that is written is the
//! text `ptxmc parse` would print, and the program is the one it would read.

use std::fmt::Write;

use super::cycle::{Cycle, placements};
use super::edge::{Dir, Edge, EvProxy, Mid, Strength};
use super::name;
use crate::ir::Program;
use crate::litmus::{SourceMap, dat3m, print};

/// A generated test.
#[derive(Clone, Debug)]
pub struct GenTest {
    /// Its name (also its file stem).
    pub name: String,
    /// The cycle, in cycle-text form (`docs/gen.md` §3).
    pub cycle: String,
    /// Number of edges of the cycle.
    pub edges: usize,
    /// The program.
    pub program: Program,
    /// The canonical litmus text (what the file holds).
    pub text: String,
    /// Where each part of the program lies in `text`.
    pub spans: SourceMap,
}

/// Location names in order of first use along the canonical cycle.
fn location_name(k: usize) -> String {
    const NAMES: [&str; 8] = ["x", "y", "z", "w", "v", "u", "t", "s"];
    NAMES
        .get(k)
        .map_or_else(|| format!("l{k}"), |n| n.to_string())
}

/// The address an access of location `loc` uses through `proxy`.
fn address(loc: &str, proxy: EvProxy) -> String {
    match proxy {
        EvProxy::Generic => loc.to_string(),
        EvProxy::Alias => format!("{loc}a"),
        EvProxy::Texture => format!("{loc}t"),
        EvProxy::Surface => format!("{loc}s"),
        EvProxy::Constant => format!("{loc}c"),
    }
}

/// `.weak`, `.relaxed.gpu`, `.volatile`, ...
fn sem(s: Strength) -> String {
    match s {
        Strength::Weak => ".weak".to_string(),
        Strength::Volatile => ".volatile".to_string(),
        Strength::Relaxed(sc) => format!(".relaxed.{sc}"),
        Strength::Acquire(sc) => format!(".acquire.{sc}"),
        Strength::Release(sc) => format!(".release.{sc}"),
    }
}

/// The cycle-text form: each access's annotation in brackets, then the edge
/// leaving it (`[weak] PodWW [rel.gpu] Rfe.cluster ...`).
pub fn cycle_text(c: &Cycle) -> String {
    let n = c.len();
    let mut parts = Vec::with_capacity(2 * n);
    for i in 0..n {
        parts.push(format!("[{}]", c.accesses[i].ann));
        parts.push(c.edges[i].text(c.accesses[i].dir, c.accesses[(i + 1) % n].dir));
    }
    parts.join(" ")
}

/// Build the test of a canonical cycle.
///
/// # Errors
/// A message with the text written, if ptxmc's parser rejects it: a defect of
/// the generator, never of the user's input.
pub fn build(c: &Cycle) -> Result<GenTest, String> {
    let name = name::name(c);
    let cycle = cycle_text(c);
    let raw = raw_text(c, &name, &cycle)?;
    let (program, _) = dat3m::parse(&raw).map_err(|d| {
        format!(
            "ptxmc gen wrote a test its own parser rejects ({}):\n{raw}",
            d.message()
        )
    })?;
    let text = print::to_litmus(&program);
    // Read the canonical text back: what the file holds must mean the same
    // test, and its positions serve later diagnostics.
    let (again, spans) = dat3m::parse(&text).map_err(|d| {
        format!(
            "ptxmc gen printed a test its own parser rejects ({}):\n{text}",
            d.message()
        )
    })?;
    if again != program {
        return Err(format!(
            "ptxmc gen printed a test that reads back differently:\n{text}"
        ));
    }
    Ok(GenTest {
        name,
        cycle,
        edges: c.len(),
        program,
        text,
        spans,
    })
}

/// The litmus text of a cycle, before canonical printing.
fn raw_text(c: &Cycle, name: &str, cycle: &str) -> Result<String, String> {
    let threads = c.threads();
    let locs = c.locations();
    let values = c.values();
    let writes = c.writes_per_location();
    let placement = placements(&c.places())
        .ok_or_else(|| format!("inconsistent placements in the cycle {cycle}"))?;
    let nlocs = c.location_count();
    let loc_names: Vec<String> = (0..nlocs).map(location_name).collect();

    let mut out = String::new();
    writeln!(out, "PTX {name}").unwrap();
    writeln!(out, "\"Cycle: {cycle}\"").unwrap();
    out.push_str("{\n");
    for l in &loc_names {
        write!(out, "{l}=0; ").unwrap();
    }
    out.push('\n');
    // Declare each non-generic path once per location, in a fixed order.
    for (l, ln) in loc_names.iter().enumerate() {
        for proxy in [
            EvProxy::Alias,
            EvProxy::Texture,
            EvProxy::Surface,
            EvProxy::Constant,
        ] {
            let used = c
                .accesses
                .iter()
                .zip(&locs)
                .any(|(a, &al)| al == l && a.ann.proxy == proxy);
            if used {
                let kind = match proxy {
                    EvProxy::Alias => "generic",
                    EvProxy::Texture => "texture",
                    EvProxy::Surface => "surface",
                    EvProxy::Constant => "constant",
                    EvProxy::Generic => unreachable!(),
                };
                writeln!(out, "{} @ {kind} aliases {ln};", address(ln, proxy)).unwrap();
            }
        }
    }
    out.push_str("}\n");

    let mut columns: Vec<Vec<String>> = Vec::new();
    let mut condition: Vec<String> = Vec::new();
    for (t, accs) in threads.iter().enumerate() {
        let mut code = Vec::new();
        let reads = accs
            .iter()
            .filter(|&&i| c.accesses[i].dir == Dir::R)
            .count();
        let mut next_read = 0;
        let mut next_temp = reads;
        // The register of the previous load, for dependencies.
        let mut last_read: Option<String> = None;
        // A store's value operand, when a dependency computed it.
        let mut value_reg: Option<String> = None;
        for (k, &i) in accs.iter().enumerate() {
            let a = c.accesses[i];
            let addr = address(&loc_names[locs[i]], a.ann.proxy);
            let s = sem(a.ann.strength);
            match a.dir {
                Dir::R => {
                    let r = format!("r{next_read}");
                    next_read += 1;
                    let op = match a.ann.proxy {
                        EvProxy::Generic | EvProxy::Alias => "ld",
                        EvProxy::Texture => "tld",
                        EvProxy::Surface => "suld",
                        EvProxy::Constant => "cold",
                    };
                    code.push(format!("{op}{s} {r}, {addr}"));
                    condition.push(format!("P{t}:{r} == {}", values[i]));
                    last_read = Some(r);
                }
                Dir::W => {
                    let op = if a.ann.proxy == EvProxy::Surface {
                        "sust"
                    } else {
                        "st"
                    };
                    let v = value_reg.take().unwrap_or_else(|| values[i].to_string());
                    code.push(format!("{op}{s} {addr}, {v}"));
                }
            }
            if k + 1 < accs.len() {
                let Edge::Po { mids, .. } = &c.edges[i] else {
                    unreachable!("accesses of one thread are joined by program order")
                };
                for m in mids {
                    match m {
                        Mid::Fence(kind, scope) => {
                            code.push(format!("fence.{}.{scope}", kind.ptx()));
                        }
                        Mid::Proxy(kind) => code.push(format!("fence.proxy.{}", kind.word())),
                        Mid::Data => {
                            let src = last_read
                                .clone()
                                .ok_or("a data dependency needs a load before it")?;
                            let tmp = format!("r{next_temp}");
                            next_temp += 1;
                            let v = values[accs[k + 1]];
                            code.push(format!("xor {tmp}, {src}, {src}"));
                            code.push(format!("add {tmp}, {tmp}, {v}"));
                            value_reg = Some(tmp);
                        }
                    }
                }
            }
        }
        columns.push(code);
    }
    for (l, ln) in loc_names.iter().enumerate() {
        if writes[l] == 2 {
            condition.push(format!("{ln} == 2"));
        }
    }

    let headers: Vec<String> = placement
        .iter()
        .enumerate()
        .map(|(t, p)| format!("P{t}@cta {},cluster {},gpu {}", p.cta, p.cluster, p.gpu))
        .collect();
    out.push_str(&crate::litmus::print::table(&headers, &columns));
    writeln!(out, "exists ({})", condition.join(" /\\ ")).unwrap();
    Ok(out)
}
