//! Which element copies are one copy, and in what chunks the GPU completes
//! its bytes (`docs/async.md` §8, "Completion granularity").
//!
//! A tensor copy, a multicast copy or a kernel's multi-element bulk copy is
//! written as one element copy per element (and destination CTA); the second
//! and later element copies of one source copy are `joined` to the first
//! ([`Instr::AsyncCopy`]). The element copies of one source copy that
//! complete on one mbarrier are a *copy group*.
//!
//! PTX ISA, `cp.async.bulk` / `cp.async.bulk.tensor` with
//! `.mbarrier::complete_tx::bytes`: the copy performs a complete-tx "with
//! `completeCount` argument equal to amount of data copied in bytes" — the
//! ISA does not say in how many complete-tx operations. On an H200 a 32-byte
//! box armed with 16 bytes completed its phase in 20,003 launches (a row at a
//! time: 16 → 0) and hung once (the whole box at once: 16 → −16 skips zero;
//! `kernels/tma_tensor_expect_tx_short`). So the engines run two programs and
//! unite their results, as they do for `elect.sync` leaders (`engine::run`):
//! every group completing per element (the program as parsed), and every
//! group completing its total bytes at once ([`Granularity::Whole`],
//! `model::lower`). Programs without a group of two or more element copies
//! run once.

use super::{AddrId, Completion, Instr, Program, ThreadId, Value};

/// How copy groups complete their bytes on their mbarrier.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Granularity {
    /// Each element copy completes its own bytes (the finest chunks).
    #[default]
    Element,
    /// A group's bytes complete in one complete-tx, once all its element
    /// copies have written (the coarsest).
    Whole,
}

impl Granularity {
    /// Whether this is [`Granularity::Element`] (serde's skip test).
    pub fn is_element(&self) -> bool {
        *self == Granularity::Element
    }
    /// In words, for notes and traces.
    pub fn words(self) -> &'static str {
        match self {
            Granularity::Element => "each copy's bytes completing element by element",
            Granularity::Whole => "each copy's bytes completing all at once",
        }
    }
}

/// One copy group of two or more element copies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The issuing thread.
    pub thread: ThreadId,
    /// The element copies' pcs, in order.
    pub pcs: Vec<usize>,
    /// The mbarrier they complete on.
    pub bar: AddrId,
    /// Their bytes together.
    pub bytes: Value,
}

/// The copy groups of `p` with two or more element copies that complete on
/// an mbarrier, in thread and pc order. (Groups that complete a bulk
/// async-group are left out: a wait for the group waits for every element
/// whatever the chunks.)
pub fn groups(p: &Program) -> Vec<Group> {
    let mut out = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        if th.agent.is_some() {
            continue;
        }
        let mut open: Option<(Group, Completion)> = None;
        for (pc, i) in th.code.iter().enumerate() {
            let Instr::AsyncCopy {
                completion,
                size,
                joined,
                ..
            } = i
            else {
                continue;
            };
            match &mut open {
                Some((g, c)) if *joined && c == completion => {
                    g.pcs.push(pc);
                    g.bytes += size;
                }
                _ => {
                    if let Some((g, _)) = open.take() {
                        out.push(g);
                    }
                    open = Some((
                        Group {
                            thread: t,
                            pcs: vec![pc],
                            bar: match completion {
                                Completion::Mbarrier(b) => *b,
                                _ => usize::MAX,
                            },
                            bytes: *size,
                        },
                        *completion,
                    ));
                }
            }
        }
        out.extend(open.map(|(g, _)| g));
    }
    out.retain(|g| g.pcs.len() > 1 && g.bar != usize::MAX);
    out
}

/// The granularities the engines run `p` under: per element, then whole
/// copies when some group has two or more element copies.
pub fn choices(p: &Program) -> &'static [Granularity] {
    if groups(p).is_empty() {
        &[Granularity::Element]
    } else {
        &[Granularity::Element, Granularity::Whole]
    }
}

/// Where a `joined` copy breaks the rule that it continues the thread's
/// previous copy: the thread, pc and why. A joined copy follows an
/// `AsyncCopy` of the same kind and completion in its thread, with no label
/// or branch in between (the same path runs both).
pub fn misjoined(p: &Program) -> Option<(ThreadId, usize, &'static str)> {
    for (t, th) in p.threads.iter().enumerate() {
        let mut prev: Option<&Instr> = None;
        for (pc, i) in th.code.iter().enumerate() {
            if th.labels.iter().any(|l| l.at == pc) || matches!(i, Instr::Branch { .. }) {
                prev = None;
            }
            if let Instr::AsyncCopy {
                kind,
                completion,
                joined,
                ..
            } = i
            {
                if *joined {
                    match prev {
                        None => {
                            return Some((
                                t,
                                pc,
                                "a `.joined` copy continues the copy before it, with no label or branch in between",
                            ));
                        }
                        Some(Instr::AsyncCopy {
                            kind: k,
                            completion: c,
                            ..
                        }) if k == kind && c == completion => {}
                        Some(_) => {
                            return Some((
                                t,
                                pc,
                                "a `.joined` copy has the kind and completion of the copy it continues",
                            ));
                        }
                    }
                }
                prev = Some(i);
            }
        }
    }
    None
}
