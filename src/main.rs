//! The `flinkpipe` binary: builds the command line and hands over to [`flinkpipe::cli::run`].

fn main() {
    std::process::exit(flinkpipe::cli::main());
}
