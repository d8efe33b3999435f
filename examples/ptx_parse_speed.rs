//! Parse speed of the PTX front end: `cargo run --release --example
//! ptx_parse_speed FILE.ptx...` prints size, best-of-5 time and ms per MB
//! (the figure in docs/kernels.md).

fn main() {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).expect("a readable UTF-8 file");
        let mut best = f64::INFINITY;
        let mut summary = String::new();
        for _ in 0..5 {
            let t = std::time::Instant::now();
            let r = ptxmc::ptx::parser::parse(&text);
            best = best.min(t.elapsed().as_secs_f64() * 1e3);
            summary = match r {
                Ok(m) => format!(
                    "{} functions, {} instructions",
                    m.functions.len(),
                    m.instruction_count()
                ),
                Err(d) => format!("error: {}", d.message()),
            };
        }
        let mb = text.len() as f64 / 1e6;
        println!(
            "{path}\t{mb:.3} MB\t{best:.2} ms\t{:.1} ms/MB\t{summary}",
            best / mb
        );
    }
}
