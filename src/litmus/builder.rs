//! Building a [`Program`] from parsed pieces: declarations, threads, code and
//! the condition, with the name resolution both dialects share.

use std::collections::HashMap;

use super::SourceMap;
use super::diag::{Diagnostic, Span};
use super::instr::decode;
use super::raw::{RawInstr, Resolver};
use crate::ir::{
    AddrId, Address, AddressKind, Condition, Expectation, Instr, Label, LocKind, Location,
    Placement, Program, Prop, Quantifier, RegId, Register, Space, SpaceQual, Thread, Value,
};

/// An address declaration before alias targets are resolved.
#[derive(Clone, Debug)]
pub struct AddrDecl {
    /// The declared name.
    pub name: String,
    /// `None` for a location's own name; otherwise the alias target's name and kind.
    pub alias: Option<(AddressKind, String, Span)>,
    /// Initial value (owners only).
    pub init: Value,
    /// Where the location lives (owners only).
    pub space: Space,
    /// What the location holds (owners only).
    pub kind: LocKind,
    /// Where it was declared.
    pub span: Span,
}

/// Accumulates a program while a dialect parser walks the file.
pub struct Builder {
    /// Test name.
    pub name: String,
    /// Doc strings.
    pub docs: Vec<String>,
    pub(super) locations: Vec<Location>,
    addresses: Vec<Address>,
    by_name: HashMap<String, AddrId>,
    /// Threads built so far.
    pub threads: Vec<Thread>,
    /// Positions of everything, for later diagnostics.
    pub spans: SourceMap,
    /// How an unknown address should have been declared, for messages.
    pub declare_hint: &'static str,
    /// herd's rule: a location used but not declared is created, initially 0
    /// (the Dat3M dialect); otherwise an unknown name is an error (mixedproxy).
    pub implicit_locations: bool,
    /// Per thread: register name → id (the IR's lists are searched linearly).
    reg_index: Vec<HashMap<String, RegId>>,
    /// Per thread: label name → index in `Thread::labels`.
    label_index: Vec<HashMap<String, usize>>,
    /// The `elect.sync` sites so far.
    elects: Vec<crate::ir::ElectSite>,
    /// Tensor maps declared in the init block (`NAME @ tensormap ...`).
    pub tensor_maps: HashMap<String, super::tensor::TensorMap>,
}

impl Builder {
    /// An empty program named `name`.
    pub fn new(name: String) -> Self {
        Builder {
            name,
            docs: Vec::new(),
            locations: Vec::new(),
            addresses: Vec::new(),
            by_name: HashMap::new(),
            threads: Vec::new(),
            spans: SourceMap::default(),
            declare_hint: "a location declared in the init block",
            implicit_locations: false,
            reg_index: Vec::new(),
            label_index: Vec::new(),
            elects: Vec::new(),
            tensor_maps: HashMap::new(),
        }
    }

