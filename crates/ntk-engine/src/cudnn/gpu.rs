//! The device as the engine uses it: one context and one stream, cuDNN and cuBLAS handles
//! bound to that stream, the engine's kernels, and device memory handed out as typed handles
//! ([`crate::cudnn::dev`]) that stay put for the engine's life (a captured CUDA graph
//! replays on the same addresses).
//!
//! Everything runs on the one stream in order; nothing here synchronizes except
//! [`Gpu::sync`].

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cublas::sys as blas;
use cudarc::cudnn::sys as dnn;
use cudarc::driver::{CudaContext, CudaModule, CudaStream, result, sys};
use ntk_model::activation::Normalized;
use ntk_numerics::backend::Fp32Precision;

use crate::cudnn::dev::{DevBuf, KernelPtr};
use crate::cudnn::error::{self, Error, Result, driver};
use crate::cudnn::kernels;

/// Threads per block of every elementwise kernel (the sums' shared arrays hold 256).
pub const THREADS: u32 = 256;
/// At most this many blocks per launch (the loops stride over the rest); the partial-sum
/// buffer holds two values per block.
pub const MAX_BLOCKS: u32 = 2048;

/// At most this many blocks for a kernel that writes per-block sums (two per SM of an
/// H100: enough to stream a map at full bandwidth, few for `finish` to add).
pub const SUM_BLOCKS: u32 = 264;

/// Blocks for `n` elements.
pub fn blocks(n: usize) -> u32 {
    (n.div_ceil(THREADS as usize) as u32).clamp(1, MAX_BLOCKS)
}

/// A kernel argument: a device pointer ([`ptr`]; 0 for a null one), an `int`, a `long long`,
/// a `float` or a `double`.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    Ptr(u64),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
}

/// A device handle (or an optional one: null when `None`) as a kernel argument.
pub fn ptr(p: impl KernelPtr) -> Arg {
    Arg::Ptr(p.addr())
}

/// A null pointer as a kernel argument (the kernels read it as "not given").
pub fn null() -> Arg {
    Arg::Ptr(0)
}

impl Arg {
    fn as_ptr(&mut self) -> *mut c_void {
        match self {
            Self::Ptr(v) => v as *mut u64 as *mut c_void,
            Self::I32(v) => v as *mut i32 as *mut c_void,
            Self::I64(v) => v as *mut i64 as *mut c_void,
            Self::F32(v) => v as *mut f32 as *mut c_void,
            Self::F64(v) => v as *mut f64 as *mut c_void,
        }
    }
}

/// The device, its stream, handles and kernels, and every allocation (freed on drop).
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    /// The handles are crate-private so that only `new` sets them and only `Drop` destroys
    /// them: every `unsafe` call that takes one relies on that.
    pub(crate) cudnn: dnn::cudnnHandle_t,
    pub(crate) cublas: blas::cublasHandle_t,
    _module: Arc<CudaModule>,
    functions: HashMap<&'static str, sys::CUfunction>,
    device: Vec<u64>,
    pinned: Vec<*mut c_void>,
    /// The device's name and compute capability, for the log.
    pub name: String,
}

