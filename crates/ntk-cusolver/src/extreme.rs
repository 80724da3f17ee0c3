//! `lambda_min`, `lambda_max` and `kappa` of a kernel on the GPU: `ntk_kernel::extreme::solve`
//! (the algorithm the Burn route runs too) on an [`Operand`] whose arithmetic is cuBLAS and
//! cuSOLVER in f64.
//!
//! Lanczos with full reorthogonalization, as `ntk_kernel::extreme::lanczos`: from the same
//! start vector, step `j` forms `w = A v_j` (`gemv` with `K`, or `potrs` with the factor of
//! `K + s I`), `alpha_j = v_j^T w`, then twice `w -= V (V^T w)` over the basis so far (two
//! `gemv`), `beta_j = ||w||`, `v_{j+1} = w / beta_j`. `alpha` and `beta` come back to the host
//! at each step (a synchronization each: 16-32 steps against the factorization's `n^3 / 3`),
//! where `ntk_kernel::extreme::lanczos::ritz_of` turns them into Ritz values every
//! [`CHECK_EVERY`] steps, as on every other device.

use cudarc::cublas::sys as blas;
use cudarc::cusolver::sys as lapack;

use ntk_kernel::extreme::cholesky::Breakdown;
use ntk_kernel::extreme::lanczos::{self, CHECK_EVERY, Ritz};
use ntk_kernel::extreme::{Extreme, Operand, Options};
use ntk_numerics::kernel::Kernel;

use crate::device::{Buffer, Gpu, TRIANGLE, with_gpu};
use crate::error::{Result, cublas, cusolver};
use crate::trace::Phases;

/// The extreme eigenvalues of `kernel` (symmetric; sent to the device in f64) on the
/// process's GPU; `kernel_epsilon` is the unit roundoff of the precision the kernel was
/// built in (it sets `tau`), as in `ntk_kernel::extreme::extreme`.
pub fn extreme(kernel: &Kernel, kernel_epsilon: f64, options: &Options) -> Result<Extreme> {
    with_gpu(|gpu| {
        let mut op = DeviceKernel::new(gpu, kernel)?;
        let e = ntk_kernel::extreme::solve(&mut op, kernel_epsilon, options);
        match op.failure.take() {
            Some(device) => Err(device),
            None => Ok(e?),
        }
    })
}

/// A kernel on the GPU with room for a factor of `K + s I` and a Lanczos basis.
pub struct DeviceKernel<'g> {
    gpu: &'g Gpu,
    n: usize,
    k: Buffer,
    max_abs: f64,
    /// The factor of `K + s I` (in [`TRIANGLE`]) once [`Operand::factor`] has run.
    factor: Option<Buffer>,
    /// The first device error: the [`Operand`] methods return `ntk_kernel`'s error type, so
    /// a cuBLAS or cuSOLVER failure is kept here (and [`extreme`] returns it) while the
    /// algorithm sees a Lanczos error that ends it.
    pub failure: Option<crate::Error>,
    /// The phases' clock ([`crate::trace`]).
    phases: Phases,
}

impl<'g> DeviceKernel<'g> {
    /// `kernel` uploaded to `gpu`.
    pub fn new(gpu: &'g Gpu, kernel: &Kernel) -> Result<Self> {
        let n = kernel.size;
        if n == 0 || n.checked_mul(n) != Some(kernel.data.len()) {
            return Err(crate::Error::Shape {
                n,
                len: kernel.data.len(),
            });
        }
        let phases = Phases::new();
        let max_abs = crate::staging::max_abs(&kernel.data);
        phases.mark_host("the largest magnitude (host)");
        let k = gpu.upload(&kernel.data)?;
        phases.mark(gpu, "the kernel to the device");
        Ok(Self::on_device(gpu, n, k, max_abs))
    }

    /// A kernel already on the device: `k` holds the `n x n` values (symmetric, so either
    /// order), `max_abs` their largest magnitude. Every call takes 64-bit sizes, so `n` is
    /// bounded by the device's memory alone (two copies of `K`: 57.6 GB at `n = 60,000`).
    pub fn on_device(gpu: &'g Gpu, n: usize, k: Buffer, max_abs: f64) -> Self {
        assert!(
            k.len >= n * n,
            "on_device: {} values for a kernel of side {n}",
            k.len
        );
        Self {
            gpu,
            n,
            k,
            max_abs,
            factor: None,
            failure: None,
            phases: Phases::new(),
        }
    }

