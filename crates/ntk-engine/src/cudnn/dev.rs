//! Device memory as typed handles: [`DevBuf<T>`], an allocation of `len` values of `T` that
//! only [`crate::cudnn::gpu::Gpu`] makes (and frees when it drops), and [`DevPtr<T>`], the
//! address of a `T` inside one. Offsets count elements, not bytes ([`DevPtr::add`],
//! [`DevBuf::at`], bounds-checked); a value that may be absent (a border gain, Fixup's
//! scalar mask) is an `Option`, passed to a kernel as a null pointer ([`KernelPtr`]).

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

/// The address of a `T` in device memory (a `CUdeviceptr`), inside an allocation of the
/// engine's [`crate::cudnn::gpu::Gpu`].
pub struct DevPtr<T> {
    addr: u64,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for DevPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DevPtr<T> {}

impl<T> fmt::Debug for DevPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DevPtr({:#x})", self.addr)
    }
}

impl<T> DevPtr<T> {
    /// The handle of an address the driver returned (crate-private: only `Gpu`'s
    /// allocations become handles).
    pub(crate) fn from_raw(addr: u64) -> Self {
        Self {
            addr,
            _t: PhantomData,
        }
    }

    /// The address, for the driver's calls.
    pub fn raw(self) -> u64 {
        self.addr
    }

    /// The address as the libraries' `void*` (cuDNN, cuBLAS, kernel arguments).
    pub(crate) fn void(self) -> *mut c_void {
        self.addr as *mut c_void
    }

    /// The `n`-th value from here (`n * size_of::<T>()` bytes on). Unchecked: a handle
    /// from [`DevBuf::at`] or [`DevBuf::slot`] is inside its allocation.
    fn add(self, n: usize) -> Self {
        Self::from_raw(self.addr + (n * size_of::<T>()) as u64)
    }
}

/// `len` values of `T` in device memory: an allocation of [`crate::cudnn::gpu::Gpu`] or a
/// slot of one ([`DevBuf::slot`]).
pub struct DevBuf<T> {
    ptr: DevPtr<T>,
    len: usize,
}

impl<T> Clone for DevBuf<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DevBuf<T> {}

impl<T> fmt::Debug for DevBuf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DevBuf({:#x}, {})", self.ptr.addr, self.len)
    }
}

impl<T> DevBuf<T> {
    /// An allocation of `len` values at `ptr` (crate-private: only `Gpu` makes them).
    pub(crate) fn from_raw(ptr: u64, len: usize) -> Self {
        Self {
            ptr: DevPtr::from_raw(ptr),
            len,
        }
    }

    /// Its first value.
    pub fn ptr(self) -> DevPtr<T> {
        self.ptr
    }

    /// The number of values.
    pub fn len(self) -> usize {
        self.len
    }

    /// Whether it holds no value.
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// Its `i`-th value (`i <= len`: one past the end is an address, not a value).
    ///
    /// # Panics
    /// When `i > len`: the engine's offsets come from its own layout, so this is a bug in
    /// the engine, never the user's input.
    pub fn at(self, i: usize) -> DevPtr<T> {
        assert!(i <= self.len, "offset {i} outside {} values", self.len);
        self.ptr.add(i)
    }

    /// Values `at..at + len`, inside this buffer.
    ///
    /// # Panics
    /// As [`DevBuf::at`], when the slot does not fit.
    pub fn slot(self, at: usize, len: usize) -> DevBuf<T> {
        assert!(
            at.checked_add(len).is_some_and(|end| end <= self.len),
            "slot {at}..{at}+{len} outside {} values",
            self.len
        );
        DevBuf {
            ptr: self.ptr.add(at),
            len,
        }
    }
}

impl<T> From<DevBuf<T>> for DevPtr<T> {
    /// The buffer's first value.
    fn from(b: DevBuf<T>) -> Self {
        b.ptr
    }
}

/// What a kernel argument or a library call takes as a device pointer: a handle, or an
/// optional one (`None`: a null pointer, which the kernels read as "not given").
pub trait KernelPtr {
    /// The address, 0 for none.
    fn addr(&self) -> u64;
}

impl<T> KernelPtr for DevPtr<T> {
    fn addr(&self) -> u64 {
        self.addr
    }
}

impl<T> KernelPtr for DevBuf<T> {
    fn addr(&self) -> u64 {
        self.ptr.addr
    }
}

impl<P: KernelPtr> KernelPtr for Option<P> {
    fn addr(&self) -> u64 {
        self.as_ref().map_or(0, KernelPtr::addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_elements_and_stay_inside() {
        let b = DevBuf::<f64>::from_raw(0x1000, 4);
        assert_eq!(b.at(1).raw(), 0x1008);
        assert_eq!(b.at(4).raw(), 0x1020);
        let s = b.slot(1, 2);
        assert_eq!((s.ptr().raw(), s.len()), (0x1008, 2));
        assert_eq!(DevBuf::<f32>::from_raw(0x100, 8).at(3).raw(), 0x10c);
        assert_eq!(None::<DevBuf<f32>>.addr(), 0);
        assert_eq!(Some(b).addr(), 0x1000);
        assert!(std::panic::catch_unwind(|| b.at(5)).is_err());
        assert!(std::panic::catch_unwind(|| b.slot(3, 2)).is_err());
        assert!(std::panic::catch_unwind(|| b.slot(usize::MAX, 2)).is_err());
    }
}
