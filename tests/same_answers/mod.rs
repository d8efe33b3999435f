//! The comparison every reduction's on/off test makes: two complete runs
//! of one program, with a reduction and without it, give the same answers —
//! final states, loop-bound flag, termination verdict (the hang itself
//! included), undefined behaviour and, where both engines' races are
//! found, the same races (which execution shows one may differ).

#![allow(dead_code)] // each test binary uses part of it

use ptxmc::engine::RunResult;

/// Asserts that `with` and `without` (runs of the program `name`, with and
/// without a reduction) are complete and give the same answers; `races`
/// also compares the races found.
pub fn assert_same(name: &str, with: &RunResult, without: &RunResult, races: bool) {
    assert!(
        with.incomplete.is_none() && without.incomplete.is_none(),
        "{name}: incomplete"
    );
    assert_eq!(with.outcomes, without.outcomes, "{name}: outcomes changed");
    assert_eq!(
        with.bound_hit, without.bound_hit,
        "{name}: bound flag changed"
    );
    assert_eq!(
        with.termination, without.termination,
        "{name}: termination changed"
    );
    assert_eq!(
        with.undefined, without.undefined,
        "{name}: undefined changed"
    );
    if races {
        let found = |r: &RunResult| {
            let v: Vec<_> = r.races.found.iter().map(|f| f.race.clone()).collect();
            (v, r.races.status.clone())
        };
        assert_eq!(found(with), found(without), "{name}: races changed");
    }
}
