//! The herd/Dat3M dialect accepts what the field's tools accept: free text
//! in the header, locations that are used without being declared, proxy
//! instructions on any name of a location, herd's `locations` and `filter`
//! clauses; and the reports say so (filter line, notes for model-only
//! instructions), pinned byte for byte.

use ptxmc::engine::{self, RunOptions};
use ptxmc::ir::{AddressKind, Program, Proxy, Term};
use ptxmc::litmus::{self, LitmusTest, print};
use ptxmc::model::Model;
use ptxmc::outcome::Outcomes;
use ptxmc::report::{self, TestReport};

fn parse(src: &str) -> LitmusTest {
    let mut tests = litmus::parse_source("t.litmus", src)
        .unwrap_or_else(|e| panic!("does not parse:\n{}", e.rendered()));
    assert_eq!(tests.len(), 1);
    tests.remove(0)
}

/// Valid IR, and the canonical text reads back as the same program.
fn round_trips(p: &Program) {
    p.validate().unwrap();
    let text = print::to_litmus(p);
    let again = parse(&text);
    assert_eq!(&again.program, p, "round trip changed the IR:\n{text}");
}

fn outcomes(p: &Program) -> Outcomes {
    let r = engine::run(p, &RunOptions::default());
    assert!(
        r.disagreement.is_none(),
        "the engines disagree on {}",
        p.name
    );
    assert!(r.incomplete.is_none());
    r.outcomes
}

