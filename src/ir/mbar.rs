//! The state of an mbarrier object as one value, so that mbarrier operations
//! are atomic read-modify-writes on its location (digest §2.4 [F]).
//!
//! Layout: phase in bits 48.., expected arrival count in bits 36..48,
//! pending arrivals in bits 24..36, transaction count (offset by 2²³, so it
//! may go negative while bytes arrive before they are expected) in bits 0..24.
//! A phase completes when pending arrivals and the transaction count both
//! reach zero: the phase number goes up and pending arrivals reset to the
//! expected count.

use super::Value;

const TX_OFFSET: i64 = 1 << 23;

fn fields(v: Value) -> (i64, i64, i64, i64) {
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

/// Arrive-on with `count` arrivals.
pub fn arrive(v: Value, count: Value) -> Value {
    let (phase, expected, pending, tx) = fields(v);
    settle(phase, expected, pending - count, tx)
}

/// Expect `bytes` more transaction bytes in the current phase.
pub fn expect_tx(v: Value, bytes: Value) -> Value {
    let (phase, expected, pending, tx) = fields(v);
    pack(phase, expected, pending, tx + bytes)
}

/// `bytes` transaction bytes have arrived.
pub fn complete_tx(v: Value, bytes: Value) -> Value {
    let (phase, expected, pending, tx) = fields(v);
    settle(phase, expected, pending, tx - bytes)
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
}
