//! The test library embedded in the binary (by `build.rs`): every `.litmus`
//! and `.test` file under `litmus/` and `tests/peers/`, and the corpus
//! kernels of `kernels/` (`.ptx` and the `.cu` whose comment is the launch),
//! for the playground's menu. The server never reads them from disk.

include!(concat!(env!("OUT_DIR"), "/library.rs"));