    /// Declare all addresses at once, so that aliases may refer forward.
    pub fn declare_addresses(&mut self, decls: &[AddrDecl]) -> Result<(), Diagnostic> {
        for d in decls {
            if self.by_name.contains_key(&d.name) {
                return Err(Diagnostic::expected(
                    d.span,
                    "a new name",
                    format!("`{}`, declared twice", d.name),
                )
                .with_label("already declared"));
            }
            self.by_name.insert(d.name.clone(), self.by_name.len());
        }
        // Resolve each declaration's owner (following alias chains) with
        // cycle detection. Each declaration is walked once: a chain stops at
        // the first declaration whose owner is known, and every declaration
        // it passed gets that owner (linear in the block, however the
        // aliases are chained).
        let n = decls.len();
        let mut owner: Vec<Option<usize>> = vec![None; n];
        let mut on_chain = vec![false; n];
        let mut chain = Vec::new();
        for i in 0..n {
            chain.clear();
            let mut cur = i;
            let root = loop {
                if let Some(o) = owner[cur] {
                    break o;
                }
                if on_chain[cur] {
                    return Err(Diagnostic::expected(
                        decls[i].span,
                        "an alias chain that ends at a location",
                        "a cycle of aliases",
                    ));
                }
                on_chain[cur] = true;
                chain.push(cur);
                match &decls[cur].alias {
                    None => break cur,
                    Some((_, target, tspan)) => match self.by_name.get(target) {
                        Some(&t) => cur = t,
                        None => {
                            return Err(Diagnostic::expected(
                                *tspan,
                                "a declared location or address",
                                format!("`{target}`"),
                            )
                            .with_label("not declared in the init block"));
                        }
                    },
                }
            };
            for &c in &chain {
                owner[c] = Some(root);
                on_chain[c] = false;
            }
        }
        let mut loc_of_owner = HashMap::new();
        for (i, d) in decls.iter().enumerate() {
            if d.alias.is_none() {
                loc_of_owner.insert(i, self.locations.len());
                self.locations.push(Location {
                    name: d.name.clone(),
                    init: d.init,
                    space: d.space,
                    kind: d.kind,
                });
            }
        }
        // The virtual address of a proxy reference is its target's: along
        // chains of proxy references, remembered (no recursion, each
        // declaration resolved once; the chains end, as checked above).
        let mut va: Vec<Option<usize>> = vec![None; n];
        for i in 0..n {
            chain.clear();
            let mut cur = i;
            let root = loop {
                if let Some(v) = va[cur] {
                    break v;
                }
                match &decls[cur].alias {
                    Some((kind, target, _)) if *kind != AddressKind::Generic => {
                        chain.push(cur);
                        cur = self.by_name[target];
                    }
                    _ => {
                        chain.push(cur);
                        break cur;
                    }
                }
            };
            for &c in &chain {
                va[c] = Some(root);
            }
        }
        for (i, d) in decls.iter().enumerate() {
            let loc = loc_of_owner[&owner[i].unwrap()];
            let (kind, alias_of) = match &d.alias {
                None => (AddressKind::Generic, None),
                Some((k, t, _)) => (*k, Some(self.by_name[t])),
            };
            let va = va[i].unwrap();
            self.addresses.push(Address {
                name: d.name.clone(),
                loc,
                va,
                kind,
                alias_of,
            });
        }
        Ok(())
    }

    /// Look up an address by name.
    pub fn address(&self, name: &str) -> Option<AddrId> {
        self.by_name.get(name).copied()
    }

    /// The physical location an address maps to.
    pub fn location_of(&self, addr: AddrId) -> crate::ir::LocId {
        self.addresses[addr].loc
    }

    /// Add a thread with its placement; returns its index.
    pub fn add_thread(&mut self, placement: Placement, span: Span) -> usize {
        let i = self.threads.len();
        self.threads.push(Thread {
            name: format!("P{i}"),
            placement,
            regs: Vec::new(),
            code: Vec::new(),
            labels: Vec::new(),
            agent: None,
            sites: Vec::new(),
            wrap_rmw: false,
        });
        self.spans.threads.push(span);
        self.spans.instrs.push(Vec::new());
        self.spans.initialised.push(Vec::new());
        self.reg_index.push(HashMap::new());
        self.label_index.push(HashMap::new());
        i
    }

    /// The register `name` of `thread`, if it has one.
    pub fn reg_named(&self, thread: usize, name: &str) -> Option<RegId> {
        self.reg_index[thread].get(name).copied()
    }

    /// The register `name` of `thread`, created (initially 0) on first mention.
    pub fn register(&mut self, thread: usize, name: &str) -> RegId {
        if let Some(r) = self.reg_named(thread, name) {
            return r;
        }
        let regs = &mut self.threads[thread].regs;
        regs.push(Register {
            name: name.to_string(),
            init: 0,
        });
        self.reg_index[thread].insert(name.to_string(), regs.len() - 1);
        regs.len() - 1
    }

