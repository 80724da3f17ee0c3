//! The device as the solver uses it: one context and one stream, cuBLAS and cuSOLVER handles
//! bound to that stream, and f64 buffers freed on drop. Everything runs on the one stream in
//! order; reads back to the host wait for it.
//!
//! One [`Gpu`] serves the whole process ([`with_gpu`]): creating the context and handles
//! costs a few hundred milliseconds, paid once per run or sweep.

use std::sync::{Arc, Mutex};

use cudarc::cublas::CudaBlas;
use cudarc::cusolver::DnHandle;
use cudarc::driver::{CudaContext, CudaStream, result, sys};

use crate::error::{Result, driver};

/// The device, its stream and handles.
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub blas: CudaBlas,
    pub solver: DnHandle,
    /// The device's name and compute capability, for the log and provenance.
    pub name: String,
}

/// The triangle cuSOLVER reads of a symmetric kernel: the upper one of the column-major view
/// is the lower one of the row-major kernel, the triangle the Burn route's Cholesky reads
/// (the same numbers where a kernel is not bit-for-bit symmetric).
pub const TRIANGLE: cudarc::cusolver::sys::cublasFillMode_t =
    cudarc::cusolver::sys::cublasFillMode_t::CUBLAS_FILL_MODE_UPPER;

/// `len` f64 values of device memory, freed on drop once the stream's work is done.
///
/// `ptr` and `len` are crate-private and never changed after [`Gpu::alloc_raw`]: every
/// `unsafe` call of this crate that takes a buffer relies on `ptr` holding `len` values (at
/// least one).
pub struct Buffer {
    pub(crate) ptr: sys::CUdeviceptr,
    pub(crate) len: usize,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // Work still queued may read or write the buffer (an error path returns before the
        // read that would have waited): wait for it first.
        let _ = self.stream.synchronize();
        // SAFETY: `ptr` came from `malloc_sync`, is freed once, and nothing queued uses it.
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

impl Buffer {
    /// The address of value `i` (a column of a column-major matrix, a diagonal).
    pub fn at(&self, i: usize) -> *mut f64 {
        (self.ptr as usize + 8 * i) as *mut f64
    }
}

impl Gpu {
    /// Device `ordinal` with a stream of its own and cuBLAS and cuSOLVER on it. Asks for the
    /// libraries first ([`crate::libraries::probe`]).
    pub fn new(ordinal: usize) -> Result<Self> {
        crate::libraries::probe()?;
        let ntk_cuda::Opened {
            ctx, stream, name, ..
        } = ntk_cuda::open(ordinal)?;
        let blas = ntk_cuda::call::result(
            ntk_cuda::Lib::Cublas,
            "creating the handle",
            CudaBlas::new(stream.clone()),
        )?;
        let solver = ntk_cuda::call::result(
            ntk_cuda::Lib::Cusolver,
            "creating the handle",
            DnHandle::new(stream.clone()),
        )?;
        Ok(Self {
            ctx,
            stream,
            blas,
            solver,
            name,
        })
    }

    /// The raw cuBLAS handle, for the calls cudarc's safe API lacks.
    pub fn cublas(&self) -> cudarc::cublas::sys::cublasHandle_t {
        *self.blas.handle()
    }

    /// Binds the context to this thread (every entry point's first step).
    pub fn bind(&self) -> Result<()> {
        Ok(driver("binding the context", self.ctx.bind_to_thread())?)
    }

    /// `len` f64 values on the device, not initialized (for buffers written whole first).
    pub fn alloc_raw(&self, len: usize) -> Result<Buffer> {
        self.bind()?;
        // SAFETY: a fresh allocation; the caller writes it before reading it.
        let ptr = driver("allocating device memory", unsafe {
            result::malloc_sync(8 * len.max(1))
        })?;
        Ok(Buffer {
            ptr,
            len,
            ctx: self.ctx.clone(),
            stream: self.stream.clone(),
        })
    }

    /// `len` f64 values on the device, zeroed.
    pub fn alloc(&self, len: usize) -> Result<Buffer> {
        let buffer = self.alloc_raw(len)?;
        let (ptr, bytes) = (buffer.ptr, 8 * len.max(1));
        // SAFETY: `buffer` was just allocated by `alloc_raw` with `8 len.max(1)` bytes, the
        // count set here, with this context bound; the memset is enqueued on `self.stream`,
        // which every later use of the buffer is ordered after (and `Drop for Buffer`
        // synchronizes before freeing it).
        driver("zeroing device memory", unsafe {
            result::memset_d8_async(ptr, 0, bytes, self.stream.cu_stream())
        })?;
        Ok(buffer)
    }

