//! Malformed inputs give exact, positioned messages: file, line, column, what
//! was found, what was expected, the source line and a caret. The rendered
//! text is pinned byte for byte.

use ptxmc::litmus;

fn check(path: &str, src: &str, expected: &str) {
    let err = litmus::parse_source(path, src).expect_err("input is malformed");
    assert_eq!(
        err.rendered(),
        expected,
        "rendering of {path} changed:\n{}",
        err.rendered()
    );
}

#[test]
fn no_header_litmus() {
    check(
        "no_header.litmus",
        r#"C test
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak x, 1 ;
exists (x == 1)
"#,
        r#"error: expected `PTX` (the first word of a PTX litmus test), found `C`
  --> no_header.litmus:1:1
  |
1 | C test
  | ^

"#,
    );
}

#[test]
fn unterminated_doc_litmus() {
    check(
        "unterminated_doc.litmus",
        r#"PTX t
"doc
{ x=0; }
"#,
        r#"error: expected a closing `"`, found the end of the file
  --> unterminated_doc.litmus:2:1
  |
2 | "doc
  | ^

"#,
    );
}

#[test]
fn unknown_location_litmus() {
    check(
        "unknown_location.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak y, 1 ;
exists (x == 1)
"#,
        r#"error: expected a location declared in the init block, found `y`
  --> unknown_location.litmus:4:10
  |
4 |  st.weak y, 1 ;
  |          ^ unknown location

"#,
    );
}

#[test]
fn cell_count_litmus() {
    check(
        "cell_count.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 st.weak x, 1 ;
exists (x == 1)
"#,
        r#"error: expected 2 cells separated by `|` (one per thread), found 1 cell
  --> cell_count.litmus:4:2
  |
4 |  st.weak x, 1 ;
  |  ^^^^^^^^^^^^^

"#,
    );
}

#[test]
fn thread_order_litmus() {
    check(
        "thread_order.litmus",
        r#"PTX t
{ x=0; }
 P1@cta 0,gpu 0 ;
 st.weak x, 1 ;
exists (x == 1)
"#,
        r#"error: expected `P0` (threads are numbered by column), found `P1`
  --> thread_order.litmus:3:2
  |
3 |  P1@cta 0,gpu 0 ;
  |  ^^

"#,
    );
}

#[test]
fn missing_scope_litmus() {
    check(
        "missing_scope.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 ld.acquire r0, x ;
exists (P0:r0 == 1)
"#,
        r#"error: expected a scope (`.cta`, `.cluster`, `.gpu` or `.sys`) after `.acquire`, found no scope
  --> missing_scope.litmus:4:12
  |
4 |  ld.acquire r0, x ;
  |            ^ strong accesses need a scope

"#,
    );
}

#[test]
fn weak_with_scope_litmus() {
    check(
        "weak_with_scope.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak.gpu x, 1 ;
exists (x == 1)
"#,
        r#"error: expected no scope on a weak access (write `.relaxed.<scope>` for a strong one), found scope `.gpu`
  --> weak_with_scope.litmus:4:10
  |
4 |  st.weak.gpu x, 1 ;
  |          ^^^

"#,
    );
}

#[test]
fn operand_count_litmus() {
    check(
        "operand_count.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 atom.relaxed.gpu.cas r0, x, 1 ;
exists (x == 1)
"#,
        r#"error: expected operands `dst, addr, expected, new`, found 3 operands
  --> operand_count.litmus:4:2
  |
4 |  atom.relaxed.gpu.cas r0, x, 1 ;
  |  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ `atom` takes `dst, addr, expected, new`

"#,
    );
}

#[test]
fn unknown_label_litmus() {
    check(
        "unknown_label.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 goto L9 ;
exists (x == 1)
"#,
        r#"error: expected a label of P0, found `L9`
  --> unknown_label.litmus:4:7
  |
4 |  goto L9 ;
  |       ^^ no such label in this thread

"#,
    );
}

