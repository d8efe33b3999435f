//! Executions as SVG, laid out in-process with herd7's column layout: one
//! column per thread, events top-down in program order, initial writes
//! above, threads boxed in their CTA, cluster and GPU, edges in herd's
//! colours (the violated cycle bold). The pure-Rust layout crates we tried
//! (`layout-rs`) lay out general graphs but draw no cluster boxes, and a
//! layered layout does not give herd's fixed columns; so this module places
//! the nodes itself (positions are a function of thread and program order).

use std::fmt::Write;

use crate::explain::axiomatic::Execution;

use super::dot::colour;

const COL: f64 = 210.0;
const ROW: f64 = 70.0;
const GAP: f64 = 40.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The SVG picture of execution `x`, titled `title`.
pub fn render(title: &str, x: &Execution) -> String {
    // Columns: threads ordered by placement, then first appearance.
    let mut threads: Vec<(u32, u32, u32, String)> = Vec::new();
    for e in &x.events {
        if let (Some(t), Some((g, c, k))) = (&e.thread, e.placement) {
            let key = (g, c, k, t.clone());
            if !threads.contains(&key) {
                threads.push(key);
            }
        }
    }
    threads.sort_by_key(|a| (a.0, a.1, a.2));
    let mut col_x = Vec::new();
    let mut xpos = 60.0 + COL / 2.0;
    for (i, t) in threads.iter().enumerate() {
        if i > 0 {
            let prev = &threads[i - 1];
            xpos += COL;
            // More room where a CTA, cluster or GPU box ends.
            if (prev.0, prev.1, prev.2) != (t.0, t.1, t.2) {
                xpos += GAP;
            }
            if (prev.0, prev.1) != (t.0, t.1) {
                xpos += GAP;
            }
            if prev.0 != t.0 {
                xpos += GAP;
            }
        }
        col_x.push(xpos);
    }
    let top = 200.0;
    let mut pos: Vec<(usize, f64, f64)> = Vec::new();
    let mut rows = vec![0usize; threads.len()];
    let mut init_x = 60.0 + COL / 2.0;
    for e in &x.events {
        match (&e.thread, e.placement) {
            (Some(t), Some((g, c, k))) => {
                let i = threads
                    .iter()
                    .position(|x| *x == (g, c, k, t.clone()))
                    .unwrap();
                pos.push((e.id, col_x[i], top + rows[i] as f64 * ROW));
                rows[i] += 1;
            }
            _ => {
                pos.push((e.id, init_x, 40.0));
                init_x += COL * 0.8;
            }
        }
    }
    let max_rows = rows.iter().copied().max().unwrap_or(1).max(1);
    let bottom = top + (max_rows - 1) as f64 * ROW;
    let width = col_x.last().copied().unwrap_or(0.0).max(init_x) + COL / 2.0 + 60.0;
    let height = bottom + 130.0;
    let at = |id: usize| pos.iter().find(|p| p.0 == id).map(|p| (p.1, p.2)).unwrap();
    let mut out = String::new();
    writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\">"
    )
    .unwrap();
    let caption = match x.violated {
        Some(a) => format!("{title}: violates {} ({})", a.name(), a.source()),
        None => title.to_string(),
    };
    writeln!(out, "<title>{}</title>", esc(&caption)).unwrap();
    writeln!(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>").unwrap();
    writeln!(
        out,
        "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\" font-size=\"14\">{}</text>",
        width / 2.0,
        height - 16.0,
        esc(&caption)
    )
    .unwrap();
    // Arrow heads, one per colour.
    writeln!(out, "<defs>").unwrap();
    let mut colours: Vec<&str> = x.edges.iter().map(|e| colour(e.rel)).collect();
    colours.sort_unstable();
    colours.dedup();
    for c in &colours {
        writeln!(
            out,
            "<marker id=\"arrow{}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"9\" markerHeight=\"9\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{c}\"/></marker>",
            marker_id(c)
        )
        .unwrap();
    }
    writeln!(out, "</defs>").unwrap();
    // Boxes: GPU ⊃ cluster ⊃ CTA ⊃ thread, outermost first.
    let span = |pred: &dyn Fn(&Column) -> bool| {
        let xs: Vec<f64> = threads
            .iter()
            .zip(&col_x)
            .filter(|(t, _)| pred(t))
            .map(|(_, &x)| x)
            .collect();
        (
            xs.iter().cloned().fold(f64::MAX, f64::min),
            xs.iter().cloned().fold(f64::MIN, f64::max),
        )
    };
    let mut boxes: Vec<(f64, f64, f64, String, &str, &str)> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for t in &threads {
        let levels: [(String, f64, String, &str, &str); 4] = [
            (
                format!("g{}", t.0),
                4.0,
                format!("GPU {}", t.0),
                "#999999",
                "8,4",
            ),
            (
                format!("g{}c{}", t.0, t.1),
                3.0,
                format!("cluster {}", t.1),
                "#999999",
                "3,3",
            ),
            (
                format!("g{}k{}", t.0, t.2),
                2.0,
                format!("CTA {}", t.2),
                "#666666",
                "",
            ),
            (
                format!("g{}k{}t{}", t.0, t.2, t.3),
                1.0,
                t.3.clone(),
                "#000000",
                "1,3",
            ),
        ];
        for (key, level, label, stroke, dash) in levels {
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let (lo, hi) = match level as u8 {
                4 => span(&|u| u.0 == t.0),
                3 => span(&|u| (u.0, u.1) == (t.0, t.1)),
                2 => span(&|u| (u.0, u.2) == (t.0, t.2)),
                _ => span(&|u| *u == *t),
            };
            let pad = 8.0 + (level - 1.0) * 10.0;
            boxes.push((
                lo - COL / 2.0 + 8.0 - pad,
                hi + COL / 2.0 - 8.0 + pad,
                level,
                label,
                stroke,
                dash,
            ));
        }
    }
    for (x0, x1, level, label, stroke, dash) in &boxes {
        let y0 = top - 30.0 - (level - 1.0) * 24.0;
        let y1 = bottom + 25.0 + (level - 1.0) * 10.0;
        let dash = if dash.is_empty() {
            String::new()
        } else {
            format!(" stroke-dasharray=\"{dash}\"")
        };
        writeln!(
            out,
            "<rect x=\"{x0:.0}\" y=\"{y0:.0}\" width=\"{:.0}\" height=\"{:.0}\" rx=\"6\" fill=\"none\" stroke=\"{stroke}\"{dash}/>",
            x1 - x0,
            y1 - y0
        )
        .unwrap();
        writeln!(
            out,
            "<text x=\"{:.0}\" y=\"{:.0}\" fill=\"{stroke}\" font-size=\"12\">{}</text>",
            x0 + 6.0,
            y0 + 14.0,
            esc(label)
        )
        .unwrap();
    }
    // Edges under the nodes.
    for e in &x.edges {
        let (x1, y1) = at(e.from);
        let (x2, y2) = at(e.to);
        let c = colour(e.rel);
        let w = if e.cycle { 3.0 } else { 1.2 };
        let (path, lx, ly) = if e.rel == "po" && (x1 - x2).abs() < 1.0 {
            (
                format!("M{x1:.1},{:.1} L{x2:.1},{:.1}", y1 + 11.0, y2 - 13.0),
                x1 + 14.0,
                (y1 + y2) / 2.0,
            )
        } else {
            // A curve bowing to one side, so opposite edges do not overlap.
            let (mx, my) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
            let (dx, dy) = (x2 - x1, y2 - y1);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let bow = 30.0 + len * 0.08;
            let (cx, cy) = (mx - dy / len * bow, my + dx / len * bow);
            let sy1 = y1 + if y2 > y1 { 11.0 } else { -13.0 };
            let sy2 = y2 + if y2 > y1 { -13.0 } else { 11.0 };
            (
                format!("M{x1:.1},{sy1:.1} Q{cx:.1},{cy:.1} {x2:.1},{sy2:.1}"),
                (mx + cx) / 2.0,
                (my + cy) / 2.0,
            )
        };
        writeln!(
            out,
            "<path d=\"{path}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"{w}\" marker-end=\"url(#arrow{})\"/>",
            marker_id(c)
        )
        .unwrap();
        writeln!(
            out,
            "<text x=\"{lx:.0}\" y=\"{ly:.0}\" fill=\"{c}\" font-size=\"11\"{}>{}</text>",
            if e.cycle { " font-weight=\"bold\"" } else { "" },
            esc(e.rel)
        )
        .unwrap();
    }
    for e in &x.events {
        let (cx, cy) = at(e.id);
        let label = format!("{}: {}", e.name, e.herd);
        let w = (label.chars().count() as f64 * 7.2 + 14.0).min(COL - 12.0);
        let (stroke, fill) = match &e.proxy {
            Some(_) => ("purple", "#f6ecff"),
            None => ("#cccccc", "white"),
        };
        writeln!(
            out,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"22\" rx=\"4\" fill=\"{fill}\" stroke=\"{stroke}\"/>",
            cx - w / 2.0,
            cy - 12.0
        )
        .unwrap();
        writeln!(
            out,
            "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            cy + 4.0,
            esc(&label)
        )
        .unwrap();
    }
    writeln!(out, "</svg>").unwrap();
    out
}

/// A thread's column: (gpu, cluster, cta, thread name).
type Column = (u32, u32, u32, String);

fn marker_id(c: &str) -> String {
    c.trim_start_matches('#').to_string()
}
