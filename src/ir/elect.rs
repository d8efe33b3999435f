//! Which lane `elect.sync` elects (`docs/warps.md`, "`elect.sync`").
//!
//! PTX ISA, "Parallel Synchronization and Communication Instructions:
//! elect.sync": *"Election of a leader thread happens deterministically,
//! i.e. the same leader thread is elected for the same membermask every
//! time."* The leader is a fixed but unspecified function of the mask: per
//! warp and mask value, one of the mask's lanes, the same at every execution
//! of every `elect.sync` of that warp with that mask. A program's outcomes
//! are the union, over every such function (a *choice*: one candidate lane
//! per group), of the program whose `elect.sync` results are that choice's
//! constants. The parsed program carries choice 0 (the lowest lane of each
//! mask); the engines run every choice ([`choices`], [`apply`]).

use super::{ElectSite, Instr, Operand, Program, Value};

/// One warp and mask value: the lanes the leader is chosen from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The warp: GPU, CTA and its `warp` number, or `-1 - thread` for a
    /// thread alone in its warp.
    pub warp: (u32, u32, Value),
    /// The membermask (low 32 bits).
    pub mask: Value,
    /// Lane ids of the warp's lanes that the mask names, lowest first (a
    /// lane the test does not have never runs and is never elected).
    pub candidates: Vec<u32>,
}

/// The mask of a site: its barrier's immediate operand (a register mask is
/// refused by the front ends).
fn mask_of(p: &Program, s: &ElectSite) -> Value {
    match &p.threads[s.thread].code[s.pc] {
        Instr::Barrier { id, .. } => match id.first() {
            Some(Operand::Imm(m)) => m & 0xffff_ffff,
            _ => 0,
        },
        _ => 0,
    }
}

fn warp_of(p: &Program, t: usize) -> (u32, u32, Value) {
    let pl = p.threads[t].placement;
    match pl.warp {
        Some(w) if p.threads[t].agent.is_none() => (pl.gpu, pl.cta, Value::from(w)),
        _ => (pl.gpu, pl.cta, -1 - t as Value),
    }
}

/// The groups of `p`'s `elect.sync` sites, in order of first appearance.
pub fn groups(p: &Program) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for s in &p.elects {
        let warp = warp_of(p, s.thread);
        let mask = mask_of(p, s);
        if out.iter().any(|g| g.warp == warp && g.mask == mask) {
            continue;
        }
        let candidates = (0..p.warp_lanes(s.thread).len().min(32) as u32)
            .filter(|l| mask >> l & 1 == 1)
            .collect();
        out.push(Group {
            warp,
            mask,
            candidates,
        });
    }
    out
}

/// How many choices there are (saturating).
pub fn count(groups: &[Group]) -> u64 {
    groups.iter().fold(1u64, |n, g| {
        n.saturating_mul(g.candidates.len().max(1) as u64)
    })
}

/// Every choice, as one candidate index per group, in lexicographic order
/// (choice 0 first); lazily, since their number is a product.
pub fn choices(groups: &[Group]) -> impl Iterator<Item = Vec<usize>> + '_ {
    let mut next = Some(vec![0usize; groups.len()]);
    std::iter::from_fn(move || {
        let cur = next.take()?;
        let mut succ = cur.clone();
        // Odometer, last group fastest.
        for i in (0..groups.len()).rev() {
            if succ[i] + 1 < groups[i].candidates.len() {
                succ[i] += 1;
                next = Some(succ);
                break;
            }
            succ[i] = 0;
        }
        Some(cur)
    })
}

/// Write choice `choice` (one candidate index per group of `groups`) into
/// the `mov`s of `p`'s sites: `d` = the leader's lane id, `p` = 1 in the
/// leader, 0 elsewhere.
pub fn apply(p: &mut Program, groups: &[Group], choice: &[usize]) {
    let sites = p.elects.clone();
    for s in &sites {
        let warp = warp_of(p, s.thread);
        let mask = mask_of(p, s);
        let Some(gi) = groups.iter().position(|g| g.warp == warp && g.mask == mask) else {
            continue;
        };
        let leader = groups[gi]
            .candidates
            .get(choice[gi])
            .copied()
            .map_or(-1, Value::from);
        let me = p.lane_id(s.thread) as Value;
        let (d, pr) = s.movs();
        let code = &mut p.threads[s.thread].code;
        if let Some(Instr::Mov { src, .. }) = d.and_then(|pc| code.get_mut(pc)) {
            *src = Operand::Imm(leader);
        }
        if let Some(Instr::Mov { src, .. }) = pr.and_then(|pc| code.get_mut(pc)) {
            *src = Operand::Imm(Value::from(me == leader));
        }
    }
}

