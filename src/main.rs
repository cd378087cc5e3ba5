//! The `flinkpipe` binary: builds the command line and hands over to [`flinkpipe::cli::run`].

fn main() {
    keep_freed_memory();
    std::process::exit(flinkpipe::cli::main());
}

/// mimalloc instead of the system allocator: parsing thousands of SQL files allocates millions of small
/// tokens and AST nodes, and glibc's malloc/free was a quarter of the run time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_t` (include/mimalloc.h of libmimalloc-sys
/// 0.1.49: show_errors = 0 … deprecated_eager_commit_delay = 14, purge_delay = 15); the Rust binding
/// has no constant for it.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// mimalloc v3's default purge delay, in milliseconds (`MIMALLOC_VERBOSE=1` prints `purge_delay: 1000`;
/// the header's comment still says 10, v2's value).
const MI_DEFAULT_PURGE_DELAY_MS: std::ffi::c_long = 1000;

/// Tells mimalloc never to hand freed pages back to the OS during the run (`purge_delay = -1`).
///
/// A command is a short batch: with the default delay (1 s), pages freed after a burst of parsing were
/// returned to the kernel and faulted in (and zeroed) again for the next files; on 10,000 tables that
/// was up to a quarter of all samples (`clear_page_erms`) and 0.2–0.4 s of system time. Peak RSS is
/// about the same (164–176 MB against 165–174 MB, BENCHMARKS.md). A user's own `MIMALLOC_PURGE_DELAY` wins, and nothing is changed when
/// the option at our index does not hold mimalloc's default (another mimalloc layout).
fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: plain option getters/setters of the linked mimalloc; no memory is touched.
    unsafe {
        if libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) == MI_DEFAULT_PURGE_DELAY_MS {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1);
        }
    }
}