#[test]
fn free_text_between_the_name_and_the_initial_state_is_skipped() {
    let t = parse(
        r#"PTX MP+free-text
"A doc string."
Generator=diy7 (version 7.57)
Com=Rf Fr
Orig=Rfe PodRR Fre
Cmd: herd7 -model "ptx.cat" -conf "a b.cfg" MP.litmus
He said "yes "no" maybe" and left an unterminated "quote
(* an unterminated comment
{
x=0; y=0;
}
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 st.weak x, 1   | ld.weak r0, y  ;
 st.weak y, 1   | ld.weak r1, x  ;
exists (P1:r0 == 1 /\ P1:r1 == 0)
"#,
    );
    // Every well-formed string is a doc string (herd's free text is not
    // interpreted: quotes pair up as they come).
    assert_eq!(
        t.program.docs,
        ["A doc string.", "ptx.cat", "a b.cfg", "yes ", " maybe"]
    );
    assert_eq!(t.program.threads.len(), 2);
    round_trips(&t.program);
}

#[test]
fn doc_strings_stay_as_they_were() {
    let t = parse(
        "PTX t\n\"first\"\n\"second, over\ntwo lines\"\n(* a comment *)\n{ x=0; };\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists (x == 1)\n",
    );
    assert_eq!(t.program.docs, ["first", "second, over\ntwo lines"]);
    round_trips(&t.program);
}

#[test]
fn undeclared_locations_start_at_zero() {
    let t = parse(
        "PTX t\n{ x=1; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak y, 2   | ld.weak r0, y  ;\nexists (P1:r0 == 2 /\\ z == 0 /\\ x == 1)\n",
    );
    let p = &t.program;
    let names: Vec<(&str, i64)> = p
        .locations
        .iter()
        .map(|l| (l.name.as_str(), l.init))
        .collect();
    // Declared first, then in order of first use; each its own generic address.
    assert_eq!(names, [("x", 1), ("y", 0), ("z", 0)]);
    for (i, a) in p.addresses.iter().enumerate() {
        assert_eq!((a.kind, a.va, a.alias_of), (AddressKind::Generic, i, None));
    }
    round_trips(p);
    let y = p.location_named("y").unwrap();
    let z = p.location_named("z").unwrap();
    let cols = ptxmc::outcome::Columns::of(p);
    let all = outcomes(p);
    assert_eq!(all.len(), 2, "P1 reads 0 or 2");
    for s in &all {
        assert_eq!(s[cols.loc(y).unwrap()], 2);
        assert_eq!(s[cols.loc(z).unwrap()], 0);
    }
}

/// The proxy comes from the instruction; the name gives the virtual address
/// (its own for a generic name, its target's for a proxy reference).
#[test]
fn a_proxy_instruction_may_name_any_address() {
    let t = parse(
        "PTX t\n{ x=0; y @ generic aliases x; t @ texture aliases x; }\n P0@cta 0,gpu 0 ;\n tld.weak r0, y ;\n ld.weak r1, t ;\n suld.weak r2, x ;\n sust.weak y, 1 ;\n cold.weak r3, t ;\nexists (P0:r0 == 0)\n",
    );
    let p = &t.program;
    let id = |n: &str| p.address_named(n).unwrap();
    let got: Vec<(Proxy, usize, usize)> = p.threads[0]
        .code
        .iter()
        .map(|i| {
            let a = i.access().unwrap();
            (a.proxy, a.addr, p.addresses[a.addr].va)
        })
        .collect();
    assert_eq!(
        got,
        [
            (Proxy::Texture, id("y"), id("y")),
            (Proxy::Generic, id("t"), id("x")),
            (Proxy::Surface, id("x"), id("x")),
            (Proxy::Surface, id("y"), id("y")),
            (Proxy::Constant, id("t"), id("x")),
        ]
    );
    round_trips(p);
}

/// `tld r, y` through a generic alias `y` is a texture access at `y`'s
/// virtual address: the same test as one through a texture reference
/// declared over `y`, with and without the proxy fences.
#[test]
fn a_texture_load_through_a_generic_alias_reads_at_the_alias_address() {
    for fences in [
        "",
        " fence.proxy.texture ;\n",
        " fence.proxy.alias ;\n",
        " fence.proxy.alias ;\n fence.proxy.texture ;\n",
        " fence.proxy.texture ;\n fence.proxy.alias ;\n",
    ] {
        let through_name = format!(
            "PTX a\n{{ x=0; y @ generic aliases x; }}\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n{fences} tld.weak r0, y ;\nexists (P0:r0 == 1)\n"
        );
        let through_reference = format!(
            "PTX a\n{{ x=0; y @ generic aliases x; t @ texture aliases y; }}\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n{fences} tld.weak r0, t ;\nexists (P0:r0 == 1)\n"
        );
        let a = parse(&through_name).program;
        let b = parse(&through_reference).program;
        assert_eq!(outcomes(&a), outcomes(&b), "fences: {fences:?}");
    }
    // A generic load through a texture reference is a load of its target.
    let direct = parse(
        "PTX b\n{ x=0; t @ texture aliases x; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1   | ld.acquire.gpu r0, x ;\n fence.sc.gpu   | ld.weak r1, x ;\nexists (P1:r0 == 1)\n",
    );
    let via_t = parse(
        "PTX b\n{ x=0; t @ texture aliases x; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1   | ld.acquire.gpu r0, t ;\n fence.sc.gpu   | ld.weak r1, t ;\nexists (P1:r0 == 1)\n",
    );
    assert_eq!(outcomes(&direct.program), outcomes(&via_t.program));
}

const FILTERED: &str = r#"PTX SB+filter
"Store buffering; only executions in which P0 read 0 count."
{
x=0; y=0;
}
 P0@cta 0,gpu 0       | P1@cta 1,gpu 0       ;
 st.relaxed.gpu x, 1  | st.relaxed.gpu y, 1  ;
 ld.relaxed.gpu r0, y | ld.relaxed.gpu r0, x ;
locations [x; P1:r0;]
filter (P0:r0 == 0)
exists (P0:r0 == 0 /\ P1:r0 == 0);
"#;

#[test]
fn locations_and_filter_are_recorded_and_round_trip() {
    let t = parse(FILTERED);
    let p = &t.program;
    assert_eq!(
        p.shown,
        [
            Term::Loc(p.location_named("x").unwrap()),
            Term::Reg { thread: 1, reg: 0 }
        ]
    );
    assert!(p.filter.is_some());
    round_trips(p);
    // Either order, and `1:r0` for `P1:r0`.
    let swapped = parse(&FILTERED.replace(
        "locations [x; P1:r0;]\nfilter (P0:r0 == 0)",
        "filter (0:r0 == 0)\nlocations [x; 1:r0]",
    ));
    assert_eq!(swapped.program.shown, p.shown);
    assert_eq!(swapped.program.filter, p.filter);
}

/// herd's semantics: the listing and the verdict use only the final states
/// that satisfy the filter; the engines are compared on all of them.
#[test]
fn the_filter_narrows_the_listing_and_the_verdict() {
    let t = parse(FILTERED);
    let r = engine::run(&t.program, &RunOptions::default());
    assert!(r.disagreement.is_none());
    let mut unfiltered = t.program.clone();
    unfiltered.filter = None;
    let all = engine::run(&unfiltered, &RunOptions::default());
    assert_eq!(all.outcomes.len(), 4);
    assert_eq!(r.outcomes.len(), 2);
    assert_eq!(r.filtered_out.len(), 2);
    let union: Outcomes = r.outcomes.union(&r.filtered_out).cloned().collect();
    assert_eq!(union, all.outcomes);
    assert_eq!((r.verdict.positive, r.verdict.negative), (1, 1));
    assert!(r.verdict.holds);
    // Each engine alone applies the same filter.
    for engine in [engine::EngineChoice::Op, engine::EngineChoice::Ax] {
        let one = engine::run(
            &t.program,
            &RunOptions {
                engine,
                ..RunOptions::default()
            },
        );
        assert_eq!(one.outcomes, r.outcomes);
        assert_eq!(one.filtered_out, r.filtered_out);
    }
    // A filter nothing satisfies leaves nothing to judge: `exists` fails.
    let none = parse(&FILTERED.replace("filter (P0:r0 == 0)", "filter (P0:r0 == 7)"));
    let r = engine::run(&none.program, &RunOptions::default());
    assert!(r.outcomes.is_empty() && !r.verdict.holds);
}

fn reports(t: &LitmusTest) -> (String, String) {
    let mut r = engine::run(&t.program, &RunOptions::default());
    r.seconds = 0.0;
    let rep = TestReport {
        program: &t.program,
        file: t.display_path(),
        model: Model::Ptx75,
        result: &r,
        notes: t.notes(),
        undefined: r.undefined.as_ref().map(|u| report::ub::of(t, u)),
        races: report::races::of(t, &r.races),
    };
    let mut json = report::json::report(&rep);
    // Keep the fields this file is about; the rest is pinned elsewhere.
    let keep = [
        "name",
        "condition",
        "locations",
        "filter",
        "filtered_out",
        "outcomes",
        "verdict",
        "positive",
        "negative",
        "notes",
    ];
    json.as_object_mut()
        .unwrap()
        .retain(|k, _| keep.contains(&k.as_str()));
    (
        report::herd::report(&rep),
        serde_json::to_string_pretty(&json).unwrap(),
    )
}

#[test]
fn herd_report_with_a_filter() {
    insta::assert_snapshot!(reports(&parse(FILTERED)).0);
}

#[test]
fn json_report_with_locations_and_a_filter() {
    insta::assert_snapshot!(reports(&parse(FILTERED)).1);
}

const MODEL_ONLY: &str = r#"PTX MP-surf+fence.proxy.surface
"ISCA'22's surface fence: a model-only instruction."
{
x=0; f=0;
s @ surface aliases x;
}
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0        ;
 sust.weak s, 1      | ld.acquire.gpu r0, f  ;
 fence.proxy.surface | fence.proxy.texture   ;
 st.release.gpu f, 1 | ld.weak r1, x         ;
exists (P1:r0 == 1 /\ P1:r1 == 0)
"#;

/// `fence.proxy.texture/surface/constant` are accepted (the model has
/// them) but flagged, so that no one takes them for fixes on hardware.
#[test]
fn herd_report_notes_model_only_instructions() {
    let t = parse(MODEL_ONLY);
    assert_eq!(
        t.notes(),
        [
            "fence.proxy.surface (P0, line 9) is a model-only instruction (ISCA'22), not PTX: ptxas rejects it",
            "fence.proxy.texture (P1, line 9) is a model-only instruction (ISCA'22), not PTX: ptxas rejects it",
        ]
    );
    insta::assert_snapshot!(reports(&t).0);
}

#[test]
fn json_report_notes_model_only_instructions() {
    insta::assert_snapshot!(reports(&parse(MODEL_ONLY)).1);
}

/// In a mixedproxy instance the line is where the text was written (the
/// template, or the row for what a cell filled in).
#[test]
fn notes_in_mixedproxy_instances_point_into_the_template() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let tests = litmus::parse_file(&root.join("tests/peers/mixedproxy/tests/MP_gpu.test")).unwrap();
    // Row 5 (line 27) is `st [x] | fence.proxy.surface; | ...`: the fence
    // is the row's cell filling `$1`, so the note names the row's line.
    assert_eq!(
        tests[4].notes(),
        [
            "fence.proxy.surface (P0, line 27) is a model-only instruction (ISCA'22), not PTX: ptxas rejects it"
        ]
    );
    assert!(tests[0].notes().is_empty());
    // Generic fences are real PTX: no note.
    let plain = parse(
        "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n fence.proxy.alias ;\n fence.sc.gpu ;\nexists (x == 1)\n",
    );
    assert!(plain.notes().is_empty());
}