impl Gpu {
    /// Device `ordinal` with a stream of its own, cuDNN and cuBLAS on that stream, and the
    /// kernels compiled for its compute capability with the activation `act` (the norm-free
    /// blocks'; `None` for ReLU networks). Probes the libraries first
    /// ([`crate::cudnn::libraries::probe`]).
    pub fn new(ordinal: usize, act: Option<Normalized>) -> Result<Self> {
        crate::cudnn::libraries::probe()?;
        let ntk_cuda::Opened {
            ctx,
            stream,
            capability: (major, minor),
            name,
            driver: driver_cuda,
        } = ntk_cuda::open(ordinal)?;
        let arch: &'static str = Box::leak(format!("compute_{major}{minor}").into_boxed_str());
        let ptx = kernels::compile(Some(arch), act)?;
        // PTX loads on a driver of its NVRTC's CUDA version or newer: said here, by name,
        // rather than as the load's CUDA_ERROR_UNSUPPORTED_PTX_VERSION.
        ntk_cuda::version::check_ptx(kernels::nvrtc_version()?, driver_cuda)?;
        let module = driver("loading the kernels", ctx.load_module(ptx))?;
        let mut functions = HashMap::new();
        for name in kernels::NAMES {
            let f = driver("finding a kernel", module.load_function(name))?;
            functions.insert(name, f.cu_function());
        }
        let mut cudnn = std::ptr::null_mut();
        // SAFETY: `cudnnCreate` writes one handle through `&mut cudnn`, a live local.
        // libcudnn loads (`libraries::probe` above), and `ntk_cuda::open` made the device's
        // primary context current on this thread (`CudaContext::new` binds it), as handle
        // creation requires. The handle goes into the `Gpu` below, whose `Drop` destroys it
        // once (a failure before that leaks it, harmlessly).
        error::cudnn("creating the handle", unsafe {
            dnn::cudnnCreate(&mut cudnn)
        })?;
        // SAFETY: `cudnn` is the handle created just above; `stream` is a live stream of
        // this context, kept alive beside the handle in `Gpu::stream` until after `Drop`
        // has destroyed the handle.
        error::cudnn("setting the stream", unsafe {
            dnn::cudnnSetStream(cudnn, stream.cu_stream() as dnn::cudaStream_t)
        })?;
        let mut cublas = std::ptr::null_mut();
        // SAFETY: `cublasCreate_v2` writes one handle through `&mut cublas`, a live local;
        // libcublas loads and the context is current (as for cuDNN above). `Drop for Gpu`
        // destroys it once.
        error::cublas("creating the handle", unsafe {
            blas::cublasCreate_v2(&mut cublas)
        })?;
        // SAFETY: `cublas` is the handle created just above; `stream` outlives it as for
        // cuDNN above.
        error::cublas("setting the stream", unsafe {
            blas::cublasSetStream_v2(cublas, stream.cu_stream() as blas::cudaStream_t)
        })?;
        let mut gpu = Self {
            ctx,
            stream,
            cudnn,
            cublas,
            _module: module,
            functions,
            device: Vec::new(),
            pinned: Vec::new(),
            name,
        };
        // cuBLAS allocates its workspace at its first call unless given one, and an
        // allocation cannot be captured into a graph.
        const BLAS_WORKSPACE: usize = 32 << 20;
        let ws = gpu.alloc_bytes(BLAS_WORKSPACE)?;
        // SAFETY: `ws` is a device allocation of exactly `BLAS_WORKSPACE` bytes made just
        // above on this context, the size passed; it is owned by `gpu` and freed only in
        // `Drop`, after the handle that uses it is destroyed there.
        error::cublas("setting the workspace", unsafe {
            blas::cublasSetWorkspace_v2(gpu.cublas, ws as *mut c_void, BLAS_WORKSPACE)
        })?;
        Ok(gpu)
    }

    /// cuBLAS's math for `fp32`: its default math (f32 products, no TF32) for `ieee`, TF32
    /// tensor-op math for `tf32` (as PyTorch's `torch.backends.cuda.matmul.fp32_precision`).
    pub fn set_fp32(&self, fp32: Fp32Precision) -> Result<()> {
        let mode = match fp32 {
            Fp32Precision::Ieee => blas::cublasMath_t::CUBLAS_DEFAULT_MATH,
            Fp32Precision::Tf32 => blas::cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH,
        };
        // SAFETY: `self.cublas` is the live handle `new` created (crate-private, destroyed
        // only in `Drop`); setting its math mode stores an enum in it and touches no
        // memory.
        error::cublas("setting the math mode", unsafe {
            blas::cublasSetMathMode(self.cublas, mode)
        })?;
        Ok(())
    }

    /// `len` values of `T` in device memory, zeroed.
    pub fn alloc<T>(&mut self, len: usize) -> Result<DevBuf<T>> {
        let p = self.alloc_bytes(len * size_of::<T>())?;
        Ok(DevBuf::from_raw(p, len))
    }