    /// Keeps a device error for [`extreme`] and hands the algorithm one of its own.
    ///
    /// The algorithm's own errors (a Lanczos run on an overflowing inverse, which
    /// `ntk_kernel::extreme::solve` answers with the next shift) pass through as they are.
    fn fail(&mut self, e: crate::Error) -> ntk_kernel::Error {
        if let crate::Error::Kernel(k) = e {
            return k;
        }
        let text = e.to_string();
        self.failure.get_or_insert(e);
        ntk_kernel::Error::Lanczos(format!("on the GPU: {text}"))
    }

    /// Factors `K + shift I` into a fresh buffer: `Ok(Err(row))` at a pivot that is not
    /// positive.
    fn factor_device(&self, shift: f64) -> Result<std::result::Result<Buffer, Breakdown>> {
        let (gpu, n) = (self.gpu, self.n);
        let n64 = n as i64;
        let a = gpu.alloc_copy(&self.k)?;
        if shift != 0.0 {
            // The diagonal is every (n + 1)-th value: a += shift * ones.
            let ones = gpu.upload(&vec![1.0; n])?;
            // SAFETY: `gpu.cublas()` is the live handle of `gpu.blas` on `gpu.stream`,
            // where every buffer here was allocated, in cuBLAS's default host pointer mode
            // (cudarc's `CudaBlas::new` leaves it), so `&shift` is read during the call.
            // `ones` holds `n` values; `a` is a copy of `self.k` (`k.len >= n^2`, asserted
            // in `on_device`), and the `n` values at stride `n + 1` end at `(n - 1)(n + 1)
            // = n^2 - 1`.
            cublas("adding the shift", unsafe {
                blas::cublasDaxpy_v2_64(gpu.cublas(), n64, &shift, ones.at(0), 1, a.at(0), n64 + 1)
            })?;
        }
        let params = Params::new()?;
        let fill = TRIANGLE;
        let f64_type = lapack::cudaDataType::CUDA_R_64F;
        let (mut device_bytes, mut host_bytes) = (0usize, 0usize);
        // SAFETY: `gpu.solver` is the live cuSOLVER handle on `gpu.stream`; `params.0` was
        // created by `Params::new` and lives until this function returns; `a` holds at
        // least `n^2` values, read with leading dimension `n`; the two sizes are written to
        // locals.
        cusolver("potrf workspace", unsafe {
            lapack::cusolverDnXpotrf_bufferSize(
                gpu.solver.cu(),
                params.0,
                fill,
                n64,
                f64_type,
                a.at(0) as *const std::ffi::c_void,
                n64,
                f64_type,
                &mut device_bytes,
                &mut host_bytes,
            )
        })?;
        let work = gpu.alloc(device_bytes.div_ceil(8).max(1))?;
        let mut host_work = vec![0u8; host_bytes.max(1)];
        let info = gpu.alloc(1)?;
        // SAFETY: live handle and options as for the query; `a` as there (factored in
        // place); `work` holds `ceil(device_bytes / 8)` f64, at least the `device_bytes`
        // the query asked for, and `host_work` `host_bytes.max(1)` bytes on the host, alive
        // until after `read_info` below has synchronized the stream; `info` holds one
        // 8-byte value, whose first 4 bytes take the `int`.
        cusolver("potrf", unsafe {
            lapack::cusolverDnXpotrf(
                gpu.solver.cu(),
                params.0,
                fill,
                n64,
                f64_type,
                a.at(0) as *mut std::ffi::c_void,
                n64,
                f64_type,
                work.at(0) as *mut std::ffi::c_void,
                device_bytes,
                host_work.as_mut_ptr() as *mut std::ffi::c_void,
                host_bytes,
                info.at(0) as *mut i32,
            )
        })?;
        let info = gpu.read_info(&info)?;
        self.phases.mark(gpu, &format!("potrf of K + {shift:e} I"));
        match crate::error::info("potrf", info)? {
            0 => Ok(Ok(a)),
            // The leading minor of order `info` is not positive definite.
            i => Ok(Err(Breakdown {
                row: i as usize - 1,
            })),
        }
    }