    /// The address `name` used by an instruction or a condition but not
    /// declared: under herd's rule a new global location, initially 0, that
    /// is its own (generic) virtual address; otherwise an error.
    pub fn implicit_address(&mut self, name: &str, span: Span) -> Result<AddrId, Diagnostic> {
        if !self.implicit_locations {
            return Err(
                Diagnostic::expected(span, self.declare_hint, format!("`{name}`"))
                    .with_label("unknown location"),
            );
        }
        if let Some(t) = (0..self.threads.len()).find(|&t| self.reg_named(t, name).is_some()) {
            return Err(Diagnostic::expected(
                span,
                "a location",
                format!("`{name}`, a register of P{t}"),
            )
            .with_label("a name is a register or a location, not both"));
        }
        let id = self.addresses.len();
        self.by_name.insert(name.to_string(), id);
        self.addresses.push(Address {
            name: name.to_string(),
            loc: self.locations.len(),
            va: id,
            kind: AddressKind::Generic,
            alias_of: None,
        });
        self.locations.push(Location {
            name: name.to_string(),
            init: 0,
            space: Space::Global,
            kind: LocKind::Data,
        });
        Ok(id)
    }

    /// Set a register's initial value; a second initialisation is an error.
    pub fn init_register(
        &mut self,
        thread: usize,
        name: &str,
        value: Value,
        span: Span,
    ) -> Result<(), Diagnostic> {
        if self.reg_named(thread, name).is_some() {
            return Err(Diagnostic::expected(
                span,
                "one initial value per register",
                format!("a second one for `{name}`"),
            ));
        }
        if self.by_name.contains_key(name) {
            return Err(Diagnostic::expected(
                span,
                "a register name",
                format!("location `{name}`"),
            ));
        }
        let r = self.register(thread, name);
        self.threads[thread].regs[r].init = value;
        self.spans.initialised[thread].push(r);
        Ok(())
    }

    /// Decode and append one instruction to `thread`, returning its branch label if any.
    pub fn push_instr(
        &mut self,
        thread: usize,
        raw: &RawInstr,
    ) -> Result<Option<(String, Span)>, Diagnostic> {
        let mut ctx = ThreadCtx { b: self, thread };
        let d = decode(raw, &mut ctx)?;
        if let Some((dst, pred)) = d.elect {
            self.elects.push(crate::ir::ElectSite {
                thread,
                pc: self.threads[thread].code.len(),
                dst,
                pred,
            });
        }
        let mut rest = d.rest;
        if let Instr::Tensor { op } = &d.instr {
            // A wait delivers the register results of the operations it
            // completes (`ir::tensor_core::results_of_wait`).
            rest.extend(
                crate::ir::tensor_core::results_of_wait(&self.threads[thread].code, op)
                    .into_iter()
                    .map(|op| Instr::Tensor { op }),
            );
        }
        for i in std::iter::once(d.instr).chain(rest) {
            self.threads[thread].code.push(i);
            self.spans.instrs[thread].push(raw.span);
        }
        // `.joined` (`ir::copies`) continues the thread's previous copy.
        let th = &self.threads[thread];
        let n = th.code.len();
        if let Some(Instr::AsyncCopy {
            kind,
            completion,
            joined: true,
            ..
        }) = th.code.last()
        {
            // Back to the previous copy, through no label or branch.
            let prev = (0..n - 1)
                .rev()
                .take_while(|&pc| {
                    !th.labels.iter().any(|l| l.at == pc + 1)
                        && !matches!(th.code[pc], Instr::Branch { .. })
                })
                .find_map(|pc| match &th.code[pc] {
                    c @ Instr::AsyncCopy { .. } => Some(c),
                    _ => None,
                });
            let fits = matches!(prev, Some(Instr::AsyncCopy { kind: k, completion: c, .. })
                if k == kind && c == completion);
            if !fits {
                return Err(Diagnostic::expected(
                    raw.span,
                    "a `.joined` copy after a copy of the same kind and completion (no label or branch in between)",
                    match prev {
                        Some(_) => "a copy of another kind or completion before it",
                        None => "no copy before it",
                    },
                )
                .with_note(
                    "`.joined` is ptxmc's, not PTX's: the printer writes it on the second and later \
                     element copies of one tensor or multicast copy, whose bytes the GPU may complete \
                     in any chunks (docs/async.md 8)",
                ));
            }
        }
        Ok(d.label)
    }