#[test]
fn multicast_copy_is_named_unsupported() {
    check(
        "multicast.litmus",
        r#"PTX t
{ s @ shared cta 0 = 0; g=0; }
 P0@cta 0,cluster 0,gpu 0 ;
 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [s], [g], 4, [s], 3 ;
exists (s == 1)
"#,
        r#"error: expected a bulk copy to one CTA, found `.multicast::cluster`
  --> multicast.litmus:4:68
  |
4 |  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [s], [g], 4, [s], 3 ;
  |                                                                    ^^^^^^^^^^^^^^^^^^ `.multicast::cluster` is not supported by ptxmc
  |
  = multicast copies are not modelled

"#,
    );
}

#[test]
fn mbarrier_init_count_must_be_in_range() {
    check(
        "init0.litmus",
        r#"PTX t
{ b @ mbarrier cta 0; }
 P0@cta 0,gpu 0 ;
 mbarrier.init.shared::cta [b], 0 ;
exists (0:r0 == 1)
"#,
        r#"error: expected an arrival count between 1 and 4095, found 0
  --> init0.litmus:4:33
  |
4 |  mbarrier.init.shared::cta [b], 0 ;
  |                                 ^

"#,
    );
}

#[test]
fn mbarrier_wait_must_be_local() {
    check(
        "remote_wait.litmus",
        r#"PTX t
{ b @ mbarrier cta 0; }
 P0@cta 0,gpu 0 ;
 mbarrier.try_wait.shared::cluster r0, [b], 0 ;
exists (0:r0 == 1)
"#,
        r#"error: expected a wait on the CTA's own mbarrier (`.shared::cta`), found `.shared::cluster`
  --> remote_wait.litmus:4:35
  |
4 |  mbarrier.try_wait.shared::cluster r0, [b], 0 ;
  |                                   ^ only arrivals may be remote

"#,
    );
}

#[test]
fn condition_cannot_name_an_mbarrier() {
    check(
        "mbar_cond.litmus",
        r#"PTX t
{ b @ mbarrier cta 0; }
 P0@cta 0,gpu 0 ;
 mbarrier.arrive.shared::cta _, [b] ;
exists (b == 1)
"#,
        r#"error: expected a data location or `P<n>:<register>`, found mbarrier `b`
  --> mbar_cond.litmus:5:9
  |
5 | exists (b == 1)
  |         ^ mbarrier states are not part of final states
  |
  = record a wait's result in a register and test that instead

"#,
    );
}

#[test]
fn proxy_mismatch_litmus() {
    check(
        "proxy_mismatch.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 tld.weak r0, x ;
exists (P0:r0 == 1)
"#,
        r#"error: expected a texture reference for `tld` (declare one with `NAME @ texture aliases x;`), found generic address `x`
  --> proxy_mismatch.litmus:4:15
  |
4 |  tld.weak r0, x ;
  |               ^

"#,
    );
}

#[test]
fn bad_condition_litmus() {
    check(
        "bad_condition.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak x, 1 ;
exists (x == 1 /\ )
"#,
        r#"error: expected a register (`P0:r0`), a location or an integer, found `)`
  --> bad_condition.litmus:5:19
  |
5 | exists (x == 1 /\ )
  |                   ^

"#,
    );
}

#[test]
fn unknown_thread_litmus() {
    check(
        "unknown_thread.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak x, 1 ;
exists (P3:r0 == 1)
"#,
        r#"error: expected a thread of this test (P0), found `P3`
  --> unknown_thread.litmus:5:9
  |
5 | exists (P3:r0 == 1)
  |         ^^

"#,
    );
}

#[test]
fn red_exch_litmus() {
    check(
        "red_exch.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 red.relaxed.gpu.exch x, 1 ;
exists (x == 1)
"#,
        r#"error: expected a reduction operation, found `.exch`
  --> red_exch.litmus:4:18
  |
4 |  red.relaxed.gpu.exch x, 1 ;
  |                  ^^^^ `red` has no `.exch`/`.cas`; use `atom`

"#,
    );
}