    /// Lanczos on `K` (`factor = None`) or on the inverse of `K + s I` through its factor.
    fn lanczos_device(
        &self,
        factor: Option<&Buffer>,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> Result<Ritz> {
        let (gpu, n) = (self.gpu, self.n);
        let n64 = n as i64;
        let h = gpu.cublas();
        let params = Params::new()?;
        let max_steps = max_steps.clamp(1, n);
        // The basis, column-major `n x (max_steps + 1)`; its first column the start vector.
        let basis = gpu.alloc(n * (max_steps + 1))?;
        let start = gpu.upload(&lanczos::start_values(n, seed))?;
        gpu.copy(&basis, &start, n)?;
        let w = gpu.alloc(n)?;
        let c = gpu.alloc(max_steps + 1)?;
        let info = gpu.alloc(1)?;
        let (one, zero, minus) = (1.0f64, 0.0f64, -1.0f64);
        let (mut alpha, mut beta) = (Vec::new(), Vec::new());
        for step in 1..=max_steps {
            let v = basis.at((step - 1) * n);
            if let Some(f) = factor {
                // SAFETY: `h` is `gpu`'s live cuBLAS handle, on the stream of every buffer
                // here. `v` is column `step - 1` of `basis` (`n (max_steps + 1)` values,
                // `step <= max_steps`), so it and `w` hold the `n` values copied.
                cublas("copying v", unsafe {
                    blas::cublasDcopy_v2_64(h, n64, v, 1, w.at(0), 1)
                })?;
                let f64_type = lapack::cudaDataType::CUDA_R_64F;
                // SAFETY: `gpu.solver` is the live handle on the same stream and `params.0`
                // lives until this function returns; `f` is the factor `factor_device`
                // wrote (`n^2` values, leading dimension `n`); `w` holds the one right-hand
                // side of `n` values (leading dimension `n`), and `info` one 8-byte value
                // for the `int`.
                cusolver("potrs", unsafe {
                    lapack::cusolverDnXpotrs(
                        gpu.solver.cu(),
                        params.0,
                        TRIANGLE,
                        n64,
                        1,
                        f64_type,
                        f.at(0) as *const std::ffi::c_void,
                        n64,
                        f64_type,
                        w.at(0) as *mut std::ffi::c_void,
                        n64,
                        info.at(0) as *mut i32,
                    )
                })?;
            } else {
                // SAFETY: live handle on the buffers' stream, default host pointer mode
                // (`&one`, `&zero` read during the call); `self.k` holds at least `n^2`
                // values (asserted in `on_device`), read `n x n` with leading dimension
                // `n`; `v` (a column of `basis`) and `w` hold `n`.
                cublas("K v", unsafe {
                    blas::cublasDgemv_v2_64(
                        h,
                        blas::cublasOperation_t::CUBLAS_OP_N,
                        n64,
                        n64,
                        &one,
                        self.k.at(0),
                        n64,
                        v,
                        1,
                        &zero,
                        w.at(0),
                        1,
                    )
                })?;
            }
            let mut a = 0.0;
            // SAFETY: live handle; `v` and `w` hold `n` values; in the default host pointer
            // mode cuBLAS writes the result to `a`, a live local, before the call returns.
            cublas("alpha", unsafe {
                blas::cublasDdot_v2_64(h, n64, v, 1, w.at(0), 1, &mut a)
            })?;
            alpha.push(a);
            let cols = step as i64;
            for _ in 0..2 {
                // SAFETY: live handle, host pointer mode (`&one`, `&zero`); `basis` is read
                // `n x cols` with leading dimension `n`, `cols = step <= max_steps`, inside
                // its `n (max_steps + 1)` values; `w` holds `n`, and `c` holds `max_steps +
                // 1 >= cols`.
                cublas("V^T w", unsafe {
                    blas::cublasDgemv_v2_64(
                        h,
                        blas::cublasOperation_t::CUBLAS_OP_T,
                        n64,
                        cols,
                        &one,
                        basis.at(0),
                        n64,
                        w.at(0),
                        1,
                        &zero,
                        c.at(0),
                        1,
                    )
                })?;
                // SAFETY: as for `V^T w`: `basis` read `n x cols` inside its length, `c` of
                // at least `cols` values, `w` of `n`; `&minus`, `&one` read during the
                // call.
                cublas("w - V c", unsafe {
                    blas::cublasDgemv_v2_64(
                        h,
                        blas::cublasOperation_t::CUBLAS_OP_N,
                        n64,
                        cols,
                        &minus,
                        basis.at(0),
                        n64,
                        c.at(0),
                        1,
                        &one,
                        w.at(0),
                        1,
                    )
                })?;
            }
            let mut b = 0.0;
            // SAFETY: live handle; `w` holds `n` values; in the default host pointer mode
            // cuBLAS writes the norm to `b`, a live local, before the call returns.
            cublas("beta", unsafe {
                blas::cublasDnrm2_v2_64(h, n64, w.at(0), 1, &mut b)
            })?;
            beta.push(b);
            if step % CHECK_EVERY == 0 || step == max_steps {
                let ritz = lanczos::ritz_of(&alpha, &beta, n, f64::EPSILON, tolerance)?;
                if ritz.converged || step == max_steps {
                    let on = if factor.is_some() { "the inverse" } else { "K" };
                    self.phases
                        .mark(gpu, &format!("Lanczos on {on}, {step} steps"));
                    return Ok(ritz);
                }
            }
            // v_{j+1} = w / beta (a vanishing beta gives non-finite values, which the next
            // check cuts off, as on every device).
            let next = basis.at(step * n);
            let scale = 1.0 / b;
            // SAFETY: live handle; `w` holds `n` values and `next`, column `step <
            // max_steps` of `basis` (the last step returned above), holds `n`.
            cublas("copying w", unsafe {
                blas::cublasDcopy_v2_64(h, n64, w.at(0), 1, next, 1)
            })?;
            // SAFETY: live handle, host pointer mode (`&scale` read during the call);
            // `next` holds `n` values, as just above.
            cublas("w / beta", unsafe {
                blas::cublasDscal_v2_64(h, n64, &scale, next, 1)
            })?;
        }
        unreachable!("the loop returns at its last step")
    }
}

/// cuSOLVER's options of its 64-bit calls (`Xpotrf`, `Xpotrs`), the defaults; destroyed on
/// drop.
struct Params(lapack::cusolverDnParams_t);

impl Params {
    fn new() -> Result<Self> {
        let mut p = std::ptr::null_mut();
        // SAFETY: `cusolverDnCreateParams` writes one options object through `&mut p`, a
        // live local; it needs no handle. The `Params` made next owns it and destroys it
        // once, on drop.
        cusolver("creating the options", unsafe {
            lapack::cusolverDnCreateParams(&mut p)
        })?;
        Ok(Self(p))
    }
}

impl Drop for Params {
    fn drop(&mut self) {
        // SAFETY: created by `cusolverDnCreateParams`, destroyed once.
        let _ = unsafe { lapack::cusolverDnDestroyParams(self.0) };
    }
}

impl Operand for DeviceKernel<'_> {
    fn size(&self) -> usize {
        self.n
    }

    fn epsilon(&self) -> f64 {
        f64::EPSILON
    }

    fn max_abs(&mut self) -> ntk_kernel::Result<f64> {
        Ok(self.max_abs)
    }

    fn largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> ntk_kernel::Result<Ritz> {
        self.lanczos_device(None, max_steps, seed, tolerance)
            .map_err(|e| self.fail(e))
    }

    fn factor(&mut self, shift: f64) -> ntk_kernel::Result<std::result::Result<(), Breakdown>> {
        self.factor = None;
        match self.factor_device(shift) {
            Ok(Ok(f)) => {
                self.factor = Some(f);
                Ok(Ok(()))
            }
            Ok(Err(b)) => Ok(Err(b)),
            Err(e) => Err(self.fail(e)),
        }
    }

    fn inverse_largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> ntk_kernel::Result<Ritz> {
        let result = match &self.factor {
            Some(factor) => self.lanczos_device(Some(factor), max_steps, seed, tolerance),
            None => {
                return Err(ntk_kernel::Error::Lanczos(
                    "Lanczos on the inverse before a factorization".into(),
                ));
            }
        };
        result.map_err(|e| self.fail(e))
    }
}
