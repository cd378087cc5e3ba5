//! The `flinkpipe` binary: builds the command line and hands over to [`flinkpipe::cli::run`].

fn main() {
    std::process::exit(flinkpipe::cli::main());
}

/// mimalloc instead of the system allocator: parsing thousands of SQL files allocates millions of small
/// tokens and AST nodes, and glibc's malloc/free was a quarter of the run time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
