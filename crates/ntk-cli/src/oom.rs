//! Out of memory as an error, not an abort: [`ExitOnOom`] wraps a binary's global allocator
//! and, when an allocation fails (a cgroup or `ulimit -v` that the memory guard,
//! `ntk_runs::budget`, did not foresee), writes `error: out of memory: an allocation of N
//! bytes failed ...` to stderr and ends the process with exit code 2, the code of every
//! other error. Without it Rust aborts (SIGABRT, exit status 134) after printing
//! `memory allocation of N bytes failed`, and a library's fallible allocation (faer's
//! `AllocError`) panics.
//!
//! Nothing here allocates: the message is assembled in a stack buffer and written with one
//! `write(2)`, and the process ends with `_exit`, which runs no destructors (the tools'
//! files are written atomically and their locks are released by the kernel, so nothing is
//! left half-done).

use std::alloc::{GlobalAlloc, Layout};

/// A global allocator that ends the process with exit code 2 and a clear message when the
/// allocator `A` it wraps cannot allocate.
pub struct ExitOnOom<A>(pub A);

// SAFETY: every call is forwarded to `A` unchanged; a null result ends the process instead
// of returning, but inside `ntk_files::io::try_buffer` (a fallible reservation), where it
// is returned as `A` returned it.
unsafe impl<A: GlobalAlloc> GlobalAlloc for ExitOnOom<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is forwarded.
        let p = unsafe { self.0.alloc(layout) };
        if p.is_null() && !ntk_files::io::allocation_may_fail() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is forwarded.
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if p.is_null() && !ntk_files::io::allocation_may_fail() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is forwarded.
        unsafe { self.0.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is forwarded.
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if p.is_null() && !ntk_files::io::allocation_may_fail() {
            out_of_memory(new_size);
        }
        p
    }
}

/// The message for a failed allocation of `size` bytes, in `buf`; returns its length.
fn message(size: usize, buf: &mut [u8; 256]) -> usize {
    let parts: [&[u8]; 3] = [
        b"error: out of memory: an allocation of ",
        b" bytes failed; the work does not fit in the memory this process may use (beyond \
          the memory guard's estimate, or a --max-memory that overruled it): reduce the \
          sizes, or raise the limit\n",
        b"",
    ];
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    let mut v = size;
    loop {
        k -= 1;
        digits[k] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut n = 0;
    for piece in [parts[0], &digits[k..], parts[1]] {
        let take = piece.len().min(buf.len() - n);
        buf[n..n + take].copy_from_slice(&piece[..take]);
        n += take;
    }
    n
}

#[cold]
fn out_of_memory(size: usize) -> ! {
    let mut buf = [0u8; 256];
    let n = message(size, &mut buf);
    // SAFETY: writing initialized bytes to stderr, then ending the process; no allocation.
    unsafe {
        libc::write(2, buf.as_ptr().cast(), n);
        libc::_exit(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An allocator that has nothing to give.
    struct Empty;

    // SAFETY: it never hands out memory; dealloc is never reached.
    unsafe impl GlobalAlloc for Empty {
        unsafe fn alloc(&self, _: Layout) -> *mut u8 {
            std::ptr::null_mut()
        }
        unsafe fn dealloc(&self, _: *mut u8, _: Layout) {}
    }

    /// Inside a fallible reservation (`ntk_files::io::fallibly`) a failed allocation is
    /// returned as null, so that the reader names its file (thirty-seventh hostile round,
    /// D2: the allocator ended the process first, its message naming none).
    #[test]
    fn a_fallible_reservation_sees_the_failure() {
        let layout = Layout::from_size_align(1 << 20, 8).unwrap();
        // SAFETY: a valid layout; the result is null and never used.
        let p = ntk_files::io::fallibly(|| unsafe { ExitOnOom(Empty).alloc(layout) });
        assert!(p.is_null());
    }

    #[test]
    fn the_message_names_the_size_without_allocating_it() {
        let mut buf = [0u8; 256];
        let n = message(268_435_456, &mut buf);
        let text = std::str::from_utf8(&buf[..n]).unwrap();
        assert!(text.starts_with("error: out of memory: an allocation of 268435456 bytes"));
        assert!(text.ends_with("raise the limit\n"), "{text}");
        let n = message(0, &mut buf);
        assert!(
            std::str::from_utf8(&buf[..n])
                .unwrap()
                .contains(" of 0 bytes")
        );
    }
}