/// Write choice 0 (the lowest lane of each mask): what a parsed program carries.
pub fn apply_first(p: &mut Program) {
    if p.elects.is_empty() {
        return;
    }
    let g = groups(p);
    apply(p, &g, &vec![0; g.len()]);
}

/// The most leader choices a stepping session ([`Variants`]) holds: each is
/// a program and a machine of its own.
pub const MAX_VARIANTS: u64 = 256;

/// A program with more leader choices than [`MAX_VARIANTS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyLeaders {
    /// How many choices it has (saturating).
    pub choices: u64,
    /// Whether `activemask` blocks are among them.
    pub activemask: bool,
}

impl std::fmt::Display for TooManyLeaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.activemask {
            return write!(
                f,
                "{} choices of `elect.sync` leader and `activemask` lanes, more than the \
                 {MAX_VARIANTS} a stepping session holds (fewer lanes should execute them)",
                self.choices
            );
        }
        write!(
            f,
            "{} choices of `elect.sync` leader, more than the {MAX_VARIANTS} a stepping session \
             holds (elect among fewer lanes)",
            self.choices
        )
    }
}

impl std::error::Error for TooManyLeaders {}

/// Every choice of leader of a program, each with the program whose
/// `elect.sync` results are that choice's (what `ptxmc step`, `trace` and
/// `explain` run: they follow one choice, the one a witness needs). The
/// groups with a single candidate are fixed; each *free* group (two
/// candidates or more) is one leader step of a stepping session.
///
/// `activemask` instructions (`ir::activemask`) are choices too: after the
/// `elect.sync` groups, one group per warp and instruction, whose options
/// are the partitions of its lanes; one with two lanes or more is free.
#[derive(Clone, Debug)]
pub struct Variants {
    /// The groups ([`groups`]).
    pub groups: Vec<Group>,
    /// The `activemask` groups ([`super::activemask::groups`]): choice
    /// index `groups.len() + i` is group `i`'s partition.
    pub masks: Vec<super::activemask::Group>,
    /// The groups with two options or more, in group order (`elect.sync`
    /// groups, then `activemask` ones).
    pub free: Vec<usize>,
    /// Every choice (one candidate index per group, then one partition
    /// index per `activemask` group) and its program, choice 0 first
    /// ([`choices`]' order).
    pub programs: Vec<(Vec<usize>, Program)>,
}

impl Variants {
    /// Every choice of `p`; `Err` beyond [`MAX_VARIANTS`].
    pub fn of(p: &Program) -> Result<Variants, TooManyLeaders> {
        use super::activemask;
        let groups = groups(p);
        let masks = activemask::groups(p);
        let n = count(&groups).saturating_mul(activemask::count(&masks));
        if n > MAX_VARIANTS {
            return Err(TooManyLeaders {
                choices: n,
                activemask: activemask::count(&masks) > 1,
            });
        }
        let free = (0..groups.len())
            .filter(|&g| groups[g].candidates.len() > 1)
            .chain(
                (0..masks.len())
                    .filter(|&m| masks[m].lanes.len() > 1)
                    .map(|m| groups.len() + m),
            )
            .collect();
        let programs = if n <= 1 {
            vec![(vec![0; groups.len() + masks.len()], p.clone())]
        } else {
            let mut out = Vec::new();
            for c in choices(&groups) {
                for m in activemask::choices(&masks) {
                    let mut v = p.clone();
                    apply(&mut v, &groups, &c);
                    activemask::apply(&mut v, &masks, &m);
                    out.push((c.iter().chain(&m).copied().collect(), v));
                }
            }
            out
        };
        Ok(Variants {
            groups,
            masks,
            free,
            programs,
        })
    }

    /// How many options free group `free` has: its candidates, or its
    /// lanes' partitions.
    pub fn options(&self, free: usize) -> usize {
        let g = self.free[free];
        match self.groups.get(g) {
            Some(g) => g.candidates.len(),
            None => super::activemask::bell(self.masks[g - self.groups.len()].lanes.len()) as usize,
        }
    }

