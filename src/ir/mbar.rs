//! The state of an mbarrier object as one value, so that mbarrier operations
//! are atomic read-modify-writes on its location (digest §2.4 [F]).
//!
//! Layout: phase in bits 48.., expected arrival count in bits 36..48,
//! pending arrivals in bits 24..36, transaction count (offset by 2²³, so it
//! may go negative while bytes arrive before they are expected) in bits 0..24.
//! A phase completes when pending arrivals and the transaction count both
//! reach zero: the phase number goes up and pending arrivals reset to the
//! expected count.
//!
//! **Undefined states.** The PTX ISA (§9.7.13.15.2, "Contents of the
//! mbarrier object") gives each count a valid range: pending arrivals
//! 0..2²⁰−1, tx-count −(2²⁰−1)..2²⁰−1. An operation that would take a count
//! out of its range (an arrive-on beyond the pending count, an expect-tx or
//! complete-tx beyond the tx-count's range) is undefined behaviour: its
//! result is an *undefined state* ([`ub`]), a negative value that keeps the
//! phase it was in and why. Every later operation leaves an undefined state
//! as it is, so its phase never completes (waits on it fail for good, like
//! a poisoned CTA-barrier phase, `docs/barriers.md`), and the operation
//! whose read was defined and whose write is not is the undefined step both
//! engines report (`docs/async.md` §5). Pending arrivals never exceed the
//! expected count (≤ 4095) plus the outstanding `cp.async.mbarrier.arrive`
//! increments, so 12 bits hold every pending count a litmus test reaches.

use serde::Serialize;

use super::Value;

const TX_OFFSET: i64 = 1 << 23;

/// The largest magnitude of a valid tx-count (PTX ISA §9.7.13.15.2).
const TX_LIMIT: i64 = (1 << 20) - 1;

/// Why an mbarrier operation is undefined behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MbarUb {
    /// An arrive-on, expect-tx or complete-tx on a location that holds no
    /// initialised mbarrier object (its state before `mbarrier.init`).
    Uninitialised,
    /// An arrive-on with a count above the pending arrivals of the phase
    /// (the pending count would go below zero).
    OverArrival,
    /// An expect-tx or complete-tx that takes the tx-count out of
    /// −(2²⁰−1)..2²⁰−1.
    TxOutOfRange,
}

impl MbarUb {
    const ALL: [MbarUb; 3] = [
        MbarUb::Uninitialised,
        MbarUb::OverArrival,
        MbarUb::TxOutOfRange,
    ];

    /// What happened, in a sentence fragment.
    pub fn what(self) -> &'static str {
        match self {
            MbarUb::Uninitialised => "an mbarrier operation on an uninitialised mbarrier object",
            MbarUb::OverArrival => {
                "an mbarrier arrive-on exceeds the pending arrival count of its phase"
            }
            MbarUb::TxOutOfRange => "an mbarrier's tx-count leaves its valid range",
        }
    }

    /// The ISA's sentences that make it undefined.
    pub fn isa(self) -> &'static str {
        match self {
            MbarUb::Uninitialised => {
                "PTX ISA, mbarrier.inval: \"Performing any mbarrier operation except mbarrier.init \
                 on a memory location that does not contain a valid mbarrier object, results in \
                 undefined behaviour\""
            }
            MbarUb::OverArrival => {
                "PTX ISA 9.7.13.15.7: in an arrive-on operation \"the pending arrival count is \
                 decremented by count\"; 9.7.13.15.2: \"The valid range of each of the counts\" \
                 gives the pending arrival count the minimum value 0"
            }
            MbarUb::TxOutOfRange => {
                "PTX ISA 9.7.13.15.5: expect-tx \"increases the tx-count of an mbarrier object by \
                 the value specified by expectCount\", and in complete-tx \"tx-count is \
                 decremented by completeCount\"; 9.7.13.15.2: \"The valid range of each of the \
                 counts\" gives the tx-count the range -(2^20 - 1) to 2^20 - 1"
            }
        }
    }

    fn code(self) -> i64 {
        self as i64
    }
}

/// An undefined state: the phase it was in, and why.
fn poison(phase: i64, why: MbarUb) -> Value {
    -1 - ((phase << 2) | why.code())
}

