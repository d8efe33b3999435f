//! The CTAs of a test as the harness launches them: one block role each.

use crate::ir::ThreadId;

/// One CTA of the test: a block role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtaRole {
    /// The CTA number written in the test.
    pub cta: u32,
    /// Its cluster number.
    pub cluster: u32,
    /// Its litmus threads, in thread order (warp slot `i` plays `threads[i]`).
    pub threads: Vec<ThreadId>,
}
