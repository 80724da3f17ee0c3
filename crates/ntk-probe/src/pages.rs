//! How the OS backs the probe's memory: 4 KiB pages, not transparent huge pages (THP).
//!
//! mimalloc, the binary's allocator, asks Linux for THP on its arenas (`madvise(...,
//! MADV_HUGEPAGE)`, where the system default `madvise` mode gives them to no one else). On
//! this project's 2-core VM a huge page's first touch was six times as dear per byte as
//! small pages': the synthetic Fig. 2 sweep's first network (depth 10, n = 2000) took
//! 2.60 s with THP against 1.02 s without (the later seeds, on reused memory, 0.70 s either
//! way), and the whole benchmark sweep 19.8 s against 17.9-18.3 s, at the same peak memory
//! (`experiments/bench/README.md`). So the binary turns THP off for itself, as the system
//! default would; `NTK_ALLOW_THP=1` keeps mimalloc's choice.

/// The environment variable that keeps transparent huge pages on.
pub const ALLOW_THP: &str = "NTK_ALLOW_THP";

/// Turns transparent huge pages off for this process (Linux `PR_SET_THP_DISABLE`, which
/// holds for every mapping, mimalloc's arenas included, and is kept across `exec`), unless
/// [`ALLOW_THP`] is `1`. Elsewhere a no-op. Call it first in `main`, before large buffers
/// are touched: pages already faulted in stay as they are.
pub fn small_pages() {
    if std::env::var(ALLOW_THP).is_ok_and(|v| v == "1") {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: a prctl that sets a flag on this process's memory map; its failure (an old
    // kernel) leaves THP as it was, which is harmless.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
