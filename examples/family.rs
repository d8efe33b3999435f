//! Print a generated litmus test (`ptxmc::families`) on stdout, to run it with
//! `ptxmc run` or keep it as a file:
//!
//! ```sh
//! cargo run --release --example family -- random SEED THREADS INSTRS
//! cargo run --release --example family -- iriw|mp-chain|sb-ring|writers|spin-lock|wide-mp|barrier|grid-red|grid-atom|counter N
//! cargo run --release --example family -- pipeline STAGES ROUNDS
//! ```

use ptxmc::families;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| -> u64 {
        args.get(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| usage())
    };
    let text = match args.first().map(String::as_str) {
        Some("random") => families::random(num(1), num(2) as usize, num(3) as usize),
        Some("iriw") => families::iriw(num(1) as usize),
        Some("mp-chain") => families::mp_chain(num(1) as usize),
        Some("sb-ring") => families::sb_ring(num(1) as usize),
        Some("writers") => families::writers(num(1) as usize),
        Some("spin-lock") => families::spin_lock(num(1) as usize),
        Some("wide-mp") => families::wide_mp(num(1) as usize),
        Some("barrier") => families::cta_barrier(num(1) as usize),
        Some("grid-red") => families::grid_barrier(num(1) as usize, families::Arrival::Red),
        Some("grid-atom") => families::grid_barrier(num(1) as usize, families::Arrival::Atom),
        Some("counter") => families::counter(num(1) as usize),
        Some("pipeline") => families::pipeline(num(1) as usize, num(2) as usize),
        Some("warp-barriers") => {
            families::warp_barriers(num(1) as usize, num(2) as usize, num(3) as usize)
        }
        _ => usage(),
    };
    print!("{text}");
}

fn usage() -> ! {
    eprintln!(
        "usage: family random SEED THREADS INSTRS | family iriw|mp-chain|sb-ring|writers|spin-lock|wide-mp|barrier|grid-red|grid-atom|counter N | family pipeline STAGES ROUNDS | family warp-barriers WARPS LANES COUNTED_WARPS"
    );
    std::process::exit(2)
}
