//! Executions as Graphviz DOT, after herd7's conventions: events are nodes
//! labelled `a: W.rel.gpu f=1`; `po` black, `rf` red, `co` blue, `fr`
//! orange, synchronisation dark green, dependencies indigo; threads are
//! nested in CTA, cluster and GPU boxes (`subgraph cluster_…`); accesses
//! through a non-generic proxy are boxed and coloured; the edges of a
//! violated cycle are drawn bold. This function alone owns the format;
//! golden tests pin it byte for byte.

use std::fmt::Write;

use crate::explain::axiomatic::{EventNode, Execution};

/// herd7's colour for an edge of relation `rel`.
pub fn colour(rel: &str) -> &'static str {
    match rel {
        "po" | "rmw" => "black",
        "rf" => "red",
        "co" => "blue",
        "fr" => "#ffa040",
        "dep" => "indigo",
        _ => "darkgreen",
    }
}

/// A file name for a picture titled `title`.
pub fn file_name(title: &str) -> String {
    title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn node(out: &mut String, indent: &str, e: &EventNode) {
    let label = quote(&format!("{}: {}", e.name, e.herd));
    match &e.proxy {
        Some(p) => writeln!(
            out,
            "{indent}e{} [label={label}, shape=box, color=purple, fontcolor=purple, tooltip={}];",
            e.id,
            quote(&format!("{} proxy", p))
        )
        .unwrap(),
        None => writeln!(out, "{indent}e{} [label={label}];", e.id).unwrap(),
    }
}

/// The DOT text of execution `x`, titled `title`.
pub fn execution(title: &str, x: &Execution) -> String {
    let mut out = String::new();
    writeln!(out, "digraph {} {{", quote(title)).unwrap();
    let caption = match x.violated {
        Some(a) => format!("{title}: violates {} ({})", a.name(), a.source()),
        None => title.to_string(),
    };
    writeln!(out, "  label={}; labelloc=t;", quote(&caption)).unwrap();
    writeln!(out, "  node [shape=none, fontname=\"Helvetica\"];").unwrap();
    writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=10];").unwrap();
    // Initial writes first, outside every box.
    for e in x.events.iter().filter(|e| e.thread.is_none()) {
        node(&mut out, "  ", e);
    }
    // GPU ⊃ cluster ⊃ CTA ⊃ thread, in order of first appearance.
    let mut gpus: Vec<u32> = Vec::new();
    for e in &x.events {
        if let Some((g, _, _)) = e.placement {
            if !gpus.contains(&g) {
                gpus.push(g);
            }
        }
    }
    for g in gpus {
        writeln!(out, "  subgraph cluster_gpu{g} {{").unwrap();
        writeln!(out, "    label=\"GPU {g}\"; style=rounded; color=grey60;").unwrap();
        let mut clusters: Vec<u32> = Vec::new();
        for e in &x.events {
            if let Some((g2, c, _)) = e.placement {
                if g2 == g && !clusters.contains(&c) {
                    clusters.push(c);
                }
            }
        }
        for c in clusters {
            writeln!(out, "    subgraph cluster_gpu{g}_cluster{c} {{").unwrap();
            writeln!(
                out,
                "      label=\"cluster {c}\"; style=dashed; color=grey60;"
            )
            .unwrap();
            let mut ctas: Vec<u32> = Vec::new();
            for e in &x.events {
                if let Some((g2, c2, k)) = e.placement {
                    if g2 == g && c2 == c && !ctas.contains(&k) {
                        ctas.push(k);
                    }
                }
            }
            for k in ctas {
                writeln!(out, "      subgraph cluster_gpu{g}_cta{k} {{").unwrap();
                writeln!(out, "        label=\"CTA {k}\"; style=solid; color=grey40;").unwrap();
                let mut threads: Vec<&str> = Vec::new();
                for e in &x.events {
                    if e.placement == Some((g, c, k)) {
                        let t = e.thread.as_deref().unwrap();
                        if !threads.contains(&t) {
                            threads.push(t);
                        }
                    }
                }
                for t in threads {
                    writeln!(
                        out,
                        "        subgraph {} {{",
                        quote(&format!("cluster_{t}_gpu{g}_cta{k}"))
                    )
                    .unwrap();
                    writeln!(
                        out,
                        "          label={}; style=dotted; color=black;",
                        quote(t)
                    )
                    .unwrap();
                    for e in x.events.iter().filter(|e| {
                        e.placement == Some((g, c, k)) && e.thread.as_deref() == Some(t)
                    }) {
                        node(&mut out, "          ", e);
                    }
                    writeln!(out, "        }}").unwrap();
                }
                writeln!(out, "      }}").unwrap();
            }
            writeln!(out, "    }}").unwrap();
        }
        writeln!(out, "  }}").unwrap();
    }
    for e in &x.edges {
        let bold = if e.cycle {
            ", penwidth=3, style=bold"
        } else {
            ""
        };
        let weight = if e.rel == "po" {
            ", weight=10"
        } else {
            ", constraint=false"
        };
        writeln!(
            out,
            "  e{} -> e{} [label={}, color={}, fontcolor={}{weight}{bold}];",
            e.from,
            e.to,
            quote(e.rel),
            quote(colour(e.rel)),
            quote(colour(e.rel))
        )
        .unwrap();
    }
    writeln!(out, "}}").unwrap();
    out
}