#[test]
fn store_location_value_litmus() {
    check(
        "store_location_value.litmus",
        r#"PTX t
{ x=0; y=0; }
 P0@cta 0,gpu 0 ;
 st.weak x, y ;
exists (x == 1)
"#,
        r#"error: expected a register or an integer, found location `y`
  --> store_location_value.litmus:4:13
  |
4 |  st.weak x, y ;
  |             ^ ptxmc does not model storing or computing with addresses

"#,
    );
}

#[test]
fn cluster_conflict_litmus() {
    check(
        "cluster_conflict.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,cluster 0,gpu 0 | P1@cta 0,cluster 1,gpu 0 ;
 st.weak x, 1 | ;
exists (x == 1)
"#,
        r#"error: expected cluster 0 (CTA 0 of GPU 0 is already placed there), found cluster 1
  --> cluster_conflict.litmus:3:38
  |
3 |  P0@cta 0,cluster 0,gpu 0 | P1@cta 0,cluster 1,gpu 0 ;
  |                                      ^^^^^^^^^

"#,
    );
}

#[test]
fn alias_undeclared_litmus() {
    check(
        "alias_undeclared.litmus",
        r#"PTX t
{ x=0; y @ generic aliases z; }
 P0@cta 0,gpu 0 ;
 st.weak x, 1 ;
exists (x == 1)
"#,
        r#"error: expected a declared location or address, found `z`
  --> alias_undeclared.litmus:2:28
  |
2 | { x=0; y @ generic aliases z; }
  |                            ^ not declared in the init block

"#,
    );
}

#[test]
fn bad_char_litmus() {
    check(
        "bad_char.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak x, 1 # ;
exists (x == 1)
"#,
        r#"error: expected a name, an integer or punctuation, found character `#`
  --> bad_char.litmus:4:15
  |
4 |  st.weak x, 1 # ;
  |               ^

"#,
    );
}

#[test]
fn mp_placeholder_test() {
    check(
        "mp_placeholder.test",
        r#".global x;
d0.b0.t0 {
  $0 [x], $1;
}
permit (x == 1) as t;
$$
st | 1
st
"#,
        r#"error: expected a row with at least 2 cells (the template uses `$1`), found 1 cell
  --> mp_placeholder.test:8:1
  |
8 | st
  | ^

"#,
    );
}

#[test]
fn mp_no_expectation_test() {
    check(
        "mp_no_expectation.test",
        r#".global x;
d0.b0.t0 {
  st [x], 1;
}
"#,
        r#"error: expected an expectation: `permit(...) as NAME;`, `assert(...) as NAME;` or `check(...) as NAME;`, found the end of the file
  --> mp_no_expectation.test:5:1
  |
5 | 
  | ^

"#,
    );
}

#[test]
fn mp_ambiguous_reg_test() {
    check(
        "mp_ambiguous_reg.test",
        r#".global x;
d0.b0.t0 {
  ld r0, [x];
}
d0.b1.t0 {
  ld r0, [x];
}
permit (r0 == 1) as t;
"#,
        r#"error: expected a register name used by exactly one thread, found `r0`, used by several threads
  --> mp_ambiguous_reg.test:8:9
  |
8 | permit (r0 == 1) as t;
  |         ^^

"#,
    );
}

#[test]
fn mp_bad_thread_test() {
    check(
        "mp_bad_thread.test",
        r#".global x;
d0.t0 {
  st [x], 1;
}
permit (x == 1) as t;
"#,
        r#"error: expected a thread name `dD.bB.tT` (device, block, thread), found `d0.t0`
  --> mp_bad_thread.test:2:1
  |
2 | d0.t0 {
  | ^^^^^

"#,
    );
}

#[test]
fn mp_undeclared_test() {
    check(
        "mp_undeclared.test",
        r#".global x;
d0.b0.t0 {
  st [y], 1;
}
permit (x == 1) as t;
"#,
        r#"error: expected a location declared with `.global NAME;`, found `y`
  --> mp_undeclared.test:3:6
  |
3 |   st [y], 1;
  |      ^^^ unknown location

"#,
    );
}