    /// Place a label before the next instruction of `thread`.
    pub fn push_label(&mut self, thread: usize, name: &str, span: Span) -> Result<(), Diagnostic> {
        let t = &mut self.threads[thread];
        if self.label_index[thread].contains_key(name) {
            return Err(Diagnostic::expected(
                span,
                format!("a label not yet defined in {}", t.name),
                format!("`{name}` again"),
            ));
        }
        self.label_index[thread].insert(name.to_string(), t.labels.len());
        t.labels.push(Label {
            name: name.to_string(),
            at: t.code.len(),
        });
        Ok(())
    }

    /// Patch branch targets of `thread` once all its labels are known.
    pub fn resolve_branches(
        &mut self,
        thread: usize,
        refs: &[(usize, String, Span)],
    ) -> Result<(), Diagnostic> {
        let t = &mut self.threads[thread];
        for (pc, name, span) in refs {
            let Some(l) = self.label_index[thread].get(name).map(|&i| &t.labels[i]) else {
                return Err(Diagnostic::expected(
                    *span,
                    format!("a label of {}", t.name),
                    format!("`{name}`"),
                )
                .with_label("no such label in this thread"));
            };
            if let Instr::Branch { target, .. } = &mut t.code[*pc] {
                *target = l.at;
            }
        }
        Ok(())
    }

    /// Finish with the final condition.
    pub fn finish(
        self,
        quantifier: Quantifier,
        prop: Prop,
        expectation: Option<Expectation>,
    ) -> (Program, SourceMap) {
        let mut program = Program {
            name: self.name,
            docs: self.docs,
            locations: self.locations,
            addresses: self.addresses,
            threads: self.threads,
            condition: Condition { quantifier, prop },
            filter: None,
            shown: Vec::new(),
            expectation,
            elects: self.elects,
            granularity: Default::default(),
            tc_early: Vec::new(),
            short_warpgroups: Vec::new(),
            tc_unfenced: Vec::new(),
        };
        crate::ir::elect::apply_first(&mut program);
        crate::ir::activemask::apply_first(&mut program);
        (program, self.spans)
    }
}

/// Resolution context for one thread's instructions.
struct ThreadCtx<'b> {
    b: &'b mut Builder,
    thread: usize,
}