    /// The step kind of free group `free` (a trace step's kind).
    pub fn kind(&self, free: usize) -> &'static str {
        if self.free[free] < self.groups.len() {
            "elect"
        } else {
            "activemask"
        }
    }

    /// The step of `activemask` group `m` choosing partition `k`.
    fn describe_mask(&self, m: usize, k: usize) -> (String, String, String) {
        let p = self.first();
        let g = &self.masks[m];
        let names: Vec<&str> = g
            .lanes
            .iter()
            .map(|&t| p.threads[t].name.as_str())
            .collect();
        let t = g.lanes[0];
        let th = &p.threads[t];
        let instruction = (0..th.code.len())
            .find(|&pc| {
                th.site(pc) == g.site
                    && matches!(
                        th.code[pc],
                        Instr::Barrier {
                            kind: super::BarrierKind::ActiveMask,
                            ..
                        }
                    )
            })
            .and_then(|pc| match th.code.get(pc + 1) {
                Some(Instr::Mov { dst, .. }) => {
                    Some(format!("activemask.b32 {}", th.regs[*dst].name))
                }
                _ => None,
            })
            .unwrap_or_else(|| "activemask.b32".to_string());
        let parts = super::activemask::partitions(g.lanes.len());
        let part = &parts[k];
        let blocks = part.iter().max().map_or(0, |m| m + 1);
        let text: Vec<String> = (0..blocks)
            .map(|b| {
                let lanes: Vec<&str> = (0..g.lanes.len())
                    .filter(|&i| part[i] == b)
                    .map(|i| names[i])
                    .collect();
                lanes.join(",")
            })
            .collect();
        let pl = th.placement;
        let w = pl.warp.map_or_else(|| "-".to_string(), |w| w.to_string());
        let action = format!(
            "lanes together: {}, at its every execution in warp {w} of cta {}, gpu {} (choice {} \
             of {})",
            text.join(" | "),
            pl.cta,
            pl.gpu,
            k + 1,
            parts.len()
        );
        (names.join(","), instruction, action)
    }

    /// The parsed program (choice 0).
    pub fn first(&self) -> &Program {
        &self.programs[0].1
    }

    /// The variants whose leaders of the first `picks.len()` free groups
    /// are `picks` (candidate indices), in order.
    pub fn consistent<'a>(&'a self, picks: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
        self.programs
            .iter()
            .enumerate()
            .filter(move |(_, (c, _))| picks.iter().zip(&self.free).all(|(&k, &g)| c[g] == k))
            .map(|(i, _)| i)
    }

    /// The candidate indices variant `v` picks in the free groups.
    pub fn picks(&self, v: usize) -> Vec<usize> {
        self.free.iter().map(|&g| self.programs[v].0[g]).collect()
    }

    /// The leader step of free group `free` choosing candidate `k`, as a
    /// trace shows it: the lanes that execute the group's `elect.sync`, the
    /// instruction as written, and what the choice fixes.
    pub fn describe(&self, free: usize, k: usize) -> (String, String, String) {
        if self.free[free] >= self.groups.len() {
            return self.describe_mask(self.free[free] - self.groups.len(), k);
        }
        let p = self.first();
        let g = &self.groups[self.free[free]];
        let sites: Vec<&ElectSite> = p
            .elects
            .iter()
            .filter(|s| warp_of(p, s.thread) == g.warp && mask_of(p, s) == g.mask)
            .collect();
        let mut threads: Vec<usize> = sites.iter().map(|s| s.thread).collect();
        threads.sort_unstable();
        threads.dedup();
        let names: Vec<&str> = threads
            .iter()
            .map(|&t| p.threads[t].name.as_str())
            .collect();
        let instruction = sites.first().map_or_else(String::new, |s| {
            let t = &p.threads[s.thread];
            let (d, pr) = s.movs();
            let reg = |m: Option<usize>| match m.and_then(|m| t.code.get(m)) {
                Some(Instr::Mov { dst, .. }) => t.regs[*dst].name.clone(),
                _ => "_".to_string(),
            };
            format!("elect.sync {}, {}, {:#x}", reg(d), reg(pr), g.mask)
        });
        let lane = g.candidates[k];
        let lanes = sites
            .first()
            .map(|s| p.warp_lanes(s.thread))
            .unwrap_or_default();
        let who = lanes
            .get(lane as usize)
            .map_or_else(String::new, |&t| format!(" ({})", p.threads[t].name));
        let (gpu, cta, w) = g.warp;
        let action = format!(
            "leader: lane {lane}{who}, for every execution with mask {:#x} in warp {w} of cta {cta}, \
             gpu {gpu} (choice {} of {})",
            g.mask,
            k + 1,
            g.candidates.len()
        );
        (names.join(","), instruction, action)
    }

    /// One line per free group naming the leader variant `v` elects, e.g.
    /// `elect.sync leader of warp 0 of cta 0, gpu 0, mask 0x3: lane 1 (P1)`.
    pub fn leaders_text(&self, v: usize) -> Vec<String> {
        let picks = self.picks(v);
        (0..self.free.len())
            .map(|f| {
                let (threads, instruction, action) = self.describe(f, picks[f]);
                format!("{threads} `{instruction}` {action}")
            })
            .collect()
    }
}