/// The hardware harness places memory by the names' declarations, so it
/// refuses an access whose proxy is not its name's (rather than emit a
/// generic load for `cold r, x`).
#[test]
fn the_harness_refuses_a_proxy_through_another_name() {
    let t = parse(
        "PTX t\n{ x=0; c @ constant aliases x; }\n P0@cta 0,gpu 0 ;\n cold.weak r0, x ;\nexists (P0:r0 == 0)\n",
    );
    let refusal = ptxmc::hw::plan::plan(&t.program, "t").unwrap_err();
    assert_eq!(refusal.reason.key(), "proxy-other-name");
    assert_eq!(
        refusal.to_string(),
        "t: P0 makes a constant-proxy access through `x`, declared for another proxy; the harness places memory by the names' declarations"
    );
    let declared = parse(
        "PTX t\n{ x=0; c @ constant aliases x; }\n P0@cta 0,gpu 0 ;\n cold.weak r0, c ;\nexists (P0:r0 == 0)\n",
    );
    assert!(ptxmc::hw::plan::plan(&declared.program, "t").is_ok());
}

fn library(rel: &str) -> Program {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    litmus::parse_file(&path)
        .unwrap_or_else(|e| panic!("{}", e.rendered()))
        .remove(0)
        .program
}

/// `litmus/dialect/`: each test has the verdict its doc string gives, and
/// the same outcomes as the test it restates in the older style.
#[test]
fn the_dialect_examples_of_the_library() {
    let p = library("litmus/dialect/SB+filter.gpu.litmus");
    let r = engine::run(&p, &RunOptions::default());
    assert!(r.verdict.holds && r.disagreement.is_none());
    assert_eq!((r.outcomes.len(), r.filtered_out.len()), (2, 2));
    for (new, old) in [
        (
            "litmus/dialect/MP+rel+acq.gpu-undeclared.litmus",
            "litmus/mp/MP+rel+acq.gpu.litmus",
        ),
        (
            "litmus/dialect/CoWR-tex-via-generic-name-single-thread.litmus",
            "litmus/proxy/CoWR-tex-single-thread.litmus",
        ),
    ] {
        let (a, b) = (library(new), library(old));
        assert_eq!(outcomes(&a), outcomes(&b), "{new}");
        let verdict = |p: &Program| engine::run(p, &RunOptions::default()).verdict.holds;
        assert_eq!(verdict(&a), verdict(&b), "{new}");
    }
}

