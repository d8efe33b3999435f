//! Systematic test names (`docs/gen.md` §4), in the spirit of diy7's
//! `MP+lwsync+addr`: a family, one descriptor per thread, a scope, placements.
//!
//! `FAMILY+T0+T1...[.SCOPE]@PLACES`, where
//! * `FAMILY` is a nickname (`MP`, `SB`, `IRIW`, ...) or the threads' shapes
//!   joined by `+` (`W+RW+WR`);
//! * each `Tk` lists thread k's accesses and what lies between them in
//!   program order, joined by `-` (`weak-rel.gpu`, `rlx-fence.sc-rlx`); one
//!   descriptor stands for all when every thread has the same;
//! * `.SCOPE` is written once, at the end, when every scoped item shares it;
//! * `@PLACES` gives each communication edge's placement in cycle order
//!   (`@cluster`, or `@cta.gpu.gpu` when they differ).
//!
//! Names are unique: every part of the canonical cycle is in the name.

use super::cycle::{Cycle, ThreadShape};
use super::edge::{Edge, Place};
use crate::ir::Scope;

/// Family nicknames, keyed by the threads' shapes in canonical order.
const NICKNAMES: &[(&[ThreadShape], &str)] = {
    use ThreadShape::*;
    &[
        (&[WW, RR], "MP"),
        (&[WR, WR], "SB"),
        (&[RW, RW], "LB"),
        (&[WW, RW], "S"),
        (&[WW, WR], "R"),
        (&[WW, WW], "2+2W"),
        (&[W, RW, RR], "WRC"),
        (&[W, RR, WR], "RWC"),
        (&[WW, RW, RR], "ISA2"),
        (&[WR, WR, WR], "3.SB"),
        (&[RW, RW, RW], "3.LB"),
        (&[WW, WW, WW], "3.2W"),
        (&[W, RR, W, RR], "IRIW"),
        (&[W, RsR], "CoRR"),
        (&[W, RsW], "CoRW"),
    ]
};

/// The family of a cycle: its nickname, or its threads' shapes.
pub fn family(shapes: &[ThreadShape]) -> String {
    match NICKNAMES.iter().find(|(s, _)| *s == shapes) {
        Some((_, nick)) => nick.to_string(),
        None => shapes
            .iter()
            .map(|s| s.text())
            .collect::<Vec<_>>()
            .join("+"),
    }
}

/// One item of a thread descriptor: its text with and without scope.
struct Item {
    scoped: String,
    unscoped: String,
    scope: Option<Scope>,
}

/// The name of a canonical cycle.
pub fn name(c: &Cycle) -> String {
    let threads = c.threads();
    let items: Vec<Vec<Item>> = threads
        .iter()
        .map(|t| {
            let mut out = Vec::new();
            for (k, &i) in t.iter().enumerate() {
                let a = c.accesses[i].ann;
                out.push(Item {
                    scoped: a.to_string(),
                    unscoped: a.unscoped(),
                    scope: a.strength.scope(),
                });
                if k + 1 < t.len() {
                    if let Edge::Po { mids, .. } = &c.edges[i] {
                        out.extend(mids.iter().map(|m| Item {
                            scoped: m.to_string(),
                            unscoped: m.unscoped(),
                            scope: m.scope(),
                        }));
                    }
                }
            }
            out
        })
        .collect();
    let scopes: Vec<Scope> = items.iter().flatten().filter_map(|i| i.scope).collect();
    let common = scopes
        .first()
        .copied()
        .filter(|s| scopes.iter().all(|t| t == s));
    let descriptors: Vec<String> = items
        .iter()
        .map(|t| {
            t.iter()
                .map(|i| {
                    if common.is_some() {
                        i.unscoped.as_str()
                    } else {
                        i.scoped.as_str()
                    }
                })
                .collect::<Vec<_>>()
                .join("-")
        })
        .collect();
    let mut out = family(&c.shapes());
    if descriptors.len() > 1 && descriptors.iter().all(|d| *d == descriptors[0]) {
        out.push('+');
        out.push_str(&descriptors[0]);
    } else {
        for d in &descriptors {
            out.push('+');
            out.push_str(d);
        }
    }
    if let Some(s) = common {
        out.push('.');
        out.push_str(s.as_str());
    }
    let places = c.places();
    out.push('@');
    if places.iter().all(|p| *p == places[0]) {
        out.push_str(places[0].word());
    } else {
        out.push_str(
            &places
                .iter()
                .map(|p: &Place| p.word())
                .collect::<Vec<_>>()
                .join("."),
        );
    }
    out
}
