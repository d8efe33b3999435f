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

/// Like [`check`] for a test that parses but that the PTX 7.5 model refuses
/// (what `ptxmc run` prints before exiting with status 2).
fn check_refused(path: &str, src: &str, expected: &str) {
    let tests = litmus::parse_source(path, src).unwrap_or_else(|e| panic!("{}", e.rendered()));
    let t = &tests[0];
    let d = ptxmc::model::Model::Ptx75
        .admit(&t.program, &t.spans)
        .expect_err("the model refuses the test");
    let rendered = t.error(d).rendered().to_string();
    assert_eq!(
        rendered, expected,
        "rendering of {path} changed:\n{rendered}"
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
fn multicast_copy_lists_its_destinations() {
    check(
        "multicast.litmus",
        r#"PTX t
{ s @ shared cta 0 = 0; g=1; }
 P0@cta 0,cluster 0,gpu 0 ;
 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [s], [g], 4, [s], 3 ;
exists (s == 1)
"#,
        r#"error: expected the destination CTAs' buffers `{s0, s1, ...}`, in the order of the mask's bits, found `[s]`
  --> multicast.litmus:4:87
  |
4 |  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [s], [g], 4, [s], 3 ;
  |                                                                                       ^^^
  |
  = a litmus location has no offset: a multicast copy lists the location it writes in each CTA

"#,
    );
}

#[test]
fn multicast_destinations_follow_the_mask_bits() {
    check(
        "multicast_rank.litmus",
        r#"PTX t
{ s0 @ shared cta 0 = 0; s1 @ shared cta 1 = 0; b0 @ mbarrier cta 0 = 1; b1 @ mbarrier cta 1 = 1; g=1; }
 P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;
 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster {s1, s0}, [g], 4, {b0, b1}, 3 | ld.shared::cta r0, s1 ;
exists (s0 == 1)
"#,
        r#"error: expected a location in the CTA of cluster rank 0 (bit 0 of the mask), found `s1`, in the CTA of rank 1
  --> multicast_rank.litmus:4:88
  |
4 |  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster {s1, s0}, [g], 4, {b0, b1}, 3 | ld.shared::cta r0, s1 ;
  |                                                                                        ^^

"#,
    );
}

#[test]
fn im2col_tensor_copy_is_named_unsupported() {
    check(
        "im2col.litmus",
        r#"PTX t
{ tm @ tensormap g dims 4 box 2; s[0] @ shared cta 0 = 0; s[1] @ shared cta 0 = 0; bar @ mbarrier cta 0 = 1; }
 P0@cta 0,cluster 0,gpu 0 ;
 cp.async.bulk.tensor.1d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [s], [tm, {0}], [bar] ;
exists (s[0] == 1)
"#,
        r#"error: expected a copy without `.im2col`, found `.im2col`
  --> im2col.litmus:4:49
  |
4 |  cp.async.bulk.tensor.1d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [s], [tm, {0}], [bar] ;
  |                                                 ^^^^^^ `.im2col` is not supported by ptxmc
  |
  = im2col tensor copies are not modelled: their box follows im2col offsets; `.tile` copies are modelled

"#,
    );
}

#[test]
fn tensor_box_outside_the_tensor_is_refused() {
    check(
        "box_out.litmus",
        r#"PTX t
{ tm @ tensormap g dims 4 box 2; s[0] @ shared cta 0 = 0; s[1] @ shared cta 0 = 0; bar @ mbarrier cta 0 = 1; }
 P0@cta 0,cluster 0,gpu 0 ;
 cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [s], [tm, {3}], [bar] ;
exists (s[0] == 1)
"#,
        r#"error: expected a box inside the tensor (dimension 0: coordinate 3 with box 2 in 0..4); out-of-bound elements (zero-filled on loads, skipped on stores) are not modelled, found coordinates [3]
  --> box_out.litmus:4:83
  |
4 |  cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [s], [tm, {3}], [bar] ;
  |                                                                                   ^^^^^^^^^

"#,
    );
}

#[test]
fn tensor_coordinate_in_a_register_is_refused() {
    check(
        "coord_reg.litmus",
        r#"PTX t
{ tm @ tensormap g dims 4 box 2; s[0] @ shared cta 0 = 0; s[1] @ shared cta 0 = 0; bar @ mbarrier cta 0 = 1; }
 P0@cta 0,cluster 0,gpu 0 ;
 cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [s], [tm, {r1}], [bar] ;
exists (s[0] == 1)
"#,
        r#"error: expected a tensor coordinate written as an integer (a register is not), found `r1`
  --> coord_reg.litmus:4:89
  |
4 |  cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [s], [tm, {r1}], [bar] ;
  |                                                                                         ^^ `r1` is not supported by ptxmc
  |
  = a copy's elements must be known when the test is read (computed addresses are not modelled)

"#,
    );
}

#[test]
fn tensormap_replace_is_named_unsupported() {
    check(
        "replace.litmus",
        r#"PTX t
{ tm @ tensormap g dims 4 box 2; }
 P0@cta 0,cluster 0,gpu 0 ;
 tensormap.replace.tile.global_address.global.b1024.b64 [tm], 5 ;
exists (g[0] == 1)
"#,
        r#"error: expected a tensor map fixed by its declaration in the init block, found `tensormap.replace.tile.global_address.global.b1024.b64`
  --> replace.litmus:4:2
  |
4 |  tensormap.replace.tile.global_address.global.b1024.b64 [tm], 5 ;
  |  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ `tensormap.replace.tile.global_address.global.b1024.b64` is not supported by ptxmc
  |
  = a tensor map that changes at run time is not modelled: the elements a copy moves would depend on the map's value, and ptxmc fixes them when the test is read; declare one tensor map per box (docs/async.md 8)

"#,
    );
}

#[test]
fn tensor_copy_rank_must_match_its_map() {
    check(
        "rank.litmus",
        r#"PTX t
{ tm @ tensormap g dims 4 box 2; s[0] @ shared cta 0 = 0; s[1] @ shared cta 0 = 0; bar @ mbarrier cta 0 = 1; }
 P0@cta 0,cluster 0,gpu 0 ;
 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [s], [tm, {0, 0}], [bar] ;
exists (s[0] == 1)
"#,
        r#"error: expected `.1d` (map `tm` has rank 1), found `.2d`
  --> rank.litmus:4:23
  |
4 |  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [s], [tm, {0, 0}], [bar] ;
  |                       ^^

"#,
    );
}

#[test]
fn tensor_map_needs_a_box_size_per_dimension() {
    check(
        "decl.litmus",
        r#"PTX t
{ tm @ tensormap g dims 4,4 box 2; }
 P0@cta 0,cluster 0,gpu 0 ;
 ld.global r0, g[0] ;
exists (g[0] == 1)
"#,
        r#"error: expected 2 box sizes (one per dimension of the tensor), found 1
  --> decl.litmus:2:29
  |
2 | { tm @ tensormap g dims 4,4 box 2; }
  |                             ^^^^^

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
fn warp_lanes_litmus() {
    // A warp has 32 lanes; a 33rd thread with the same `warp` is refused
    // where it is placed.
    let header: Vec<String> = (0..33)
        .map(|i| format!("P{i}@cta 0,warp 0,gpu 0"))
        .collect();
    let row: Vec<&str> = (0..33)
        .map(|i| if i == 0 { "st.weak x, 1" } else { "" })
        .collect();
    let src = format!(
        "PTX t\n{{ x=0; }}\n {} ;\n {} ;\nexists (x == 1)\n",
        header.join(" | "),
        row.join(" | ")
    );
    let col = 2 + header[..32].iter().map(|h| h.len() + 3).sum::<usize>();
    let out = ptxmc::litmus::parse_source("lanes.litmus", &src).unwrap_err();
    let text = out.rendered();
    assert!(
        text.starts_with(&format!(
            "error: expected at most 32 lanes in warp 0 of CTA 0 of GPU 0, found lane 32\n  --> lanes.litmus:3:{col}\n"
        )),
        "{text}"
    );
    assert!(text.contains("a warp has 32 lanes"), "{text}");
}

#[test]
fn warp_twice_litmus() {
    check(
        "warp_twice.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,warp 1,warp 2,gpu 0 ;
 st.weak x, 1 ;
exists (x == 1)
"#,
        r#"error: expected one `warp` per thread, found a second `warp`
  --> warp_twice.litmus:3:18
  |
3 |  P0@cta 0,warp 1,warp 2,gpu 0 ;
  |                  ^^^^

"#,
    );
}

/// Lanes of a warp arrive at a counted barrier as one event of 32 threads
/// (`model::barrier::warp_unit`); the dialect's three-operand form, whose
/// `n` counts litmus threads, is refused for them.
#[test]
fn three_operand_barrier_of_lanes_is_refused() {
    check_refused(
        "lanes_bar3.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,warp 0,gpu 0 | P1@cta 0,warp 0,gpu 0 ;
 st.weak x, 1 | bar.sync 1, 1, 2 ;
 bar.sync 1, 1, 2 | ld.weak r0, x ;
exists (P1:r0 == 0)
"#,
        r#"error: expected PTX's `bar.sync a, b` (a thread count), or the warp as one litmus thread (no `warp`), found the dialect's `bar.sync a, b, n` executed by a lane of a warp
  --> lanes_bar3.litmus:5:2
  |
5 |  bar.sync 1, 1, 2 | ld.weak r0, x ;
  |  ^^^^^^^^^^^^^^^^ counted barriers of the dialect's three-operand form are not supported for lanes
  |
  = `n` counts litmus threads; lanes of one warp are threads of one warp

"#,
    );
}

#[test]
fn try_wait_hint_but_not_test_wait() {
    check(
        "test_wait_hint.litmus",
        r#"PTX t
{ bar @ mbarrier cta 0 = 1; }
 P0@cta 0,cluster 0,gpu 0 ;
 mbarrier.test_wait.parity.shared::cta r0, [bar], 0, 100 ;
exists (P0:r0 == 0)
"#,
        r#"error: expected operands `p, [mbar], phaseParity`, found 4 operands
  --> test_wait_hint.litmus:4:54
  |
4 |  mbarrier.test_wait.parity.shared::cta r0, [bar], 0, 100 ;
  |                                                      ^^^ `mbarrier` takes `p, [mbar], phaseParity`

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

/// A register the program never writes and the initial state never sets would read as 0.
#[test]
fn condition_register_never_written() {
    check(
        "cond_reg_unwritten.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 st.weak x, 1   | ld.weak r0, x  ;
                | ld.weak r1, x  ;
exists (P1:r0 == 1 /\ P1:r2 == 0)
"#,
        r#"error: expected a register that P1 writes or the initial state sets, found `r2`
  --> cond_reg_unwritten.litmus:6:26
  |
6 | exists (P1:r0 == 1 /\ P1:r2 == 0)
  |                          ^^ P1's registers: `r0`, `r1`

"#,
    );
}

#[test]
fn condition_register_without_percent() {
    check(
        "cond_reg_percent.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0  ;
 st.weak x, 1   | ld.weak %r0, x  ;
exists (P1:r0 == 1)
"#,
        r#"error: expected a register that P1 writes or the initial state sets, found `r0`
  --> cond_reg_percent.litmus:5:12
  |
5 | exists (P1:r0 == 1)
  |            ^^ did you mean `%r0`?

"#,
    );
}

#[test]
fn condition_register_only_read() {
    check(
        "cond_reg_read_only.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak x, r1  ;
exists (P0:r1 == 0)
"#,
        r#"error: expected a register that P0 writes or the initial state sets, found `r1`
  --> cond_reg_read_only.litmus:5:12
  |
5 | exists (P0:r1 == 0)
  |            ^^ P0 reads `r1` but never writes it, and the initial state does not set it

"#,
    );
}

/// Without its thread a register name would become a new location holding 0.
#[test]
fn condition_bare_register() {
    check(
        "cond_bare_register.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 st.weak x, 1   | ld.weak r0, x  ;
exists (r0 == 1)
"#,
        r#"error: expected a location or `P<n>:<register>`, found `r0`, a register of P1
  --> cond_bare_register.litmus:5:9
  |
5 | exists (r0 == 1)
  |         ^^ write `P1:r0` for the register

"#,
    );
}

#[test]
fn filter_register_never_written() {
    check(
        "filter_register.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 ld.weak r0, x ;
filter (P0:r9 == 0)
exists (x == 1)
"#,
        r#"error: expected a register that P0 writes or the initial state sets, found `r9`
  --> filter_register.litmus:5:12
  |
5 | filter (P0:r9 == 0)
  |            ^^ P0's registers: `r0`

"#,
    );
}

#[test]
fn locations_register_never_written() {
    check(
        "locations_register.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 ld.weak r0, x ;
locations [x; 0:r1;]
exists (x == 1)
"#,
        r#"error: expected a register that P0 writes or the initial state sets, found `r1`
  --> locations_register.litmus:5:17
  |
5 | locations [x; 0:r1;]
  |                 ^^ P0's registers: `r0`

"#,
    );
}

#[test]
fn mp_condition_register_only_read() {
    check(
        "mp_read_only.test",
        r#".global x;
d0.b0.t0 {
  st [x], r1;
}
permit (P0:r1 == 0) as t;
"#,
        r#"error: expected a register that P0 writes or the initial state sets, found `r1`
  --> mp_read_only.test:5:12
  |
5 | permit (P0:r1 == 0) as t;
  |            ^^ P0 reads `r1` but never writes it, and the initial state does not set it

"#,
    );
}

#[test]
fn implicit_location_named_like_a_register() {
    check(
        "register_then_location.litmus",
        r#"PTX t
{ }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 mov y, 1       | ld.weak r0, y  ;
exists (P1:r0 == 1)
"#,
        r#"error: expected a location, found `y`, a register of P0
  --> register_then_location.litmus:4:31
  |
4 |  mov y, 1       | ld.weak r0, y  ;
  |                               ^ a name is a register or a location, not both

"#,
    );
}

#[test]
fn no_initial_state_after_free_text() {
    check(
        "no_init_block.litmus",
        r#"PTX t
Generator=diy7 (version 7.57)
 P0@cta 0,gpu 0 ;
 st.weak x, 1 ;
exists (x == 1)
"#,
        r#"error: expected the initial state (`{ ... }`) after the test's name, found no `{` in the rest of the file
  --> no_init_block.litmus:2:1
  |
2 | Generator=diy7 (version 7.57)
  | ^

"#,
    );
}

#[test]
fn locations_twice() {
    check(
        "locations_twice.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak x, 1 ;
locations [x;]
locations [x;]
exists (x == 1)
"#,
        r#"error: expected one `locations` clause, found a second `locations`
  --> locations_twice.litmus:6:1
  |
6 | locations [x;]
  | ^^^^^^^^^

"#,
    );
}

#[test]
fn filter_twice() {
    check(
        "filter_twice.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak x, 1 ;
filter (x == 1)
filter (x == 1)
exists (x == 1)
"#,
        r#"error: expected one `filter` clause, found a second `filter`
  --> filter_twice.litmus:6:1
  |
6 | filter (x == 1)
  | ^^^^^^

"#,
    );
}

#[test]
fn locations_constant() {
    check(
        "locations_constant.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 ld.weak r0, x ;
locations [x; 5]
exists (x == 1)
"#,
        r#"error: expected a register (`P0:r0`) or a location, found `5`
  --> locations_constant.litmus:5:15
  |
5 | locations [x; 5]
  |               ^

"#,
    );
}

#[test]
fn locations_unclosed() {
    check(
        "locations_unclosed.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 ld.weak r0, x ;
locations [x; P0:r0
exists (x == 1)
"#,
        r#"error: expected `;` or `]`, found `exists`
  --> locations_unclosed.litmus:6:1
  |
6 | exists (x == 1)
  | ^^^^^^

"#,
    );
}

/// Parentheses, negations and chains are bounded so that no condition can exhaust the stack.
#[test]
fn nesting_limit_parentheses() {
    check(
        "deep_parens.litmus",
        &format!(
            "PTX t\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists\n{}x == 1{}\n",
            "(\n".repeat(513),
            ")".repeat(513)
        ),
        r#"error: expected at most 512 nested parentheses and negations, found more
    --> deep_parens.litmus:518:1
    |
518 | (
    | ^ the nesting limit is reached here
    |
    = ptxmc bounds the nesting so that no condition can exhaust the stack

"#,
    );
}

#[test]
fn nesting_limit_negations() {
    check(
        "deep_negations.litmus",
        &format!(
            "PTX t\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists\n{}x == 1\n",
            "~\n".repeat(257)
        ),
        r#"error: expected a proposition at most 256 levels deep, found a deeper one
  --> deep_negations.litmus:6:1
  |
6 | ~
  | ^ the depth limit is reached here
  |
  = every negation and every `/\`, `\/`, `&&` or `||` above a comparison counts one level (a chain of N conjuncts is N-1 levels); ptxmc bounds the depth so that no condition can exhaust the stack

"#,
    );
}

#[test]
fn nesting_limit_many_negations() {
    check(
        "many_negations.litmus",
        &format!(
            "PTX t\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists\n{}x == 1\n",
            "~\n".repeat(513)
        ),
        r#"error: expected at most 512 nested parentheses and negations, found more
    --> many_negations.litmus:518:1
    |
518 | ~
    | ^ the nesting limit is reached here
    |
    = ptxmc bounds the nesting so that no condition can exhaust the stack

"#,
    );
}

#[test]
fn nesting_limit_conjunction_chain() {
    check(
        "long_conjunction.litmus",
        &format!(
            "PTX t\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists (x == 1\n{})\n",
            "/\\ x == 1\n".repeat(257)
        ),
        r#"error: expected a proposition at most 256 levels deep, found a deeper one
    --> long_conjunction.litmus:262:1
    |
262 | /\ x == 1
    | ^^ the depth limit is reached here
    |
    = every negation and every `/\`, `\/`, `&&` or `||` above a comparison counts one level (a chain of N conjuncts is N-1 levels); ptxmc bounds the depth so that no condition can exhaust the stack

"#,
    );
}

#[test]
fn mp_nesting_limit() {
    check(
        "deep_permit.test",
        &format!(
            ".global x;\nd0.b0.t0 {{\n  st [x], 1;\n}}\npermit(\n{}x == 1{}) as t;\n",
            "!(\n".repeat(257),
            ")".repeat(257)
        ),
        r#"error: expected at most 512 nested parentheses and negations, found more
    --> deep_permit.test:261:2
    |
261 | !(
    |  ^ the nesting limit is reached here
    |
    = ptxmc bounds the nesting so that no condition can exhaust the stack

"#,
    );
}

#[test]
fn mp_preconditions_count_toward_the_limit() {
    check(
        "many_preconditions.test",
        &format!(
            ".global x;\nd0.b0.t0 {{\n{}}}\npermit(x == 0) as t;\n",
            (0..257)
                .map(|i| format!("  ld r{i}, [x] == 0;\n"))
                .collect::<String>()
        ),
        r#"error: expected a proposition at most 256 levels deep, found a deeper one
    --> many_preconditions.test:261:1
    |
261 | permit(x == 0) as t;
    | ^^^^^^^^^^^^^^^^^^^ 257 preconditions make this condition too deep
    |
    = every negation and every `/\`, `\/`, `&&` or `||` above a comparison counts one level (a chain of N conjuncts is N-1 levels); ptxmc bounds the depth so that no condition can exhaust the stack

"#,
    );
}

/// Expansion multiplies (each placeholder receives its cell): a small file could ask for gigabytes.
#[test]
fn mp_row_expands_too_far() {
    check(
        "huge_row.test",
        &format!(
            ".global x;\nd0.b0.t0 {{\n{}}}\npermit(x == 0) as t;\n$$\n{}\n",
            "  $0\n".repeat(700),
            "st [x], 1;".repeat(40)
        ),
        r#"error: expected a template row that expands to at most 256 KiB, found row 1, which expands to more
    --> huge_row.test:706:1
    |
706 | st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;
    | ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ every placeholder of the template receives its cell

"#,
    );
}

#[test]
fn mp_rows_expand_too_far_together() {
    check(
        "total_expansion.test",
        &format!(
            ".global x;\nd0.b0.t0 {{\n{}}}\npermit(x == 0) as t;\n$$\n{}st [x], 2;\n",
            "  $0\n".repeat(100),
            format!("{}\n", "st [x], 1;".repeat(200)).repeat(21)
        ),
        r#"error: expected template rows that expand to at most 4096 KiB together, found more by row 21
    --> total_expansion.test:126:1
    |
126 | st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;st [x], 1;
    | ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ the expansion limit is reached at this row

"#,
    );
}

#[test]
fn mp_too_many_rows() {
    check(
        "many_rows.test",
        &format!(
            ".global x;\nd0.b0.t0 {{\n  st [x], $0;\n}}\npermit(x == 0) as t;\n$$\n{}",
            "1\n".repeat(4097)
        ),
        r#"error: expected at most 4096 template rows, found row 4097
     --> many_rows.test:4103:1
     |
4103 | 1
     | ^ ptxmc limits how many tests one file expands to

"#,
    );
}

/// Placement numbers are bounded, so numbering implicit clusters cannot overflow.
#[test]
fn placement_number_too_large() {
    check(
        "big_cta.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 4294967295,gpu 0 ;
 st.weak x, 1 ;
exists (x == 1)
"#,
        r#"error: expected a number between 0 and 65535, found `4294967295`
  --> big_cta.litmus:3:9
  |
3 |  P0@cta 4294967295,gpu 0 ;
  |         ^^^^^^^^^^

"#,
    );
}

#[test]
fn mp_block_number_too_large() {
    check(
        "big_block.test",
        r#".global x;
d0.b70000.t0 {
  st [x], 1;
}
permit (x == 1) as t;
"#,
        r#"error: expected device, block and thread numbers between 0 and 65535, found `d0.b70000.t0`
  --> big_block.test:2:1
  |
2 | d0.b70000.t0 {
  | ^^^^^^^^^^^^

"#,
    );
}

#[test]
fn nul_character() {
    check(
        "nul.litmus",
        "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1\0 ;\nexists (x == 1)\n",
        "error: expected a name, an integer or punctuation, found character `\\0`\n  --> nul.litmus:4:14\n  |\n4 |  st.weak x, 1\0 ;\n  |               an invisible control character\n\n",
    );
}

#[test]
fn integer_too_large() {
    check(
        "big_int.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak x, 9223372036854775808 ;
exists (x == 1)
"#,
        r#"error: expected an integer that fits in 64 bits, found `9223372036854775808`
  --> big_int.litmus:4:13
  |
4 |  st.weak x, 9223372036854775808 ;
  |             ^^^^^^^^^^^^^^^^^^^

"#,
    );
}

#[test]
fn locations_without_brackets() {
    check(
        "locations_brackets.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak x, 1 ;
locations x;
exists (x == 1)
"#,
        r#"error: expected `[` and the registers and locations to show, found `x`
  --> locations_brackets.litmus:5:11
  |
5 | locations x;
  |           ^

"#,
    );
}

#[test]
fn mp_preconditions_and_condition_too_deep_together() {
    check(
        "pre_and_cond.test",
        &format!(
            ".global x;\nd0.b0.t0 {{\n{}}}\nassert(x == 0) as t;\n",
            (0..256)
                .map(|i| format!("  ld r{i}, [x] == 0;\n"))
                .collect::<String>()
        ),
        r#"error: expected a proposition at most 256 levels deep, found a deeper one
    --> pre_and_cond.test:260:1
    |
260 | assert(x == 0) as t;
    | ^^^^^^^^^^^^^^^^^^^ with its 256 precondition(s) this condition is 257 levels deep
    |
    = every negation and every `/\`, `\/`, `&&` or `||` above a comparison counts one level (a chain of N conjuncts is N-1 levels); ptxmc bounds the depth so that no condition can exhaust the stack

"#,
    );
}

/// A file in a fresh directory, for errors about files as such; the
/// directory's path is replaced by `DIR` in the rendered message.
fn check_file(name: &str, write: impl FnOnce(&std::path::Path), expected: &str) {
    let dir = std::env::temp_dir().join(format!("ptxmc-errors-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    write(&path);
    let err = litmus::parse_file(&path).expect_err("the file is refused");
    let shown = err.rendered().replace(&dir.display().to_string(), "DIR");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(shown, expected, "rendering of {name} changed:\n{shown}");
}

/// The offending byte is located, not just the file.
#[test]
fn invalid_utf8_is_positioned() {
    check_file(
        "bad_utf8.litmus",
        |p| {
            std::fs::write(
                p,
                b"PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ; \xff\nexists (x == 1)\n",
            )
            .unwrap()
        },
        "error: expected UTF-8 text, found the byte 0xff, which is not UTF-8
  --> DIR/bad_utf8.litmus:4:17
  |
4 |  st.weak x, 1 ; \u{fffd}
  |                 ^

",
    );
}

/// Only regular files are read: a FIFO would block, a device never end.
#[test]
fn special_files_are_refused() {
    check_file(
        "dir.litmus",
        |p| std::fs::create_dir(p).unwrap(),
        "error: expected a regular file, found a directory
 --> DIR/dir.litmus:1:1
",
    );
    #[cfg(unix)]
    check_file(
        "fifo.litmus",
        |p| {
            let made = std::process::Command::new("mkfifo").arg(p).status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo works");
        },
        "error: expected a regular file, found a special file (FIFO, socket or device)
 --> DIR/fifo.litmus:1:1
",
    );
}

#[test]
fn files_beyond_the_size_limit_are_refused() {
    check_file(
        "huge.litmus",
        |p| {
            let text = format!("PTX t\n{}", "(* padding *)\n".repeat(400_000));
            std::fs::write(p, text).unwrap()
        },
        "error: expected a test file of at most 4 MiB, found a larger file
 --> DIR/huge.litmus:1:1
",
    );
}

/// `trace --outcome` applies the rule of conditions (shared code).
#[test]
fn trace_outcome_register_never_written() {
    let src = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1   | ld.weak r0, x  ;\nexists (P1:r0 == 1)\n";
    let t = &litmus::parse_source("t.litmus", src).unwrap()[0];
    let text = "P1:r1=0";
    let d = litmus::cond::parse_outcome(&t.program, &t.spans, text).unwrap_err();
    assert_eq!(
        litmus::LitmusError::new("--outcome", text, d).rendered(),
        "error: expected a register that P1 writes or the initial state sets, found `r1`
  --> --outcome:1:4
  |
1 | P1:r1=0
  |    ^^ P1's registers: `r0`

"
    );
}

fn check_histogram(text: &str, expected: &str) {
    let err = ptxmc::hw::histogram::Histogram::parse_file("h.json", text)
        .expect_err("the histogram is malformed");
    assert_eq!(err, expected, "rendering changed:\n{err}");
}

const HISTOGRAM: &str = r#"{
  "test": "litmus/mp/MP+rel+acq.gpu.litmus",
  "runs": 1000,
  "columns": ["P1:r0", "P1:r1", "x", "f"],
  "outcomes": [
    {"values": [0, 0, 1, 1], "count": 700},
    {"values": [1, 1, 1, 1], "count": 300}
  ]
}
"#;

/// `hw compare`: counts near `u64::MAX` add up with checked arithmetic.
#[test]
fn histogram_counts_overflow() {
    check_histogram(
        &HISTOGRAM.replace("700", "18446744073709551615"),
        r#"error: expected counts that add up to at most 18446744073709551615, found a total that overflows at outcome 2
  --> h.json:5:3
  |
5 |   "outcomes": [
  |   ^^^^^^^^^^

"#,
    );
}

#[test]
fn histogram_wrong_type() {
    check_histogram(
        &HISTOGRAM.replace("\"runs\": 1000", "\"runs\": \"many\""),
        r#"error: expected a non-negative integer (64 bits), found string "many"
  --> h.json:3:11
  |
3 |   "runs": "many",
  |           ^^^^^^

"#,
    );
}

#[test]
fn histogram_negative_count() {
    check_histogram(
        &HISTOGRAM.replace("300", "-3"),
        r#"error: expected a non-negative integer (64 bits), found integer `-3`
  --> h.json:7:39
  |
7 |     {"values": [1, 1, 1, 1], "count": -3}
  |                                       ^^

"#,
    );
}

#[test]
fn histogram_missing_field() {
    check_histogram(
        &HISTOGRAM.replace("  \"runs\": 1000,\n", ""),
        r#"error: expected a field `runs`, found an object without it
  --> h.json:8:1
  |
8 | }
  | ^

"#,
    );
}

#[test]
fn histogram_values_per_column() {
    check_histogram(
        &HISTOGRAM.replace("[1, 1, 1, 1]", "[1, 1, 1]"),
        r#"error: expected 4 values per outcome (one per column), found 3 in outcome 2
  --> h.json:5:3
  |
5 |   "outcomes": [
  |   ^^^^^^^^^^

"#,
    );
}

#[test]
fn histogram_syntax() {
    check_histogram(
        &HISTOGRAM.replace("\"runs\": 1000,", "\"runs\": 1000"),
        r#"error: expected `,` or `}`, found `"`
  --> h.json:4:3
  |
4 |   "columns": ["P1:r0", "P1:r1", "x", "f"],
  |   ^

"#,
    );
}

/// A histogram naming a test that does not exist is reported at its `"test"` field.
#[test]
fn histogram_unknown_test_path() {
    let dir = std::env::temp_dir().join(format!("ptxmc-errors-{}-hist", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("h.json");
    std::fs::write(
        &path,
        HISTOGRAM.replace("litmus/mp/MP+rel+acq.gpu.litmus", "litmus/mp/nope.litmus"),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(["hw", "compare"])
        .arg(&path)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr).replace(&dir.display().to_string(), "DIR");
    assert_eq!(
        stderr,
        r#"error: expected a test file (`path` or `path[row]`, relative to the current directory), found `litmus/mp/nope.litmus`, which is not a file
  --> DIR/h.json:2:3
  |
2 |   "test": "litmus/mp/nope.litmus",
  |   ^^^^^^

"#
    );
}

#[test]
fn histogram_schema() {
    check_histogram(
        &HISTOGRAM.replace("{\n", "{\n  \"schema\": \"ptxmc-hw-histogram/9\",\n"),
        r#"error: expected the schema `ptxmc-hw-histogram/1`, found `ptxmc-hw-histogram/9`
  --> h.json:2:3
  |
2 |   "schema": "ptxmc-hw-histogram/9",
  |   ^^^^^^^^

"#,
    );
}

#[test]
fn histogram_unreadable() {
    let err = ptxmc::hw::histogram::Histogram::read(std::path::Path::new("no/such/h.json"))
        .expect_err("there is no such file");
    assert_eq!(
        err,
        "error: expected a readable histogram, found an I/O error: No such file or directory (os error 2)\n --> no/such/h.json:1:1\n"
    );
}

/// A `path[row]` whose row the file does not have.
#[test]
fn histogram_unknown_test_row() {
    let dir = std::env::temp_dir().join(format!("ptxmc-errors-{}-row", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("h.json");
    std::fs::write(
        &path,
        HISTOGRAM.replace(
            "litmus/mp/MP+rel+acq.gpu.litmus",
            "tests/peers/mixedproxy/tests/MP_gpu.test[99]",
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(["hw", "compare"])
        .arg(&path)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr).replace(&dir.display().to_string(), "DIR");
    assert_eq!(
        stderr,
        r#"error: expected a test file (`path` or `path[row]`, relative to the current directory), found `tests/peers/mixedproxy/tests/MP_gpu.test[99]`, which names no test of the file
  --> DIR/h.json:2:3
  |
2 |   "test": "tests/peers/mixedproxy/tests/MP_gpu.test[99]",
  |   ^^^^^^

"#
    );
}

#[test]
fn cluster_barrier_phase_that_depends_on_the_path() {
    check_refused(
        "cluster_phase.litmus",
        r#"PTX t
{ x=0; }
 P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;
 ld.relaxed.cluster r0, x | barrier.cluster.arrive ;
 beq r0, 1, L | barrier.cluster.wait ;
 barrier.cluster.arrive | barrier.cluster.arrive ;
 barrier.cluster.wait | barrier.cluster.wait ;
 L: | ;
 barrier.cluster.arrive | ;
 barrier.cluster.wait | ;
exists (P0:r0 == 1)
"#,
        r#"error: expected the same number of `barrier.cluster.arrive`s on every path to this instruction, found paths with different numbers of arrivals
  --> cluster_phase.litmus:9:2
  |
9 |  barrier.cluster.arrive | ;
  |  ^^^^^^^^^^^^^^^^^^^^^^ which cluster-barrier phase this is depends on the path
  |
  = paths of P0 meet at this instruction; ptxmc counts cluster-barrier phases per thread, statically

"#,
    );
}

#[test]
fn async_group_operation_in_a_loop() {
    check_refused(
        "group_loop.litmus",
        r#"PTX t
{ s @ shared cta 0 = 0; h=0; }
 P0@cta 0,cluster 0,gpu 0 ;
 mov r1, 0 ;
 L: ;
 cp.async.bulk.global.shared::cta.bulk_group [h], [s], 4 ;
 add r1, r1, 1 ;
 bne r1, 2, L ;
 cp.async.bulk.commit_group ;
exists (P0:r1 == 2)
"#,
        r#"error: expected an operation that joins an async-group outside loops, found `cp.async.bulk.global.shared::cta.bulk_group [h], [s], 4` inside a loop
  --> group_loop.litmus:6:2
  |
6 |  cp.async.bulk.global.shared::cta.bulk_group [h], [s], 4 ;
  |  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ joins a group in every iteration
  |
  = the loop goes back at instruction 4 (`bne r1, 2, L`); each execution of an operation in a loop is an operation of its own, and which of them a later wait awaits changes from one iteration to the next: ptxmc lays async-groups out statically (operations that complete on an mbarrier may be issued in loops)

"#,
    );
}

#[test]
fn async_group_wait_after_a_branch_that_skips_a_commit() {
    check_refused(
        "group_branch.litmus",
        r#"PTX t
{ s @ shared cta 0 = 0; g=0; h=0; }
 P0@cta 0,cluster 0,gpu 0 ;
 ld.global r1, g ;
 beq r1, 0, L ;
 cp.async.bulk.global.shared::cta.bulk_group [h], [s], 4 ;
 cp.async.bulk.commit_group ;
 L: ;
 cp.async.bulk.wait_group 0 ;
exists (P0:r1 == 1)
"#,
        r#"error: expected the same committed async-groups on every path to this wait, found paths that issued or committed different operations
  --> group_branch.litmus:9:2
  |
9 |  cp.async.bulk.wait_group 0 ;
  |  ^^^^^^^^^^^^^^^^^^^^^^^^^^ which operations this waits for depends on the path
  |
  = paths of P0 meet at this instruction; ptxmc lays async-groups out statically and does not guess which operations a wait awaits

"#,
    );
}

#[test]
fn accesses_of_different_sizes_to_one_location_are_refused() {
    check(
        "mixed_sizes.litmus",
        r#"PTX sizes
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 st.relaxed.gpu.u8 x, 1 | ld.relaxed.gpu r0, x ;
exists (x == 1)
"#,
        r#"error: expected an 8-bit access to x, the width of P0's `st.relaxed.gpu.u8 x, 1` (line 4, column 2), found a 32-bit access
  --> mixed_sizes.litmus:4:27
  |
4 |  st.relaxed.gpu.u8 x, 1 | ld.relaxed.gpu r0, x ;
  |                           ^^^^^^^^^^^^^^^^^^^^ accesses of different sizes to one location
  |
  = the PTX memory model's axioms do not cover mixed-size accesses (PTX ISA, Memory Consistency Model, "Data races"); an access with no type is 32 bits

"#,
    );
}

#[test]
fn accesses_of_different_sizes_through_an_alias_are_refused() {
    check(
        "mixed_sizes_alias.litmus",
        r#"PTX sizes
{ x=0; x2 @ generic aliases x; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 st.relaxed.gpu.u16 x, 1 | ld.relaxed.gpu.u32 r0, x2 ;
exists (x == 1)
"#,
        r#"error: expected a 16-bit access to x, the width of P0's `st.relaxed.gpu.u16 x, 1` (line 4, column 2), found a 32-bit access
  --> mixed_sizes_alias.litmus:4:28
  |
4 |  st.relaxed.gpu.u16 x, 1 | ld.relaxed.gpu.u32 r0, x2 ;
  |                            ^^^^^^^^^^^^^^^^^^^^^^^^^ accesses of different sizes to one location
  |
  = the PTX memory model's axioms do not cover mixed-size accesses (PTX ISA, Memory Consistency Model, "Data races"); an access with no type is 32 bits

"#,
    );
}

#[test]
fn a_stored_value_that_does_not_fit_the_type_is_refused() {
    check(
        "value_too_wide.litmus",
        r#"PTX sizes
{ x=0; }
 P0@cta 0,gpu 0 ;
 st.weak.u8 x, 300 ;
exists (x == 44)
"#,
        r#"error: expected a value that fits `.u8` (0..255), the instruction's own type, found `300`
  --> value_too_wide.litmus:4:2
  |
4 |  st.weak.u8 x, 300 ;
  |  ^^^^^^^^^^^^^^^^^ 300 does not fit `.u8`
  |
  = values are not wrapped to an access's width

"#,
    );
}

#[test]
fn an_initial_value_that_does_not_fit_an_access_type_is_refused() {
    check(
        "init_too_wide.litmus",
        r#"PTX sizes
{ x=300; }
 P0@cta 0,gpu 0 ;
 ld.weak.u8 r0, x ;
exists (P0:r0 == 44)
"#,
        r#"error: expected an initial value of x that fits `.u8` (0..255), found x=300 in the initial state
  --> init_too_wide.litmus:4:2
  |
4 |  ld.weak.u8 r0, x ;
  |  ^^^^^^^^^^^^^^^^ x is accessed as `.u8` here
  |
  = values are not wrapped to an access's width

"#,
    );
}

#[test]
fn a_register_stored_by_a_narrow_access_is_refused() {
    check(
        "narrow_register_store.litmus",
        r#"PTX sizes
{ x=0; }
 P0@cta 0,gpu 0 ;
 ld.weak r1, x ;
 add r1, r1, 1 ;
 st.weak.b16 y, r1 ;
exists (y == 1)
"#,
        r#"error: expected an immediate value in a 16-bit write (a register may hold a value that does not fit, and values are not wrapped), found register `r1`
  --> narrow_register_store.litmus:6:2
  |
6 |  st.weak.b16 y, r1 ;
  |  ^^^^^^^^^^^^^^^^^ P0's `st.weak.b16 y, r1` writes a register

"#,
    );
}

#[test]
fn an_atomic_of_a_width_ptx_lacks_is_refused() {
    check(
        "byte_atomic.litmus",
        r#"PTX sizes
{ x=0; }
 P0@cta 0,gpu 0 ;
 atom.relaxed.gpu.add.u8 r0, x, 1 ;
exists (x == 1)
"#,
        r#"error: expected a type of an atomic (`.b32`, `.u32`, `.s32`, `.b64`, `.u64`, `.s64`, or `.b16` with `atom.cas`), found `atom.add.u8`
  --> byte_atomic.litmus:4:23
  |
4 |  atom.relaxed.gpu.add.u8 r0, x, 1 ;
  |                       ^^ `atom.add.u8` is not supported by ptxmc
  |
  = PTX has no atomic of this width

"#,
    );
}

/// PTX pasted into the table, with a `;` after each instruction: the row
/// ends at the first `;`, and the error says what the dialect expects.
#[test]
fn a_semicolon_after_each_instruction_is_explained() {
    check(
        "pasted.litmus",
        "PTX pasted\n{ x=0; f=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1; | ld.acquire.gpu r0, f; ;\nexists (P1:r0 == 1)\n",
        r#"error: expected 2 cells separated by `|` (one per thread), found 1 cell
  --> pasted.litmus:4:14
  |
4 |  st.weak x, 1; | ld.acquire.gpu r0, f; ;
  |              ^ this `;` ends the row here
  |
  = in this dialect `;` ends a row of the instruction table, not an instruction: write one row per line, one instruction per thread separated by `|`, and a single `;` at the end (`st.weak x, 1 | ... ;`); drop the `;` after each PTX instruction

"#,
    );
    // A short row with nothing after it keeps the plain message.
    check(
        "short.litmus",
        "PTX short\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 ;\nexists (x == 1)\n",
        r#"error: expected 2 cells separated by `|` (one per thread), found 1 cell
  --> short.litmus:4:2
  |
4 |  st.weak x, 1 ;
  |  ^^^^^^^^^^^^^

"#,
    );
}

/// `//` comments after an instruction, as PTX writes them, are accepted:
/// the comment ends with its cell.
#[test]
fn ptx_line_comments_in_cells_are_accepted() {
    let text = |row: &str| {
        format!(
            "PTX comment\n{{ x=0; }}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n{row}\nexists (P1:r0 == 1)\n"
        )
    };
    let parse = |row: &str| {
        litmus::parse_source("comment.litmus", &text(row))
            .unwrap_or_else(|e| panic!("{}", e.rendered()))
            .remove(0)
            .program
    };
    assert_eq!(
        parse(" st.weak x, 1 // the data | ld.weak r0, x // read it ;"),
        parse(" st.weak x, 1 | ld.weak r0, x ;")
    );
}

/// `.joined` (ptxmc's own modifier, `ir::copies`) continues a copy: one
/// with no copy before it is refused where it stands.
#[test]
fn a_joined_copy_needs_a_copy_before_it() {
    check(
        "joined_first.litmus",
        r#"PTX joined_first
{
s[0] @ shared cta 0 = 0;
s[1] @ shared cta 0 = 0;
g[0]=1;
g[1]=2;
bar @ mbarrier cta 0 = 1;
}
 P0@cta 0,cluster 0,gpu 0 ;
 mbarrier.arrive.expect_tx.shared::cta _, [bar], 8 ;
 cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.joined [s[1]], [g[1]], 4, [bar] ;
exists (s[1] == 2)
"#,
        "error: expected a `.joined` copy after a copy of the same kind and completion (no label or branch in between), found no copy before it
   --> joined_first.litmus:11:2
   |
11 |  cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.joined [s[1]], [g[1]], 4, [bar] ;
   |  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
   |
   = `.joined` is ptxmc's, not PTX's: the printer writes it on the second and later element copies of one tensor or multicast copy, whose bytes the GPU may complete in any chunks (docs/async.md 8)

",
    );
}