/// Access types are kept in the IR, printed back, shown in JSON, and do not
/// change what a test with one width per location means.
#[test]
fn access_types_are_kept_printed_and_do_not_change_outcomes() {
    use ptxmc::ir::{DataType, Instr};
    let typed = parse(
        "PTX MP-typed\n{ x=0; f=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak.u8 x, 255 | ld.acquire.gpu.b64 r0, f ;\n st.release.gpu.b64 f, 1 | ld.weak.u8 r1, x ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
    );
    let p = &typed.program;
    let types: Vec<Option<DataType>> = p
        .threads
        .iter()
        .flat_map(|t| t.code.iter().map(|i| i.access().and_then(|a| a.ty)))
        .collect();
    assert_eq!(
        types,
        [
            Some(DataType::U8),
            Some(DataType::B64),
            Some(DataType::B64),
            Some(DataType::U8)
        ]
    );
    let widths: Vec<u32> = p.threads[0]
        .code
        .iter()
        .filter_map(Instr::access)
        .map(|a| a.bits())
        .collect();
    assert_eq!(widths, [8, 64]);
    round_trips(p);
    let text = print::to_litmus(p);
    assert!(
        text.contains("st.weak.u8 x, 255") && text.contains("ld.acquire.gpu.b64 r0, f"),
        "{text}"
    );
    let json = serde_json::to_value(p).unwrap();
    let access = &json["threads"][0]["code"][0]["access"];
    assert_eq!(access["type"], "u8", "{json}");
    // No type written: none in the IR (a 32-bit word), none printed.
    let plain = parse(
        "PTX MP\n{ x=0; f=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 255 | ld.acquire.gpu r0, f ;\n st.release.gpu f, 1 | ld.weak r1, x ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
    );
    let a = plain.program.threads[0].code[0].access().unwrap();
    assert_eq!((a.ty, a.bits()), (None, 32));
    assert!(
        serde_json::to_value(&plain.program).unwrap()["threads"][0]["code"][0]["access"]
            .get("type")
            .is_none()
    );
    // Same outcomes as the untyped test.
    assert_eq!(outcomes(p), outcomes(&plain.program));
}