/// The undefined state an operation on `v` leads to before it looks at
/// the counts: `v` itself if undefined already, an uninitialised-object
/// state if `v` is no mbarrier object yet (every valid state expects at
/// least one arrival; a declared mbarrier without a count starts at 0).
fn invalid(v: Value) -> Option<Value> {
    if v < 0 {
        Some(v)
    } else if expected(v) == 0 {
        Some(poison(phase(v), MbarUb::Uninitialised))
    } else {
        None
    }
}

/// Why state `v` is undefined, if it is.
pub fn ub(v: Value) -> Option<MbarUb> {
    (v < 0).then(|| MbarUb::ALL[((-1 - v) & 3) as usize])
}

fn fields(v: Value) -> (i64, i64, i64, i64) {
    if v < 0 {
        // An undefined state keeps only its phase.
        return ((-1 - v) >> 2, 0, 0, 0);
    }
    let phase = v >> 48;
    let expected = (v >> 36) & 0xfff;
    let pending = (v >> 24) & 0xfff;
    let tx = (v & 0xff_ffff) - TX_OFFSET;
    (phase, expected, pending, tx)
}

fn pack(phase: i64, expected: i64, pending: i64, tx: i64) -> Value {
    (phase << 48)
        | ((expected & 0xfff) << 36)
        | ((pending & 0xfff) << 24)
        | ((tx + TX_OFFSET) & 0xff_ffff)
}

fn settle(phase: i64, expected: i64, pending: i64, tx: i64) -> Value {
    if pending == 0 && tx == 0 {
        pack(phase + 1, expected, expected, 0)
    } else {
        pack(phase, expected, pending, tx)
    }
}

/// A freshly initialised mbarrier expecting `count` arrivals per phase.
pub fn init(count: Value) -> Value {
    pack(0, count, count, 0)
}

/// Arrive-on with `count` arrivals (a negative count is the pending-count
/// increment of `cp.async.mbarrier.arrive` without `.noinc`). Undefined
/// when the pending count would go below zero.
pub fn arrive(v: Value, count: Value) -> Value {
    if let Some(u) = invalid(v) {
        return u;
    }
    let (phase, expected, pending, tx) = fields(v);
    match pending.checked_sub(count) {
        Some(p) if p >= 0 => settle(phase, expected, p, tx),
        _ => poison(phase, MbarUb::OverArrival),
    }
}

/// Expect `bytes` more transaction bytes in the current phase. Undefined
/// when the tx-count would leave its range.
pub fn expect_tx(v: Value, bytes: Value) -> Value {
    if let Some(u) = invalid(v) {
        return u;
    }
    let (phase, expected, pending, tx) = fields(v);
    match tx.checked_add(bytes) {
        Some(t) if (-TX_LIMIT..=TX_LIMIT).contains(&t) => pack(phase, expected, pending, t),
        _ => poison(phase, MbarUb::TxOutOfRange),
    }
}

/// `bytes` transaction bytes have arrived. Undefined when the tx-count
/// would leave its range.
pub fn complete_tx(v: Value, bytes: Value) -> Value {
    if let Some(u) = invalid(v) {
        return u;
    }
    let (phase, expected, pending, tx) = fields(v);
    match tx.checked_sub(bytes) {
        Some(t) if (-TX_LIMIT..=TX_LIMIT).contains(&t) => settle(phase, expected, pending, t),
        _ => poison(phase, MbarUb::TxOutOfRange),
    }
}

/// State `v` as text: `[phase 0, 1 of 2 arrivals pending, tx 0]`, or
/// `[phase 0, undefined: …]`.
pub fn describe(v: Value) -> String {
    match ub(v) {
        Some(why) => format!("[phase {}, undefined: {}]", phase(v), why.what()),
        None => format!(
            "[phase {}, {} of {} arrivals pending, tx {}]",
            phase(v),
            pending(v),
            expected(v),
            tx(v)
        ),
    }
}

/// The current phase number.
pub fn phase(v: Value) -> Value {
    fields(v).0
}

/// The expected arrival count (what `mbarrier.init` set).
pub fn expected(v: Value) -> Value {
    fields(v).1
}

/// Arrivals still pending in the current phase.
pub fn pending(v: Value) -> Value {
    fields(v).2
}

/// Transaction bytes still expected in the current phase (negative when
/// more arrived than were expected so far).
pub fn tx(v: Value) -> Value {
    fields(v).3
}

/// Whether the phase with parity `parity` has completed, seen from state `v`
/// (`try_wait.parity`): the current phase's parity differs from it.
pub fn parity_done(v: Value, parity: Value) -> bool {
    (phase(v) & 1) != (parity & 1)
}