    /// `values` on the device.
    pub fn upload(&self, values: &[f64]) -> Result<Buffer> {
        let b = self.alloc_raw(values.len())?;
        // SAFETY: `b` holds `values.len()` values; the copy is synchronous with respect to the
        // host buffer (pageable memory: the call returns once `values` is staged).
        driver("copying to the device", unsafe {
            result::memcpy_htod_async(b.ptr, values, self.stream.cu_stream())
        })?;
        self.sync()?;
        Ok(b)
    }

    /// A new buffer holding a copy of `src` (queued on the stream).
    pub fn alloc_copy(&self, src: &Buffer) -> Result<Buffer> {
        let b = self.alloc_raw(src.len)?;
        self.copy(&b, src, src.len)?;
        Ok(b)
    }

    /// Copies `len` values from `src` to `dst` on the stream.
    pub fn copy(&self, dst: &Buffer, src: &Buffer, len: usize) -> Result<()> {
        assert!(
            len <= dst.len && len <= src.len,
            "copy: {len} values past a buffer"
        );
        // SAFETY: both buffers hold `len` values (checked above).
        Ok(driver("copying on the device", unsafe {
            result::memcpy_dtod_async(dst.ptr, src.ptr, 8 * len, self.stream.cu_stream())
        })?)
    }

    /// The values of `src`, after the work enqueued so far.
    pub fn read(&self, src: &Buffer) -> Result<Vec<f64>> {
        let mut out = vec![0f64; src.len];
        // SAFETY: `out` holds `src.len` values; the stream is synchronized before `out` is
        // read.
        driver("copying from the device", unsafe {
            result::memcpy_dtoh_async(&mut out, src.ptr, self.stream.cu_stream())
        })?;
        self.sync()?;
        Ok(out)
    }

    /// One `i32` (cuSOLVER's `info`) from the device, after the work enqueued so far.
    pub fn read_info(&self, src: &Buffer) -> Result<i32> {
        let mut out = [0i32; 1];
        // SAFETY: `src` holds at least one 8-byte value; its first 4 bytes are the `int`.
        driver("copying from the device", unsafe {
            result::memcpy_dtoh_async(&mut out, src.ptr, self.stream.cu_stream())
        })?;
        self.sync()?;
        Ok(out[0])
    }

    /// Value `i` of `src`, after the work enqueued so far.
    pub fn read_at(&self, src: &Buffer, i: usize) -> Result<f64> {
        assert!(i < src.len, "read_at: value {i} of {}", src.len);
        let mut out = [0f64; 1];
        // SAFETY: value `i` lies inside `src` (checked above); the stream is synchronized
        // before `out` is read.
        driver("copying from the device", unsafe {
            result::memcpy_dtoh_async(&mut out, src.ptr + 8 * i as u64, self.stream.cu_stream())
        })?;
        self.sync()?;
        Ok(out[0])
    }

    /// The device memory free now and in all, in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.bind()?;
        Ok(driver(
            "asking for the free memory",
            result::mem_get_info(),
        )?)
    }

    /// Waits for everything enqueued.
    pub fn sync(&self) -> Result<()> {
        Ok(driver("waiting for the stream", self.stream.synchronize())?)
    }
}

/// The process's one [`Gpu`] (device 0), created at the first call.
static GPU: Mutex<Option<Gpu>> = Mutex::new(None);

/// Runs `f` on the process's [`Gpu`], creating it at the first call; an error creating it
/// is returned (and tried again at the next call).
pub fn with_gpu<T>(f: impl FnOnce(&Gpu) -> Result<T>) -> Result<T> {
    let mut slot = GPU.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_none() {
        *slot = Some(Gpu::new(0)?);
    }
    let gpu = slot.as_ref().expect("set above");
    gpu.bind()?;
    f(gpu)
}

/// `n` as a 32-bit size, if `n^2` fits too.
pub fn side(n: usize) -> Result<i32> {
    match n.checked_mul(n) {
        Some(sq) if sq <= i32::MAX as usize => Ok(n as i32),
        _ => Err(crate::Error::TooLarge { n }),
    }
}
