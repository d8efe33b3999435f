//! `ptxmc gen`: the generated sets (classic verdicts, canonical forms,
//! round trips, shards, determinism) and the command line.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use ptxmc::engine::{self, RunOptions};
use ptxmc::generate::{self, GenOptions, Shard, vocab};
use ptxmc::ir::{CmpOp, Instr, Program, Prop, Term};
use rayon::prelude::*;

fn ptxmc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("ptxmc runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ptxmc-gen-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every file of a directory with its contents.
fn files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

/// The verdicts `litmus/expected.csv` pins, by path.
fn pinned() -> HashMap<String, bool> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus/expected.csv"))
            .unwrap();
    text.lines()
        .map(|l| {
            let (p, v) = l.rsplit_once(',').unwrap();
            (p.to_string(), v == "1")
        })
        .collect()
}

/// Generated tests of the default vocabulary (up to 6 edges) that are the
/// classic shapes of `litmus/`, with the hand-written test whose verdict
/// they must share. Generated placements: `@cluster` = two CTAs of one
/// cluster (the library's default placement), `@cta` = `-same-cta`,
/// `@gpu` = `-diff-cluster`. Accesses the edges leave unannotated are
/// `.relaxed.gpu`, where some hand-written tests use weak or other scopes;
/// the notes say why the verdict carries over.
const CLASSICS: &[(&str, &str)] = &[
    (
        "MP+weak-rel+acq-weak.gpu@cluster",
        "litmus/mp/MP+rel+acq.gpu.litmus",
    ),
    (
        "MP+weak-rel+acq-weak.gpu@gpu",
        "litmus/mp/MP+rel+acq.gpu-diff-cluster.litmus",
    ),
    (
        "MP+weak-rel+acq-weak.cta@cluster",
        "litmus/mp/MP+rel+acq.cta.litmus",
    ),
    (
        "MP+weak-rel+acq-weak.cta@cta",
        "litmus/mp/MP+rel+acq.cta-same-cta.litmus",
    ),
    (
        "MP+weak-rel+acq-weak.cluster@cluster",
        "litmus/mp/MP+rel+acq.cluster.litmus",
    ),
    (
        "MP+weak-rel+acq-weak.cluster@gpu",
        "litmus/mp/MP+rel+acq.cluster-diff-cluster.litmus",
    ),
    ("MP+rlx-rlx.gpu@cluster", "litmus/mp/MP+rlx+rlx.gpu.litmus"),
    ("SB+rlx-rlx.gpu@cluster", "litmus/sb/SB+rlx.gpu.litmus"),
    // Relaxed instead of weak accesses: the fences still order them.
    (
        "SB+rlx-fence.sc-rlx.gpu@cluster",
        "litmus/sb/SB+fence.sc.gpu.litmus",
    ),
    (
        "SB+rlx-fence.acq_rel-rlx.gpu@cluster",
        "litmus/sb/SB+rlx-fence.acq_rel-rlx.gpu.litmus",
    ),
    // .cluster fences, accesses relaxed at .gpu: the fences decide.
    (
        "SB+rlx.gpu-fence.sc.cluster-rlx.gpu@cluster",
        "litmus/sb/SB+fence.sc.cluster.litmus",
    ),
    (
        "SB+rlx.gpu-fence.sc.cluster-rlx.gpu@gpu",
        "litmus/sb/SB+fence.sc.cluster-diff-cluster.litmus",
    ),
    (
        "SB+rlx.gpu-fence.sc.cta-rlx.gpu@cluster",
        "litmus/sb/SB+fence.sc.cta.litmus",
    ),
    (
        "SB+rlx.gpu-fence.sc.cta-rlx.gpu@cta",
        "litmus/sb/SB+fence.sc.cta-same-cta.litmus",
    ),
    ("LB+rlx-rlx.gpu@cluster", "litmus/lb/LB+rlx.gpu.litmus"),
    (
        "LB+rlx-fence.acq_rel-rlx.gpu@cluster",
        "litmus/lb/LB+rlx-fence.acq_rel-rlx.gpu.litmus",
    ),
    ("LB+acq-rel.gpu@cluster", "litmus/lb/LB+acq-rel.gpu.litmus"),
    (
        "LB+acq-rel.cluster@cluster",
        "litmus/lb/LB+acq-rel.cluster.litmus",
    ),
    (
        "IRIW+rlx+rlx-fence.sc-rlx+rlx+rlx-fence.sc-rlx.gpu@cluster",
        "litmus/iriw/IRIW+rlx-fence.sc-rlx.gpu.litmus",
    ),
    (
        "IRIW+rlx+rlx-rlx+rlx+rlx-rlx.gpu@cluster",
        "litmus/iriw/IRIW+rlx.gpu.litmus",
    ),
    (
        "IRIW+rlx+rlx-fence.acq_rel-rlx+rlx+rlx-fence.acq_rel-rlx.gpu@cluster",
        "litmus/iriw/IRIW+rlx-fence.acq_rel-rlx.gpu.litmus",
    ),
    (
        "2+2W+rlx-rlx.gpu@cluster",
        "litmus/2+2w/2+2W+rlx.gpu.litmus",
    ),
    (
        "2+2W+rlx-fence.sc-rlx.gpu@cluster",
        "litmus/2+2w/2+2W+rlx-fence.sc-rlx.gpu.litmus",
    ),
    (
        "2+2W+rlx-fence.acq_rel-rlx.gpu@cluster",
        "litmus/2+2w/2+2W+rlx-fence.acq_rel-rlx.gpu.litmus",
    ),
    (
        "2+2W+rlx.gpu-fence.sc.cluster-rlx.gpu@cluster",
        "litmus/2+2w/2+2W+rlx-fence.sc-rlx.cluster.litmus",
    ),
    (
        "WRC+rlx+rlx-fence.acq_rel-rlx+rlx-fence.acq_rel-rlx.gpu@cluster",
        "litmus/wrc/WRC+rlx+rlx-fence.acq_rel-rlx+rlx-fence.acq_rel-rlx.gpu.litmus",
    ),
    (
        "ISA2+weak-rel+acq-rel+acq-weak.gpu@cluster",
        "litmus/isa2/ISA2+rel+acq-rel+acq.gpu.litmus",
    ),
    // The store is .relaxed.gpu; the loads decide (strong at .cluster or wider).
    (
        "CoRR+rlx+rlx-rlx.gpu@cluster",
        "litmus/coherence/CoRR+rlx.cluster.litmus",
    ),
    (
        "CoRR+rlx.gpu+rlx.cta-rlx.cta@cluster",
        "litmus/coherence/CoRR+rlx.cta.litmus",
    ),
    (
        "CoRR+rlx.gpu+rlx.cta-rlx.cta@cta",
        "litmus/coherence/CoRR+rlx.cta-same-cta.litmus",
    ),
    (
        "CoRR+rlx+weak-weak.gpu@cluster",
        "litmus/coherence/CoRR+weak.litmus",
    ),
];

