//! The alphabet of cycles: access directions and annotations, what sits
//! between two accesses of one thread, and the edges themselves.
//!
//! Every type here has one text form, used alike by vocabulary files, test
//! names and the cycle written into each generated test (`docs/gen.md`).
//! The derived orders are the orders canonical forms are chosen by.

use std::fmt;

use crate::ir::Scope;

/// Whether an access reads or writes. Writes sort first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    /// A store.
    W,
    /// A load.
    R,
}

impl Dir {
    /// `W` or `R`.
    pub fn letter(self) -> char {
        match self {
            Dir::W => 'W',
            Dir::R => 'R',
        }
    }
}

/// The semantics (and scope) of one access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Strength {
    /// `.weak` (`weak`).
    Weak,
    /// `.relaxed.S` (`rlx.S`).
    Relaxed(Scope),
    /// `.acquire.S` on a load (`acq.S`).
    Acquire(Scope),
    /// `.release.S` on a store (`rel.S`).
    Release(Scope),
    /// `.volatile` (`vol`).
    Volatile,
}

impl Strength {
    /// The scope written on the access, if any.
    pub fn scope(self) -> Option<Scope> {
        match self {
            Strength::Relaxed(s) | Strength::Acquire(s) | Strength::Release(s) => Some(s),
            Strength::Weak | Strength::Volatile => None,
        }
    }
    /// The short word without its scope (`weak`, `rlx`, `acq`, `rel`, `vol`).
    pub fn word(self) -> &'static str {
        match self {
            Strength::Weak => "weak",
            Strength::Relaxed(_) => "rlx",
            Strength::Acquire(_) => "acq",
            Strength::Release(_) => "rel",
            Strength::Volatile => "vol",
        }
    }
    /// Whether an access in direction `d` may carry these semantics.
    pub fn allows(self, d: Dir) -> bool {
        match self {
            Strength::Acquire(_) => d == Dir::R,
            Strength::Release(_) => d == Dir::W,
            _ => true,
        }
    }
}

/// The path an access takes to its location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EvProxy {
    /// The location's own generic address.
    Generic,
    /// A second generic virtual address of the location (`x_a @ generic aliases x`).
    Alias,
    /// The texture proxy (`tld`; loads only).
    Texture,
    /// The surface proxy (`suld`, `sust`).
    Surface,
    /// The constant proxy (`cold`; loads only).
    Constant,
}

impl EvProxy {
    /// The prefix written before the semantics (`alias_`, `tex_`, ...), empty for generic.
    pub fn prefix(self) -> &'static str {
        match self {
            EvProxy::Generic => "",
            EvProxy::Alias => "alias_",
            EvProxy::Texture => "tex_",
            EvProxy::Surface => "surf_",
            EvProxy::Constant => "const_",
        }
    }
    /// Whether an access in direction `d` can use this path.
    pub fn allows(self, d: Dir) -> bool {
        !matches!((self, d), (EvProxy::Texture | EvProxy::Constant, Dir::W))
    }
}

/// An access annotation: its path and its semantics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ann {
    /// Path to the location.
    pub proxy: EvProxy,
    /// Semantics and scope.
    pub strength: Strength,
}

impl Ann {
    /// A generic access with these semantics.
    pub fn generic(strength: Strength) -> Ann {
        Ann {
            proxy: EvProxy::Generic,
            strength,
        }
    }
    /// Whether an access in direction `d` may carry this annotation.
    pub fn allows(self, d: Dir) -> bool {
        self.proxy.allows(d) && self.strength.allows(d)
    }
    /// The text form without the scope (for names whose scope is written once).
    pub fn unscoped(self) -> String {
        format!("{}{}", self.proxy.prefix(), self.strength.word())
    }
}

impl fmt::Display for Ann {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.unscoped())?;
        if let Some(s) = self.strength.scope() {
            write!(f, ".{s}")?;
        }
        Ok(())
    }
}

/// A thread fence's ordering kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FenceKind {
    /// `fence.sc`.
    Sc,
    /// `fence.acq_rel`.
    AcqRel,
    /// `fence.acquire` (written `fence.acq`).
    Acquire,
    /// `fence.release` (written `fence.rel`).
    Release,
}

impl FenceKind {
    /// The short word used in names and vocabularies.
    pub fn word(self) -> &'static str {
        match self {
            FenceKind::Sc => "sc",
            FenceKind::AcqRel => "acq_rel",
            FenceKind::Acquire => "acq",
            FenceKind::Release => "rel",
        }
    }
    /// The PTX spelling.
    pub fn ptx(self) -> &'static str {
        match self {
            FenceKind::Sc => "sc",
            FenceKind::AcqRel => "acq_rel",
            FenceKind::Acquire => "acquire",
            FenceKind::Release => "release",
        }
    }
}