/// The error a test gets, in its one-line form.
fn refused(src: &str) -> String {
    match litmus::parse_source("t.litmus", src) {
        Ok(_) => panic!("parsed:\n{src}"),
        Err(e) => e.to_string(),
    }
}

const VECTOR_HEAD: &str = "PTX V\n{ x[0]=0; x[1]=0; }\n P0@cta 0,gpu 0 ;\n";

#[test]
fn a_vector_access_is_one_scalar_access_per_element_and_round_trips() {
    let t = parse(&format!(
        "{VECTOR_HEAD} st.relaxed.gpu.v2.u32 [x], {{1, 2}} ;\n ld.v2.u32 {{r0, r1}}, [x] ;\nexists (P0:r0 == 1 /\\ x[1] == 2)\n"
    ));
    let code = &t.program.threads[0].code;
    assert_eq!(code.len(), 4, "two stores, two loads: {code:?}");
    let names: Vec<&str> = code
        .iter()
        .map(|i| t.program.addresses[i.access().unwrap().addr].name.as_str())
        .collect();
    assert_eq!(names, ["x[0]", "x[1]", "x[0]", "x[1]"]);
    round_trips(&t.program);
    let o = outcomes(&t.program);
    assert_eq!(o.len(), 1);
}

#[test]
fn vector_forms_the_model_cannot_give_are_refused_by_name() {
    let cases = [
        (
            "ld.acquire.gpu.v2.u32 {r0, r1}, [x]",
            "`.acquire` on a vector access",
        ),
        (
            "st.release.gpu.v2.u32 [x], {1, 1}",
            "`.release` on a vector access",
        ),
        ("ld.v4.u64 {r0, r1, r2, r3}, [x]", "at most 128 bits"),
        ("ld.v2.u32 {r0, r1, r2}, [x]", "2 elements"),
        ("ld.v2 {r0, r1}, [x]", "a data type after `.v2`"),
        ("atom.add.gpu.v2.u32 r0, [x], 1", ".v2"),
        ("ld.b128 r0, [x]", "b128"),
    ];
    for (instr, want) in cases {
        let e = refused(&format!("{VECTOR_HEAD} {instr} ;\nexists (x[0] == 0)\n"));
        assert!(e.contains(want), "{instr}: {e}");
    }
}

const ELECT: &str = "PTX E\n{ }\n P0@cta 0,warp 0,gpu 0 | P1@cta 0,warp 0,gpu 0 ;\n";

#[test]
fn elect_sync_round_trips_and_every_lane_may_lead() {
    let t = parse(&format!(
        "{ELECT} elect.sync r0, r1, 0xffffffff | elect.sync _, r1, 0xffffffff ;\nexists (P0:r1 == 1)\n"
    ));
    assert_eq!(t.program.elects.len(), 2);
    round_trips(&t.program);
    let text = print::to_litmus(&t.program);
    assert!(text.contains("elect.sync r0, r1, 4294967295"), "{text}");
    assert!(text.contains("elect.sync _, r1, 4294967295"), "{text}");
    // Both lanes lead in some choice; exactly one leads in each.
    let o = outcomes(&t.program);
    assert_eq!(o.len(), 2, "{o:?}");
}

#[test]
fn elect_sync_forms_are_refused_by_name() {
    for (instr, want) in [
        ("elect.sync r0, r1, r2", "membermask `r2`"),
        ("elect r0, r1, 3", "`.sync` after `elect`"),
        ("elect.sync r0, 3", "d, p, membermask"),
    ] {
        let e = refused(&format!(
            "{ELECT} {instr} | elect.sync r0, r1, 3 ;\nexists (P0:r1 == 1)\n"
        ));
        assert!(e.contains(want), "{instr}: {e}");
    }
}