/// Whether the phase recorded in state token `token` (an arrive's result)
/// has completed, seen from state `v`.
pub fn token_done(v: Value, token: Value) -> bool {
    phase(v) > phase(token)
}

/// How a wait names the phase it asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Test {
    /// By parity (`try_wait.parity`).
    Parity,
    /// By the state token an arrive returned.
    Token,
    /// By phase number (the lowered `barrier.cluster.wait`): has phase `k` completed?
    Phase,
}

/// Whether a wait of kind `test` with operand `arg` succeeds on state `v`.
pub fn done(test: Test, v: Value, arg: Value) -> bool {
    match test {
        Test::Parity => parity_done(v, arg),
        Test::Token => token_done(v, arg),
        Test::Phase => phase(v) > arg,
    }
}

impl Test {
    /// The test and operand of a wait.
    pub fn of(phase: &super::WaitPhase) -> (Test, super::Operand) {
        match phase {
            super::WaitPhase::Parity(o) => (Test::Parity, *o),
            super::WaitPhase::State(o) => (Test::Token, *o),
            super::WaitPhase::Phase(k) => (Test::Phase, super::Operand::Imm(*k)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_and_transactions_complete_a_phase() {
        let b = init(2);
        assert_eq!(phase(b), 0);
        let b = arrive(b, 1);
        assert_eq!(phase(b), 0);
        let b = expect_tx(b, 4);
        let b = arrive(b, 1);
        assert_eq!(phase(b), 0, "bytes still expected");
        let b = complete_tx(b, 4);
        assert_eq!(phase(b), 1);
        assert!(parity_done(b, 0) && !parity_done(b, 1));
        assert_eq!(expected(b), 2);
        // Bytes may arrive before they are expected.
        let c = complete_tx(init(1), 4);
        assert_eq!(phase(c), 0);
        let c = arrive(expect_tx(c, 4), 1);
        assert_eq!(phase(c), 1);
        assert!(token_done(c, init(1)));
    }

    #[test]
    fn leaving_a_valid_range_is_an_undefined_state_that_stays() {
        // Count 1: arrive.expect_tx leaves the phase open (bytes pending);
        // a second arrival takes the pending count below zero.
        let b = arrive(expect_tx(init(1), 4), 1);
        assert_eq!((phase(b), pending(b), tx(b), ub(b)), (0, 0, 4, None));
        let u = arrive(b, 1);
        assert_eq!((phase(u), ub(u)), (0, Some(MbarUb::OverArrival)));
        // Nothing completes an undefined phase.
        assert_eq!(complete_tx(u, 4), u);
        assert_eq!(arrive(u, -1), u);
        assert!(!parity_done(complete_tx(u, 4), 0));
        assert_eq!(
            describe(u),
            "[phase 0, undefined: an mbarrier arrive-on exceeds the pending arrival count of its phase]"
        );
        // The phase is kept: a wait on an earlier phase still succeeds.
        let later = arrive(arrive(init(1), 1), 2);
        assert_eq!((phase(later), ub(later)), (1, Some(MbarUb::OverArrival)));
        assert!(parity_done(later, 0) && token_done(later, init(1)));
        // An arrive with count 2 on a barrier expecting 1.
        assert_eq!(ub(arrive(init(1), 2)), Some(MbarUb::OverArrival));
        // The increment of cp.async.mbarrier.arrive is defined.
        assert_eq!(pending(arrive(init(1), -1)), 2);
        // tx-count: up to 2^20 - 1 either way.
        assert_eq!(ub(expect_tx(init(1), (1 << 20) - 1)), None);
        assert_eq!(ub(expect_tx(init(1), 1 << 20)), Some(MbarUb::TxOutOfRange));
        assert_eq!(
            ub(complete_tx(init(1), 1 << 20)),
            Some(MbarUb::TxOutOfRange)
        );
        assert_eq!(ub(expect_tx(init(1), i64::MAX)), Some(MbarUb::TxOutOfRange));
        assert_eq!(tx(complete_tx(init(1), (1 << 20) - 1)), -((1 << 20) - 1));
        // Before mbarrier.init (a declared mbarrier without a count is 0).
        for u in [arrive(0, 1), expect_tx(0, 4), complete_tx(0, 4)] {
            assert_eq!((phase(u), ub(u)), (0, Some(MbarUb::Uninitialised)));
        }
    }
}
