//! What becomes of freed memory under mimalloc, the probe binary's allocator: kept for reuse
//! by default ([`keep`]: a sweep allocates and frees the same buffers for every network), or
//! handed back to the OS ([`hand_back`]: the tiled route, whose peak is the machine's
//! memory, where a kept buffer of one phase would sit beside the next phase's).
//!
//! Elsewhere (a library user's own allocator, the lib's tests) mimalloc holds nothing and
//! these only set its options.

/// `mi_option_purge_delay` in the bundled mimalloc 3 (`mimalloc.h`'s `mi_option_e`; the
/// sys crate does not name it; the binary's test checks its default, 1000 ms).
pub const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Never return freed memory to the OS (purge delay -1): it is reused by the next buffer
/// instead of faulted in again. The process keeps its peak footprint until it exits.
pub fn keep() {
    // SAFETY: setting a mimalloc option is a plain store into its option table.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

/// From now on return freed memory to the OS at once (purge delay 0), and return what is
/// kept now. Measured on the tiled route at 60,000 MNIST images, depth 10: with memory
/// kept, 2.9 GB of freed buffers (the data's loading, the factors' groups already used) sat
/// beside the tiles.
pub fn hand_back() {
    // SAFETY: setting a mimalloc option is a plain store into its option table; collecting
    // is safe at any point.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        libmimalloc_sys::mi_collect(true);
    }
}