    /// `bytes` of device memory, zeroed.
    fn alloc_bytes(&mut self, bytes: usize) -> Result<u64> {
        driver("binding the context", self.ctx.bind_to_thread())?;
        // SAFETY: the context is bound to this thread just above. The allocation is
        // uninitialized device memory that no host reference ever covers; it is zeroed on
        // the stream below before any use, recorded in `self.device`, and freed exactly
        // once, in `Drop`.
        let p = driver("allocating device memory", unsafe {
            result::malloc_sync(bytes.max(4))
        })?;
        self.device.push(p);
        // SAFETY: `p` was just allocated with `bytes.max(4)` bytes, the count set here, on
        // this context; the memset is enqueued on this `Gpu`'s stream, which every later
        // use of `p` is ordered after.
        driver("zeroing device memory", unsafe {
            result::memset_d8_async(p, 0, bytes.max(4), self.stream.cu_stream())
        })?;
        Ok(p)
    }

    /// `bytes` of pinned host memory (page-locked: the graph's copies read it at replay),
    /// zeroed, aligned to a page, owned by this `Gpu` and freed by its `Drop`.
    pub fn pinned(&mut self, bytes: usize) -> Result<*mut c_void> {
        driver("binding the context", self.ctx.bind_to_thread())?;
        // SAFETY: the context is bound to this thread just above; the page-locked host
        // allocation (uninitialized, zeroed below) is recorded in `self.pinned` and freed
        // exactly once, in `Drop`.
        let p = driver("allocating pinned memory", unsafe {
            result::malloc_host(bytes.max(8), 0)
        })?;
        self.pinned.push(p);
        // Zeroed, so that the engine's slices over it (`std::slice::from_raw_parts`) always
        // see initialized values, even before the first copy writes them.
        // SAFETY: `p` is the start of the `bytes.max(8)`-byte host allocation just returned
        // by `cuMemHostAlloc` (non-null on success), not yet shared with the device or any
        // reference.
        unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, bytes.max(8)) };
        Ok(p)
    }

    /// Launches kernel `name` on `n` elements' worth of blocks.
    pub fn launch(&self, name: &'static str, grid: u32, args: &mut [Arg]) -> Result<()> {
        self.launch_with(name, grid, THREADS, args)
    }

    pub fn launch_with(
        &self,
        name: &'static str,
        grid: u32,
        threads: u32,
        args: &mut [Arg],
    ) -> Result<()> {
        let f = self.functions[name];
        let mut ptrs: Vec<*mut c_void> = args.iter_mut().map(Arg::as_ptr).collect();
        // SAFETY: `f` is a function of `_module`, which this `Gpu` keeps loaded for its
        // whole life, and the launch goes on this `Gpu`'s stream. `ptrs` holds one pointer
        // into `args` per parameter; both outlive the call, and `cuLaunchKernel` copies the
        // parameter values before it returns (into the graph's node when capturing). Every
        // pointer argument is null or an address inside an allocation of this `Gpu`
        // (`ptr` takes only `DevBuf`/`DevPtr` handles, which only `alloc` makes, and
        // offsets into them are bounds-checked). NOT checked here: that `args` matches the
        // kernel's parameter list in kernels.cu in number and types, and that each buffer
        // holds the elements the kernel touches for `n`; this public safe fn relies on its
        // caller, the engine, which passes the `plan::Maps` buffers sized for `cap >= n`.
        Ok(driver(name, unsafe {
            result::launch_kernel(
                f,
                (grid, 1, 1),
                (threads, 1, 1),
                0,
                self.stream.cu_stream(),
                &mut ptrs,
            )
        })?)
    }

    /// Copies `src` (pinned or pageable host memory) to the start of `dst` on the stream;
    /// [`Error::Copy`] when `src` holds more values than `dst`.
    ///
    /// # Safety
    /// `dst` must be a buffer of this `Gpu` ([`Self::alloc`], or a slot of one), and `src`
    /// must stay valid until the copy has run (for pinned memory inside a captured graph:
    /// for the graph's life).
    pub unsafe fn upload<T>(&self, dst: DevBuf<T>, src: &[T]) -> Result<()> {
        check_copy("to the device", src.len(), dst.len())?;
        // SAFETY: `dst` is a buffer of this `Gpu` (the caller's `# Safety`) with room for
        // `src.len()` values, checked just above, so for the `size_of_val(src)` bytes
        // `memcpy_htod_async` copies; `src` outlives the copy (the caller's `# Safety`). The
        // copy is enqueued on this `Gpu`'s stream, the one `dst` was zeroed on.
        Ok(driver("copying to the device", unsafe {
            result::memcpy_htod_async(dst.ptr().raw(), src, self.stream.cu_stream())
        })?)
    }

    /// Copies `dst.len()` values from the start of `src` into `dst` on the stream;
    /// [`Error::Copy`] when `dst` asks for more values than `src` holds.
    ///
    /// # Safety
    /// `src` must be a buffer of this `Gpu` ([`Self::alloc`], or a slot of one), and `dst`
    /// must stay valid, neither read nor written by the host, until the copy has run (for
    /// pinned memory inside a captured graph: for the graph's life; the engine reads it
    /// after [`Self::sync`]).
    pub unsafe fn download<T>(&self, dst: &mut [T], src: DevBuf<T>) -> Result<()> {
        check_copy("from the device", dst.len(), src.len())?;
        // SAFETY: `src` is a buffer of this `Gpu` (the caller's `# Safety`) holding at
        // least `dst.len()` values, checked just above, so the `size_of_val(dst)` bytes
        // `memcpy_dtoh_async` copies; `dst` stays valid and untouched until the copy has run
        // (the caller's `# Safety`). The copy is enqueued on this `Gpu`'s stream.
        Ok(driver("copying from the device", unsafe {
            result::memcpy_dtoh_async(dst, src.ptr().raw(), self.stream.cu_stream())
        })?)
    }

    /// Waits for everything enqueued.
    pub fn sync(&self) -> Result<()> {
        Ok(driver("waiting for the stream", self.stream.synchronize())?)
    }

    /// The first `len` values of `src` (a buffer of this `Gpu`), after the work enqueued
    /// so far.
    pub fn read(&self, src: DevBuf<f32>, len: usize) -> Result<Vec<f32>> {
        let mut out = vec![0f32; len];
        // SAFETY: `src` is a buffer of this `Gpu`: a `DevBuf` is made only by `alloc` (and
        // `slot`, inside one), and the engine holds only its own `Gpu`'s; `download` checks
        // that it holds `len` values. `out` is a fresh pageable buffer of `len` f32 (a copy
        // into pageable memory returns once done, and `sync` follows anyway).
        unsafe { self.download(&mut out, src)? };
        self.sync()?;
        Ok(out)
    }

    /// Writes `values` to the start of `dst` (a buffer of this `Gpu`) and waits.
    pub fn write(&self, dst: DevBuf<f32>, values: &[f32]) -> Result<()> {
        // SAFETY: `dst` is a buffer of this `Gpu` (as in `read`; `upload` checks its room),
        // and `values` is borrowed until the `sync` below, so it outlives the copy.
        unsafe { self.upload(dst, values)? };
        self.sync()
    }
}

/// `Ok` when a copy of `values` fits a buffer of `room` values.
fn check_copy(direction: &'static str, values: usize, room: usize) -> Result<()> {
    if values > room {
        return Err(Error::Copy {
            direction,
            values,
            room,
        });
    }
    Ok(())
}

impl Drop for Gpu {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        let _ = self.stream.synchronize();
        // SAFETY: the context is bound and the stream synchronized just above, so no
        // work that uses these handles or allocations is queued or running (a stream
        // that fails to synchronize is in a context with a sticky error, which runs
        // nothing more). Each handle was created once in `new` and each pointer was
        // allocated once by `malloc_sync` / `malloc_host` and recorded once: each is
        // destroyed or freed exactly once, and nothing uses them after `drop`.
        unsafe {
            // The handles first: cuBLAS's workspace is one of the allocations freed below.
            let _ = blas::cublasDestroy_v2(self.cublas);
            let _ = dnn::cudnnDestroy(self.cudnn);
            for &p in &self.device {
                let _ = result::free_sync(p);
            }
            for &p in &self.pinned {
                let _ = result::free_host(p);
            }
        }
    }
}