impl Resolver for ThreadCtx<'_> {
    fn register(&mut self, name: &str, _span: Span) -> Result<RegId, Diagnostic> {
        Ok(self.b.register(self.thread, name))
    }
    fn tensor_map(&self, name: &str) -> Option<super::tensor::TensorMap> {
        self.b.tensor_maps.get(name).cloned()
    }
    fn cluster_rank(&self, addr: AddrId) -> Option<u32> {
        // A litmus cluster's CTAs are those its threads are placed in; their
        // ranks follow their CTA numbers.
        let Space::Shared { gpu, cta } = self.b.locations[self.b.addresses[addr].loc].space else {
            return None;
        };
        let placed = |c: u32| {
            self.b
                .threads
                .iter()
                .find(|t| t.placement.gpu == gpu && t.placement.cta == c)
                .map(|t| t.placement.cluster)
        };
        let cluster = placed(cta)?;
        let mut ctas: Vec<u32> = self
            .b
            .threads
            .iter()
            .filter(|t| t.placement.gpu == gpu && t.placement.cluster == cluster)
            .map(|t| t.placement.cta)
            .collect();
        ctas.sort_unstable();
        ctas.dedup();
        ctas.iter().position(|&c| c == cta).map(|k| k as u32)
    }
    fn address(&self, name: &str) -> Option<AddrId> {
        self.b.address(name)
    }
    fn unknown_address(&mut self, name: &str, span: Span) -> Result<AddrId, Diagnostic> {
        self.b.implicit_address(name, span)
    }
    fn check_space(
        &self,
        addr: AddrId,
        qual: Option<SpaceQual>,
        mbarrier: bool,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let a = &self.b.addresses[addr];
        let loc = &self.b.locations[a.loc];
        let me = self.b.threads[self.thread].placement;
        let name = &a.name;
        if mbarrier && loc.kind != LocKind::Mbarrier {
            return Err(Diagnostic::expected(
                span,
                "an mbarrier object (declared `NAME @ mbarrier cta N;`)",
                format!("location `{name}`"),
            ));
        }
        if loc.kind == LocKind::TensorMemory {
            return Err(Diagnostic::expected(
                span,
                if mbarrier {
                    "an mbarrier object (declared `NAME @ mbarrier cta N;`)"
                } else {
                    "an ordinary location"
                },
                format!("tensor-memory cell `{name}`"),
            )
            .with_label("tensor memory is accessed by tcgen05 instructions only"));
        }
        if !mbarrier && loc.kind == LocKind::Mbarrier {
            return Err(Diagnostic::expected(
                span,
                "an ordinary location",
                format!("mbarrier `{name}`"),
            )
            .with_label("mbarrier objects are accessed by mbarrier operations only"));
        }
        let shared = |gpu: u32, cta: u32| {
            format!("`{name}`, in the shared memory of CTA {cta} of GPU {gpu}")
        };
        match (loc.space, qual) {
            (Space::Global, None | Some(SpaceQual::Global)) => Ok(()),
            (Space::Global, Some(q)) => Err(Diagnostic::expected(
                span,
                format!("a location in shared memory for `.{}`", q.as_str()),
                format!("global location `{name}`"),
            )),
            (Space::Shared { gpu, cta }, Some(SpaceQual::Global)) => Err(Diagnostic::expected(
                span,
                "a global location for `.global`",
                shared(gpu, cta),
            )),
            (Space::Shared { gpu, cta }, None | Some(SpaceQual::Shared | SpaceQual::SharedCta)) => {
                if (gpu, cta) == (me.gpu, me.cta) {
                    Ok(())
                } else {
                    Err(Diagnostic::expected(
                        span,
                        "a location in this thread's own CTA (other CTAs' shared memory needs `.shared::cluster`)",
                        shared(gpu, cta),
                    ))
                }
            }
            (Space::Shared { gpu, cta }, Some(SpaceQual::SharedCluster)) => {
                let cluster = self
                    .b
                    .threads
                    .iter()
                    .find(|t| t.placement.gpu == gpu && t.placement.cta == cta)
                    .map(|t| t.placement.cluster);
                if gpu == me.gpu && ((gpu, cta) == (me.gpu, me.cta) || cluster == Some(me.cluster))
                {
                    Ok(())
                } else {
                    Err(Diagnostic::expected(
                        span,
                        "a location in the shared memory of a CTA of this thread's cluster",
                        shared(gpu, cta),
                    ))
                }
            }
        }
    }
    fn is_tensor_memory(&self, addr: AddrId) -> bool {
        self.b.locations[self.b.addresses[addr].loc].kind == LocKind::TensorMemory
    }
    fn check_tensor_cta(&self, addr: AddrId, span: Span) -> Result<(), Diagnostic> {
        let a = &self.b.addresses[addr];
        let me = self.b.threads[self.thread].placement;
        match self.b.locations[a.loc].space {
            Space::Shared { gpu, cta } if (gpu, cta) == (me.gpu, me.cta) => Ok(()),
            Space::Shared { gpu, cta } => Err(Diagnostic::expected(
                span,
                "a tensor-memory cell of this thread's own CTA",
                format!(
                    "`{}`, in the tensor memory of CTA {cta} of GPU {gpu}",
                    a.name
                ),
            )),
            Space::Global => Err(Diagnostic::expected(
                span,
                "a tensor-memory cell of this thread's own CTA",
                format!("global location `{}`", a.name),
            )),
        }
    }
}

/// Refuse, at its position, an `activemask` the partition model does not
/// cover exactly (`ir::activemask::check`: on a loop, executed by more
/// lanes of one warp than it admits, or with a result that may flow back
/// before the lanes meet).
pub fn check_activemask(program: &Program, spans: &SourceMap) -> Result<(), Diagnostic> {
    crate::ir::activemask::check(program).map_err(|r| {
        Diagnostic::expected(
            spans.instr(r.thread, r.pc),
            format!(
                "an `activemask` that each lane executes at most once, in at most {} lanes of a \
                 warp, whose result cannot flow back before the lanes meet",
                crate::ir::activemask::MAX_LANES
            ),
            r.found,
        )
        .with_label("not supported by ptxmc")
        .with_note(r.note)
    })
}