/// Which path a proxy fence reconciles with the generic one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProxyKind {
    /// `fence.proxy.alias`.
    Alias,
    /// `fence.proxy.texture`.
    Texture,
    /// `fence.proxy.surface`.
    Surface,
    /// `fence.proxy.constant`.
    Constant,
}

impl ProxyKind {
    /// The PTX spelling after `fence.proxy.`.
    pub fn word(self) -> &'static str {
        match self {
            ProxyKind::Alias => "alias",
            ProxyKind::Texture => "texture",
            ProxyKind::Surface => "surface",
            ProxyKind::Constant => "constant",
        }
    }
}

/// What sits between the two accesses of a program-order edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mid {
    /// A thread fence with its scope.
    Fence(FenceKind, Scope),
    /// A proxy fence (no scope).
    Proxy(ProxyKind),
    /// A data dependency: the store's value is computed from the load's
    /// (`xor t, r, r; add t, t, V`: always `V`, syntactically dependent).
    Data,
}

impl Mid {
    /// The scope written on it, if any.
    pub fn scope(self) -> Option<Scope> {
        match self {
            Mid::Fence(_, s) => Some(s),
            Mid::Proxy(_) | Mid::Data => None,
        }
    }
    /// The text form without the scope.
    pub fn unscoped(self) -> String {
        match self {
            Mid::Fence(k, _) => format!("fence.{}", k.word()),
            Mid::Proxy(k) => format!("fence.proxy.{}", k.word()),
            Mid::Data => "data".to_string(),
        }
    }
}

impl fmt::Display for Mid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.unscoped())?;
        if let Some(s) = self.scope() {
            write!(f, ".{s}")?;
        }
        Ok(())
    }
}

/// The communication relations, all external (the two threads differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ComKind {
    /// Reads-from: a write, then a read of its value (`Rfe`).
    Rf,
    /// From-read: a read, then a write coherence-after the one it read (`Fre`).
    Fr,
    /// Coherence: a write, then a coherence-later write (`Coe`, diy's `Wse`).
    Co,
}

impl ComKind {
    /// The diy-style name.
    pub fn word(self) -> &'static str {
        match self {
            ComKind::Rf => "Rfe",
            ComKind::Fr => "Fre",
            ComKind::Co => "Coe",
        }
    }
    /// Directions of its source and target.
    pub fn dirs(self) -> (Dir, Dir) {
        match self {
            ComKind::Rf => (Dir::W, Dir::R),
            ComKind::Fr => (Dir::R, Dir::W),
            ComKind::Co => (Dir::W, Dir::W),
        }
    }
}

/// Where the two threads of a communication edge run relative to each
/// other: the smallest scope instance that contains both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    /// The same CTA.
    Cta,
    /// Different CTAs of one cluster.
    Cluster,
    /// Different clusters of one GPU.
    Gpu,
    /// Different GPUs.
    Sys,
}

impl Place {
    /// All placements, closest first.
    pub const ALL: [Place; 4] = [Place::Cta, Place::Cluster, Place::Gpu, Place::Sys];
    /// The word used in vocabularies and names.
    pub fn word(self) -> &'static str {
        match self {
            Place::Cta => "cta",
            Place::Cluster => "cluster",
            Place::Gpu => "gpu",
            Place::Sys => "sys",
        }
    }
}

/// One edge of a cycle, without the annotations of its endpoints.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Edge {
    /// Program order inside one thread: to a different location (`Pod`) or
    /// the same one (`Pos`), with what sits between the two accesses.
    Po {
        /// `Pos` (same location) rather than `Pod`.
        same_loc: bool,
        /// Fences and dependencies, in program order.
        mids: Vec<Mid>,
    },
    /// An external communication edge and the placement of its two threads.
    Com {
        /// Which relation.
        kind: ComKind,
        /// Where the two threads run.
        place: Place,
    },
}

impl Edge {
    /// Whether this is a communication edge (it moves to another thread).
    pub fn is_com(&self) -> bool {
        matches!(self, Edge::Com { .. })
    }
    /// The cycle-text form of the edge between accesses `src` and `dst`:
    /// `PodWR`, `PodWR{fence.sc.gpu}`, `Rfe.cluster`.
    pub fn text(&self, src: Dir, dst: Dir) -> String {
        match self {
            Edge::Po { same_loc, mids } => {
                let base = format!(
                    "Po{}{}{}",
                    if *same_loc { 's' } else { 'd' },
                    src.letter(),
                    dst.letter()
                );
                if mids.is_empty() {
                    base
                } else {
                    let m: Vec<String> = mids.iter().map(Mid::to_string).collect();
                    format!("{base}{{{}}}", m.join(","))
                }
            }
            Edge::Com { kind, place } => format!("{}.{}", kind.word(), place.word()),
        }
    }
}