#[test]
fn classic_shapes_come_out_with_the_pinned_verdicts() {
    let v = vocab::builtin("default").unwrap();
    let plan = generate::plan(&v, &GenOptions::all(6)).unwrap();
    let pins = pinned();
    let opts = RunOptions::default();
    for (name, file) in CLASSICS {
        let want = *pins
            .get(*file)
            .unwrap_or_else(|| panic!("{file} is pinned in litmus/expected.csv"));
        let k = plan
            .cycles
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .unwrap_or_else(|_| panic!("{name} is generated"));
        let t = generate::build::build(&plan.cycles[k].1).unwrap();
        let r = engine::run(&t.program, &opts);
        assert!(r.disagreement.is_none(), "{name}: engines disagree");
        assert_eq!(r.verdict.holds, want, "{name} (as {file})\n{}", t.text);
    }
}

#[test]
fn message_passing_is_written_as_expected() {
    let v = vocab::builtin("default").unwrap();
    let plan = generate::plan(&v, &GenOptions::all(4)).unwrap();
    let (_, c) = plan
        .cycles
        .iter()
        .find(|(n, _)| n == "MP+weak-rel+acq-weak.gpu@cluster")
        .unwrap();
    let t = generate::build::build(c).unwrap();
    insta::assert_snapshot!(t.text, @r#"
    PTX MP+weak-rel+acq-weak.gpu@cluster
    "Cycle: [weak] PodWW [rel.gpu] Rfe.cluster [acq.gpu] PodRR [weak] Fre.cluster"
    {
    x=0;
    y=0;
    P1:r0=0; P1:r1=0;
    }
     P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;
     st.weak x, 1             | ld.acquire.gpu r0, y     ;
     st.release.gpu y, 1      | ld.weak r1, x            ;
    exists (P1:r0 == 1 /\ P1:r1 == 0)
    "#);
    assert_eq!(
        t.cycle,
        "[weak] PodWW [rel.gpu] Rfe.cluster [acq.gpu] PodRR [weak] Fre.cluster"
    );
}

#[test]
fn coherence_and_isolated_writes_are_written_as_expected() {
    let v = vocab::builtin("default").unwrap();
    let plan = generate::plan(&v, &GenOptions::all(6)).unwrap();
    let text = |name: &str| {
        let (_, c) = plan.cycles.iter().find(|(n, _)| n == name).unwrap();
        generate::build::build(c).unwrap().text
    };
    // Two stores to one location: the coherence order is checked through the final value.
    insta::assert_snapshot!(text("CoRW+rlx+rlx-rlx.gpu@cluster"), @r#"
    PTX CoRW+rlx+rlx-rlx.gpu@cluster
    "Cycle: [rlx.gpu] Rfe.cluster [rlx.gpu] PosRW [rlx.gpu] Coe.cluster"
    {
    x=0;
    P1:r0=0;
    }
     P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;
     st.relaxed.gpu x, 2      | ld.relaxed.gpu r0, x     ;
                              | st.relaxed.gpu x, 1      ;
    exists (P1:r0 == 2 /\ x == 2)
    "#);
    // Placements kept apart where no edge relates two threads.
    insta::assert_snapshot!(text("IRIW+rlx+rlx-fence.sc-rlx+rlx+rlx-fence.sc-rlx.gpu@gpu"), @r#"
    PTX IRIW+rlx+rlx-fence.sc-rlx+rlx+rlx-fence.sc-rlx.gpu@gpu
    "Cycle: [rlx.gpu] Rfe.gpu [rlx.gpu] PodRR{fence.sc.gpu} [rlx.gpu] Fre.gpu [rlx.gpu] Rfe.gpu [rlx.gpu] PodRR{fence.sc.gpu} [rlx.gpu] Fre.gpu"
    {
    x=0;
    y=0;
    P1:r0=0; P1:r1=0;
    P3:r0=0; P3:r1=0;
    }
     P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 1,gpu 0 | P2@cta 2,cluster 2,gpu 0 | P3@cta 3,cluster 3,gpu 0 ;
     st.relaxed.gpu x, 1      | ld.relaxed.gpu r0, x     | st.relaxed.gpu y, 1      | ld.relaxed.gpu r0, y     ;
                              | fence.sc.gpu             |                          | fence.sc.gpu             ;
                              | ld.relaxed.gpu r1, y     |                          | ld.relaxed.gpu r1, x     ;
    exists (P1:r0 == 1 /\ P1:r1 == 0 /\ P3:r0 == 1 /\ P3:r1 == 0)
    "#);
}

#[test]
fn every_builtin_vocabulary_yields_tests_that_print_back_identically() {
    for (name, _, _) in vocab::BUILTIN {
        let v = vocab::builtin(name).unwrap();
        let g = generate::generate(&v, &GenOptions::all(5)).unwrap();
        assert!(!g.tests.is_empty(), "{name}");
        g.tests.par_iter().for_each(|t| {
            let file = generate::file_name(&t.name);
            let parsed = ptxmc::litmus::parse_source(&file, &t.text)
                .unwrap_or_else(|e| panic!("{}", e.rendered()));
            assert_eq!(parsed.len(), 1);
            assert_eq!(parsed[0].program.name, t.name);
            assert_eq!(
                ptxmc::litmus::print::to_litmus(&parsed[0].program),
                t.text,
                "{file}"
            );
            ptxmc::model::Model::Ptx75
                .admit(&parsed[0].program, &parsed[0].spans)
                .unwrap_or_else(|d| panic!("{file}: {}", d.message()));
        });
    }
}

/// A normal form of a test under thread renaming (with their placements),
/// location renaming, value renaming (per location, 0 fixed) and register
/// renaming, computed from the program alone: the least rendering over every
/// order of the threads, each rendering naming locations, values, registers
/// and placement units by first appearance.
fn normal_form(p: &Program) -> String {
    let n = p.threads.len();
    let mut best: Option<String> = None;
    let mut perm: Vec<usize> = (0..n).collect();
    permutations(&mut perm, 0, &mut |order| {
        let s = render(p, order);
        if best.as_ref().is_none_or(|b| s < *b) {
            best = Some(s);
        }
    });
    best.unwrap()
}

fn permutations(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
    if k == v.len() {
        f(v);
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permutations(v, k + 1, f);
        v.swap(k, i);
    }
}

fn first_index<T: PartialEq>(v: &mut Vec<T>, x: T) -> usize {
    v.iter().position(|y| *y == x).unwrap_or_else(|| {
        v.push(x);
        v.len() - 1
    })
}

fn render(p: &Program, order: &[usize]) -> String {
    let mut out = String::new();
    let (mut gpus, mut clusters, mut ctas) = (Vec::new(), Vec::new(), Vec::new());
    let mut locs = Vec::new();
    let mut vas = Vec::new();
    let mut values: HashMap<usize, Vec<i64>> = HashMap::new();
    let mut regs: HashMap<(usize, usize), (usize, usize)> = HashMap::new();
    let mut reg_loc: HashMap<(usize, usize), usize> = HashMap::new();
    for (pos, &t) in order.iter().enumerate() {
        let th = &p.threads[t];
        let pl = th.placement;
        out.push_str(&format!(
            "T[{} {} {}]",
            first_index(&mut gpus, pl.gpu),
            first_index(&mut clusters, (pl.gpu, pl.cluster)),
            first_index(&mut ctas, (pl.gpu, pl.cta)),
        ));
        let mut thread_regs = Vec::new();
        for i in &th.code {
            // A location's virtual addresses are interchangeable: named by first use too.
            let access = |a: &ptxmc::ir::Access, locs: &mut Vec<usize>, vas: &mut Vec<usize>| {
                let addr = &p.addresses[a.addr];
                format!(
                    "{:?}.{:?}.{:?}.va{}@{}",
                    a.sem,
                    a.scope,
                    a.proxy,
                    first_index(vas, addr.va),
                    first_index(locs, addr.loc)
                )
            };
            match i {
                Instr::Load { dst, access: a } => {
                    let r = first_index(&mut thread_regs, *dst);
                    regs.insert((t, *dst), (pos, r));
                    reg_loc.insert((t, *dst), p.addresses[a.addr].loc);
                    out.push_str(&format!(" L{} r{r};", access(a, &mut locs, &mut vas)));
                }
                Instr::Store {
                    src: ptxmc::ir::Operand::Imm(v),
                    access: a,
                } => {
                    let loc = p.addresses[a.addr].loc;
                    let s = access(a, &mut locs, &mut vas);
                    let vals = values.entry(loc).or_default();
                    out.push_str(&format!(" S{s}={};", first_index(vals, *v) + 1));
                }
                Instr::Fence { sem, scope, .. } => out.push_str(&format!(" F{sem:?}.{scope:?};")),
                Instr::ProxyFence { kind } => out.push_str(&format!(" P{kind:?};")),
                other => panic!("unexpected instruction in a generated test: {other:?}"),
            }
        }
    }
    let mut conj = Vec::new();
    let mut stack = vec![&p.condition.prop];
    while let Some(q) = stack.pop() {
        match q {
            Prop::And(a, b) => {
                stack.push(a);
                stack.push(b);
            }
            Prop::Cmp(Term::Reg { thread, reg }, CmpOp::Eq, Term::Const(v)) => {
                let loc = reg_loc[&(*thread, *reg)];
                conj.push(format!(
                    "{:?}={}",
                    regs[&(*thread, *reg)],
                    value(&values, loc, *v)
                ));
            }
            Prop::Cmp(Term::Loc(l), CmpOp::Eq, Term::Const(v)) => {
                let li = locs.iter().position(|x| x == l).unwrap();
                conj.push(format!("@{li}={}", value(&values, *l, *v)));
            }
            other => panic!("unexpected condition in a generated test: {other:?}"),
        }
    }
    conj.sort();
    out.push_str(&format!(" exists {}", conj.join(" ")));
    out
}

fn value(values: &HashMap<usize, Vec<i64>>, loc: usize, v: i64) -> usize {
    if v == 0 {
        return 0;
    }
    values[&loc]
        .iter()
        .position(|x| *x == v)
        .expect("a value some store writes")
        + 1
}

#[test]
fn no_two_generated_tests_are_isomorphic() {
    // Every built-in vocabulary but `deps` (the normal form does not follow
    // register arithmetic), every test up to 6 edges.
    for (name, size) in [("default", 6), ("alias", 6), ("proxy", 6)] {
        let v = vocab::builtin(name).unwrap();
        let g = generate::generate(&v, &GenOptions::all(size)).unwrap();
        let forms: Vec<String> = g
            .tests
            .par_iter()
            .map(|t| normal_form(&t.program))
            .collect();
        let mut seen: HashMap<&str, &str> = HashMap::new();
        for (t, f) in g.tests.iter().zip(&forms) {
            if let Some(other) = seen.insert(f, &t.name) {
                panic!(
                    "{name}: {other} and {} are the same test up to renaming",
                    t.name
                );
            }
        }
        assert_eq!(seen.len(), g.total, "{name}");
    }
}

#[test]
fn normal_form_identifies_renamed_tests() {
    // The check above is only as good as the normal form: two writings of one
    // test (threads swapped, other names and values) must meet.
    let a = "PTX a\n{ x=0; y=0; }\n P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;\n \
             st.weak x, 1 | ld.acquire.gpu r0, y ;\n st.release.gpu y, 1 | ld.weak r1, x ;\n\
             exists (P1:r0 == 1 /\\ P1:r1 == 0)\n";
    let b = "PTX b\n{ f=0; d=0; }\n P0@cta 3,cluster 0,gpu 0 | P1@cta 0,cluster 0,gpu 0 ;\n \
             ld.acquire.gpu q, f | st.weak d, 7 ;\n ld.weak p, d | st.release.gpu f, 5 ;\n\
             exists (P0:p == 0 /\\ P0:q == 5)\n";
    let c = a.replace("st.weak x, 1", "st.relaxed.gpu x, 1");
    // Reading through a second virtual address is another test.
    let d = a
        .replace("{ x=0; y=0; }", "{ x=0; y=0; xa @ generic aliases x; }")
        .replace("ld.weak r1, x", "ld.weak r1, xa");
    let nf = |s: &str| normal_form(&ptxmc::litmus::dat3m::parse(s).unwrap().0);
    assert_eq!(nf(a), nf(b));
    assert_ne!(nf(a), nf(&c));
    assert_ne!(nf(a), nf(&d));
}

#[test]
fn generation_follows_the_critical_cycle_rules() {
    // One placement, relaxed accesses, no fences: the families themselves.
    let v = vocab::parse(
        "plain",
        "plain",
        "default rlx.gpu\nRfe gpu\nFre gpu\nCoe gpu\nPod**\n",
    )
    .unwrap();
    let names = |size| -> Vec<String> {
        generate::plan(&v, &GenOptions::all(size))
            .unwrap()
            .cycles
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    };
    assert!(
        names(3).is_empty(),
        "no critical cycle has fewer than four edges"
    );
    assert_eq!(
        names(4),
        [
            "2+2W+rlx-rlx.gpu@gpu",
            "LB+rlx-rlx.gpu@gpu",
            "MP+rlx-rlx.gpu@gpu",
            "R+rlx-rlx.gpu@gpu",
            "S+rlx-rlx.gpu@gpu",
            "SB+rlx-rlx.gpu@gpu"
        ]
    );
    // Five edges: three threads, one of them a single store between a
    // coherence or from-read edge and a reads-from edge.
    let five: BTreeSet<String> = names(5)
        .into_iter()
        .filter(|n| !names(4).contains(n))
        .map(|n| n.split("+rlx").next().unwrap().to_string())
        .collect();
    let want: BTreeSet<String> = ["RWC", "W+RR+WW", "W+RW+RW", "W+RW+WR", "W+RW+WW", "WRC"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(five, want);
}

#[test]
fn shards_partition_the_set() {
    let v = vocab::builtin("default").unwrap();
    let all: Vec<String> = generate::plan(&v, &GenOptions::all(5))
        .unwrap()
        .cycles
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let mut union = Vec::new();
    for k in 1..=5 {
        let part = generate::plan(
            &v,
            &GenOptions {
                shard: Shard { index: k, count: 5 },
                ..GenOptions::all(5)
            },
        )
        .unwrap();
        assert_eq!(part.total, all.len());
        assert!(!part.cycles.is_empty());
        union.extend(part.cycles.into_iter().map(|(n, _)| n));
    }
    union.sort();
    assert_eq!(union, all);
}

#[test]
fn cli_output_is_deterministic_and_checks_clean() {
    let d = scratch("det");
    let (a, b) = (d.join("a"), d.join("b"));
    let (code, out, err) = ptxmc(&["gen", "--size", "5", "-o", a.to_str().unwrap(), "-j", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Generated 8001 tests (shard 1/1 of 8001 cycles) from vocabulary `default`, up to 5 edges"), "{out}");
    let (code, _, err) = ptxmc(&["gen", "--size", "5", "-o", b.to_str().unwrap(), "-j", "2"]);
    assert_eq!(code, 0, "{err}");
    let (fa, fb) = (files(&a), files(&b));
    assert_eq!(fa.len(), 8002);
    assert!(fa == fb, "the same files for 1 and 2 workers");
    let csv = &fa["expected.csv"];
    assert_eq!(csv.lines().count(), 8001);
    assert!(
        csv.contains("\nMP+weak-rel+acq-weak.gpu@cluster.litmus,0\n"),
        "{csv}"
    );
    let (code, out, err) = ptxmc(&[
        "check",
        "--expected",
        a.join("expected.csv").to_str().unwrap(),
        "--root",
        a.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    // Racy tests pass with a `RACES` line each (weak payloads are generated on purpose).
    assert!(
        out.lines()
            .all(|l| l.starts_with("RACES ") || l == "8001 passed, 0 failed"),
        "{out}"
    );
    assert!(out.ends_with("8001 passed, 0 failed\n"), "{out}");
    // `check --shard` splits the rows the way `gen --shard` splits tests.
    let mut checked = 0;
    for k in 1..=3 {
        let shard = format!("{k}/3");
        let (code, out, err) = ptxmc(&[
            "check",
            "--expected",
            a.join("expected.csv").to_str().unwrap(),
            "--root",
            a.to_str().unwrap(),
            "--shard",
            &shard,
        ]);
        assert_eq!(code, 0, "{err}");
        let summary = out.lines().last().unwrap_or_default();
        let passed: usize = summary.split(' ').next().unwrap().parse().unwrap();
        checked += passed;
        let part = d.join(format!("s{k}"));
        let (code, _, err) = ptxmc(&[
            "gen",
            "--size",
            "5",
            "-o",
            part.to_str().unwrap(),
            "--shard",
            &shard,
        ]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            files(&part)["expected.csv"].lines().count(),
            passed,
            "shard {shard}"
        );
    }
    assert_eq!(checked, 8001);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cli_shards_union_to_the_whole_set() {
    let d = scratch("shards");
    let whole = d.join("whole");
    let (code, _, err) = ptxmc(&[
        "gen",
        "--size",
        "4",
        "--vocab",
        "alias",
        "-o",
        whole.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let whole_files = files(&whole);
    let mut union: BTreeMap<String, String> = BTreeMap::new();
    let mut rows: Vec<String> = Vec::new();
    for k in 1..=4 {
        let part = d.join(format!("p{k}"));
        let shard = format!("{k}/4");
        let (code, _, err) = ptxmc(&[
            "gen",
            "--size",
            "4",
            "--vocab",
            "alias",
            "-o",
            part.to_str().unwrap(),
            "--shard",
            &shard,
        ]);
        assert_eq!(code, 0, "{err}");
        for (f, text) in files(&part) {
            if f == "expected.csv" {
                rows.extend(text.lines().map(String::from));
            } else {
                assert!(union.insert(f, text).is_none(), "a test in two shards");
            }
        }
    }
    rows.sort();
    let mut whole_rows: Vec<String> = whole_files["expected.csv"]
        .lines()
        .map(String::from)
        .collect();
    whole_rows.sort();
    assert_eq!(rows, whole_rows);
    let mut whole_tests = whole_files.clone();
    whole_tests.remove("expected.csv");
    assert!(
        union == whole_tests,
        "the shards' files are the whole set's"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The JSON lines of a run, without the time (which varies), by name.
fn jsonl(out: &str) -> BTreeMap<String, serde_json::Value> {
    out.lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let obj = v.as_object_mut().unwrap();
            assert!(obj.remove("time_s").unwrap().as_f64().unwrap() >= 0.0);
            (obj["name"].as_str().unwrap().to_string(), v)
        })
        .collect()
}

#[test]
fn cli_jsonl_shards_merge_with_cat() {
    let (code, out, err) = ptxmc(&["gen", "--size", "5", "--format", "jsonl"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.starts_with("Generated 8001 tests"), "{err}");
    let whole = jsonl(&out);
    assert_eq!(whole.len(), 8001);
    let mp = &whole["MP+weak-rel+acq-weak.gpu@cluster"];
    assert_eq!(mp["file"], "MP+weak-rel+acq-weak.gpu@cluster.litmus");
    assert_eq!(mp["expected"], 0);
    assert_eq!(mp["holds"], false);
    assert_eq!(mp["edges"], 4);
    assert_eq!(mp["threads"], 2);
    assert_eq!(mp["engine"], "both");
    assert_eq!(mp["outcomes"], 3);
    assert_eq!(mp["positive"], 0);
    assert_eq!(mp["negative"], 3);
    assert_eq!(mp["complete"], true);
    assert_eq!(
        mp["cycle"],
        "[weak] PodWW [rel.gpu] Rfe.cluster [acq.gpu] PodRR [weak] Fre.cluster"
    );
    assert!(
        mp["litmus"]
            .as_str()
            .unwrap()
            .starts_with("PTX MP+weak-rel+acq-weak.gpu@cluster\n")
    );
    let mut cat = String::new();
    for k in 1..=3 {
        let (code, out, err) = ptxmc(&[
            "gen",
            "--size",
            "5",
            "--format",
            "jsonl",
            "--shard",
            &format!("{k}/3"),
        ]);
        assert_eq!(code, 0, "{err}");
        cat.push_str(&out);
    }
    assert_eq!(cat.lines().count(), 8001);
    assert!(jsonl(&cat) == whole, "cat of the shards = the whole set");
}

#[test]
fn cli_reports_limits_with_exit_4_and_writes_no_verdicts() {
    let d = scratch("limit");
    // An earlier run's verdicts do not survive a failed run.
    std::fs::write(d.join("expected.csv"), "stale.litmus,1\n").unwrap();
    let (code, out, err) = ptxmc(&[
        "gen",
        "--size",
        "4",
        "-o",
        d.to_str().unwrap(),
        "--max-states",
        "2",
    ]);
    assert_eq!(code, 4, "{out}{err}");
    assert!(err.contains("error: 2+2W+"), "{err}");
    assert!(
        err.contains(
            "is incomplete: axiomatic engine: the state limit (2) was reached; \
             operational engine: the state limit (2) was reached"
        ),
        "{err}"
    );
    assert!(
        err.ends_with("test(s) incomplete; no verdicts written\n"),
        "{err}"
    );
    assert!(!d.join("expected.csv").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cli_stops_generation_at_the_memory_limit_with_exit_4() {
    let d = scratch("memory");
    let (code, out, err) = ptxmc(&[
        "gen",
        "--size",
        "6",
        "-o",
        d.to_str().unwrap(),
        "--max-memory",
        "1",
    ]);
    assert_eq!(code, 4, "{out}{err}");
    assert!(
        err.starts_with("error: generation stopped: the memory limit (1 MiB) was reached after "),
        "{err}"
    );
    assert!(!d.join("expected.csv").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cli_vocabulary_errors_are_positioned() {
    let d = scratch("vocab");
    let cases: &[(&str, &str)] = &[
        (
            "Rfe cta\nPodWR rlx.gpu rel.gpu\n",
            "expected an annotation that fits a load, found `rel.gpu`",
        ),
        (
            "Rfe nearby\n",
            "expected a placement (`cta`, `cluster`, `gpu` or `sys`), found `nearby`",
        ),
        (
            "Pod*W rlx.gpu fence.sc.warp rlx.gpu\n",
            "found `fence.sc.warp`",
        ),
        (
            "PodWW rlx.gpu\n",
            "expected more words, found the end of the line",
        ),
        (
            "threads 9\n",
            "expected a thread count from 2 to 8, found `9`",
        ),
        (
            "default acq.gpu\n",
            "expected an annotation that fits loads and stores",
        ),
        (
            "PodWW weak data weak\n",
            "expected a data dependency from a load to a store",
        ),
        (
            "Mfence\n",
            "expected an edge (`Rfe`, `Fre`, `Coe`, `PodXY`, `PosXY`) or a directive",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let f = d.join(format!("v{i}.vocab"));
        std::fs::write(&f, text).unwrap();
        let (code, out, err) = ptxmc(&[
            "gen",
            "--vocab",
            f.to_str().unwrap(),
            "-o",
            d.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{text}: {out}{err}");
        assert!(err.contains(want), "{text}: {err}");
        assert!(err.contains(&format!("v{i}.vocab:")), "{text}: {err}");
    }
    // The position: line 2, column 15 (the second annotation).
    let (_, _, err) = ptxmc(&[
        "gen",
        "--vocab",
        d.join("v0.vocab").to_str().unwrap(),
        "-o",
        d.to_str().unwrap(),
    ]);
    assert!(err.contains("v0.vocab:2:15"), "{err}");
    let (code, _, err) = ptxmc(&["gen", "--vocab", "nonesuch", "-o", d.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "expected a vocabulary file or a built-in vocabulary (default, alias, proxy, deps)"
        ),
        "{err}"
    );
    let (code, _, err) = ptxmc(&["gen", "--shard", "4/3", "-o", d.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("expected a shard `K/N` with 1 <= K <= N, found `4/3`"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cli_prints_the_builtin_vocabularies() {
    for (name, _, text) in vocab::BUILTIN {
        let (code, out, _) = ptxmc(&["gen", "--print-vocab", name]);
        assert_eq!(code, 0);
        assert_eq!(out, *text);
    }
    let (code, out, _) = ptxmc(&["gen", "--print-vocab", "list"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("default  global memory, generic proxy"),
        "{out}"
    );
    // A printed vocabulary read back as a file gives the same tests.
    let d = scratch("print");
    let f = d.join("default.vocab");
    std::fs::write(&f, vocab::builtin_text("default").unwrap()).unwrap();
    let from_file = vocab::parse(
        "default",
        "default.vocab",
        &std::fs::read_to_string(&f).unwrap(),
    )
    .unwrap();
    assert_eq!(from_file, vocab::builtin("default").unwrap());
    let _ = std::fs::remove_dir_all(&d);
}
