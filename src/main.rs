//! The `ptxmc` command; everything lives in [`ptxmc::cli`].

fn main() -> std::process::ExitCode {
    ptxmc::cli::main()
}
