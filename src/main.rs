//! The `ptxmc` command; everything lives in [`ptxmc::cli`].

// The explorer allocates and frees a few-kilobyte state per successor;
// mimalloc serves those sizes from thread-local free lists where the system
// allocator takes its slower large-bin path.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    ptxmc::cli::main()
}
