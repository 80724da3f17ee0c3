//! The device as the engine uses it: one context and one stream, cuDNN and cuBLAS handles
//! bound to that stream, the engine's kernels, and device memory handed out as raw pointers
//! that stay put for the engine's life (a captured CUDA graph replays on the same addresses).
//!
//! Everything runs on the one stream in order; nothing here synchronizes except
//! [`Gpu::sync`].

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cublas::sys as blas;
use cudarc::cudnn::sys as dnn;
use cudarc::driver::{CudaContext, CudaModule, CudaStream, result, sys};
use ntk_numerics::backend::Fp32Precision;

use crate::error::{self, Result, driver};
use crate::kernels;

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

/// A kernel argument: a device pointer, an `int`, a `long long`, a `float` or a `double`.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    Ptr(u64),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
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
    pub cudnn: dnn::cudnnHandle_t,
    pub cublas: blas::cublasHandle_t,
    _module: Arc<CudaModule>,
    functions: HashMap<&'static str, sys::CUfunction>,
    device: Vec<u64>,
    pinned: Vec<*mut c_void>,
    /// The device's name and compute capability, for the log.
    pub name: String,
}

impl Gpu {
    /// Device `ordinal` with a stream of its own, cuDNN and cuBLAS on that stream, and the
    /// kernels compiled for its compute capability. Probes the libraries first
    /// ([`crate::libraries::probe`]).
    pub fn new(ordinal: usize) -> Result<Self> {
        crate::libraries::probe()?;
        let ntk_cuda::Opened {
            ctx,
            stream,
            capability: (major, minor),
            name,
        } = ntk_cuda::open(ordinal)?;
        let arch: &'static str = Box::leak(format!("compute_{major}{minor}").into_boxed_str());
        let ptx = kernels::compile(Some(arch))?;
        let module = driver("loading the kernels", ctx.load_module(ptx))?;
        let mut functions = HashMap::new();
        for name in kernels::NAMES {
            let f = driver("finding a kernel", module.load_function(name))?;
            functions.insert(name, f.cu_function());
        }
        let mut cudnn = std::ptr::null_mut();
        error::cudnn("creating the handle", unsafe {
            dnn::cudnnCreate(&mut cudnn)
        })?;
        error::cudnn("setting the stream", unsafe {
            dnn::cudnnSetStream(cudnn, stream.cu_stream() as dnn::cudaStream_t)
        })?;
        let mut cublas = std::ptr::null_mut();
        error::cublas("creating the handle", unsafe {
            blas::cublasCreate_v2(&mut cublas)
        })?;
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
        error::cublas("setting the math mode", unsafe {
            blas::cublasSetMathMode(self.cublas, mode)
        })?;
        Ok(())
    }

    /// `bytes` of device memory, zeroed.
    pub fn alloc_bytes(&mut self, bytes: usize) -> Result<u64> {
        driver("binding the context", self.ctx.bind_to_thread())?;
        let p = driver("allocating device memory", unsafe {
            result::malloc_sync(bytes.max(4))
        })?;
        self.device.push(p);
        driver("zeroing device memory", unsafe {
            result::memset_d8_async(p, 0, bytes.max(4), self.stream.cu_stream())
        })?;
        Ok(p)
    }

    /// `len` f32 values on the device, zeroed.
    pub fn alloc(&mut self, len: usize) -> Result<u64> {
        self.alloc_bytes(4 * len)
    }

    /// `bytes` of pinned host memory (page-locked: the graph's copies read it at replay).
    pub fn pinned(&mut self, bytes: usize) -> Result<*mut c_void> {
        driver("binding the context", self.ctx.bind_to_thread())?;
        let p = driver("allocating pinned memory", unsafe {
            result::malloc_host(bytes.max(8), 0)
        })?;
        self.pinned.push(p);
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

    /// Copies `src` (pinned or pageable host memory) to `dst` on the stream.
    ///
    /// # Safety
    /// `src` must stay valid until the copy has run (for pinned memory inside a captured
    /// graph: for the graph's life).
    pub unsafe fn upload<T>(&self, dst: u64, src: &[T]) -> Result<()> {
        Ok(driver("copying to the device", unsafe {
            result::memcpy_htod_async(dst, src, self.stream.cu_stream())
        })?)
    }

    /// Copies `dst.len()` values from `src` into `dst` on the stream.
    ///
    /// # Safety
    /// As [`Self::upload`], for `dst`.
    pub unsafe fn download<T>(&self, dst: &mut [T], src: u64) -> Result<()> {
        Ok(driver("copying from the device", unsafe {
            result::memcpy_dtoh_async(dst, src, self.stream.cu_stream())
        })?)
    }

    /// Waits for everything enqueued.
    pub fn sync(&self) -> Result<()> {
        Ok(driver("waiting for the stream", self.stream.synchronize())?)
    }

    /// `len` f32 values of the device at `src`, after the work enqueued so far.
    pub fn read(&self, src: u64, len: usize) -> Result<Vec<f32>> {
        let mut out = vec![0f32; len];
        unsafe { self.download(&mut out, src)? };
        self.sync()?;
        Ok(out)
    }

    /// Writes `values` to `dst` and waits.
    pub fn write(&self, dst: u64, values: &[f32]) -> Result<()> {
        unsafe { self.upload(dst, values)? };
        self.sync()
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        let _ = self.stream.synchronize();
        unsafe {
            for &p in &self.device {
                let _ = result::free_sync(p);
            }
            for &p in &self.pinned {
                let _ = result::free_host(p);
            }
            let _ = blas::cublasDestroy_v2(self.cublas);
            let _ = dnn::cudnnDestroy(self.cudnn);
        }
    }
}
