//! OpenBLAS loaded at run time: `cblas_?gemm`, `cblas_?syrk`, `cblas_?axpy`, `cblas_dsymv`,
//! `cblas_dtrsv` and LAPACK's `dsyevd` and `dpotrf`, looked up in a shared library that
//! [`super::library`] chose (the current OpenBLAS that `scripts/setup.sh` fetches, PyPI's
//! `scipy-openblas32`, whose symbols carry the prefix `scipy_`; or the system's
//! `libopenblas.so.0`). Loading, not linking, is what lets the library be chosen for the CPU
//! it runs on, and the faer fallback be a run-time choice of the same binary.

use super::*;
use std::ffi::{CStr, c_char, c_int};
use std::path::{Path, PathBuf};

const COL_MAJOR: c_int = 102;
const NO_TRANS: c_int = 111;
const TRANS: c_int = 112;
const LOWER: c_int = 122;
const NON_UNIT: c_int = 131;

type Gemm<T> = unsafe extern "C" fn(
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    T,
    *const T,
    c_int,
    *const T,
    c_int,
    T,
    *mut T,
    c_int,
);
type Syrk<T> =
    unsafe extern "C" fn(c_int, c_int, c_int, c_int, c_int, T, *const T, c_int, T, *mut T, c_int);
type Axpy<T> = unsafe extern "C" fn(c_int, T, *const T, c_int, *mut T, c_int);
type Symv = unsafe extern "C" fn(
    c_int,
    c_int,
    c_int,
    f64,
    *const f64,
    c_int,
    *const f64,
    c_int,
    f64,
    *mut f64,
    c_int,
);
type Trsv =
    unsafe extern "C" fn(c_int, c_int, c_int, c_int, c_int, *const f64, c_int, *mut f64, c_int);
/// LAPACK's `dsyevd` (Fortran ABI: the two hidden lengths of the character arguments last).
type Syevd = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const c_int,
    *mut f64,
    *const c_int,
    *mut f64,
    *mut f64,
    *const c_int,
    *mut c_int,
    *const c_int,
    *mut c_int,
    usize,
    usize,
);
/// LAPACK's `dpotrf` (Fortran ABI: the hidden length of the character argument last).
type Potrf =
    unsafe extern "C" fn(*const c_char, *const c_int, *mut f64, *const c_int, *mut c_int, usize);

/// An OpenBLAS shared library, loaded, with the routines the host engines call.
pub struct OpenBlas {
    /// Where it was loaded from.
    pub path: PathBuf,
    /// `openblas_get_config()`: version and build options (`OpenBLAS 0.3.31 DYNAMIC_ARCH ...`).
    pub config: String,
    /// `openblas_get_corename()`: the kernels it runs on this CPU (`Haswell`, `SkylakeX`, ...).
    pub corename: String,
    sgemm: Gemm<f32>,
    dgemm: Gemm<f64>,
    ssyrk: Syrk<f32>,
    dsyrk: Syrk<f64>,
    saxpy: Axpy<f32>,
    daxpy: Axpy<f64>,
    dsymv: Symv,
    dtrsv: Trsv,
    dsyevd: Syevd,
    dpotrf: Potrf,
    get_threads: unsafe extern "C" fn() -> c_int,
    set_threads: unsafe extern "C" fn(c_int),
    /// Keeps the routines above mapped; never dropped (the library lives in a static).
    _library: libloading::Library,
}

/// The symbol prefixes OpenBLAS builds use: none (Debian's, Homebrew's, a source build) and
/// `scipy_` (PyPI's `scipy-openblas32`, which numpy and scipy ship).
const PREFIXES: [&str; 2] = ["", "scipy_"];

impl OpenBlas {
    /// Loads the library at `path` (a file name alone is looked up by the dynamic loader)
    /// and every routine the engines call; `Err` says what is missing.
    pub fn load(path: &Path) -> Result<Self, String> {
        // SAFETY: loading runs the library's initialisers; OpenBLAS's detect the CPU and
        // set up its thread pool, and touch nothing of this process's state.
        let library = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
        let prefix = PREFIXES
            .iter()
            .find(|p| {
                // SAFETY: only the symbol's presence is asked; its type is not used.
                unsafe {
                    library.get::<unsafe extern "C" fn()>(format!("{p}cblas_dgemm").as_bytes())
                }
                .is_ok()
            })
            .ok_or_else(|| "no cblas_dgemm: not a BLAS".to_string())?;
        // Copies a function pointer out of the library.
        macro_rules! get {
            ($name:literal) => {
                // SAFETY: the type each use annotates is the routine's C prototype in
                // OpenBLAS's cblas.h and lapack.h (LP64: `int` indices; an ILP64 build is
                // refused below), and the copied pointer is called only while `_library`,
                // stored beside it in `OpenBlas`, keeps the library mapped.
                *unsafe { library.get(format!("{prefix}{}", $name).as_bytes()) }
                    .map_err(|e| format!("{prefix}{}: {e}", $name))?
            };
        }
        let get_config: unsafe extern "C" fn() -> *const c_char = get!("openblas_get_config");
        let get_corename: unsafe extern "C" fn() -> *const c_char = get!("openblas_get_corename");
        // SAFETY: plain getters returning static NUL-terminated strings (or null).
        let (config, corename) = unsafe { (text(get_config()), text(get_corename())) };
        // The prototypes below take `int` indices: a 64-bit-integer build (INTERFACE64,
        // which OpenBLAS's config string names) would read them wrongly.
        if config.contains("USE64BITINT") {
            return Err(format!(
                "{config}: a 64-bit-integer (ILP64) build; the engines call the 32-bit (LP64) \
                 interface"
            ));
        }
        Ok(OpenBlas {
            path: path.to_path_buf(),
            config,
            corename,
            sgemm: get!("cblas_sgemm"),
            dgemm: get!("cblas_dgemm"),
            ssyrk: get!("cblas_ssyrk"),
            dsyrk: get!("cblas_dsyrk"),
            saxpy: get!("cblas_saxpy"),
            daxpy: get!("cblas_daxpy"),
            dsymv: get!("cblas_dsymv"),
            dtrsv: get!("cblas_dtrsv"),
            dsyevd: get!("dsyevd_"),
            dpotrf: get!("dpotrf_"),
            get_threads: get!("openblas_get_num_threads"),
            set_threads: get!("openblas_set_num_threads"),
            _library: library,
        })
    }

    /// `OpenBLAS 0.3.31 DYNAMIC_ARCH ... (Haswell)`: the build and the kernels it chose for
    /// this CPU, which decide the rounding.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.config, self.corename)
    }
}

impl Routines for OpenBlas {
    /// OpenBLAS's thread count.
    fn threads(&self) -> usize {
        // SAFETY: a plain getter of OpenBLAS's global setting.
        unsafe { (self.get_threads)() }.max(1) as usize
    }

    fn set_threads(&self, n: usize) {
        // SAFETY: a plain setter of OpenBLAS's global setting (called between BLAS calls).
        unsafe { (self.set_threads)(int(n.max(1))) }
    }

    fn eigen(
        &self,
        a: &[f64],
        n: usize,
        vectors: bool,
    ) -> crate::Result<(Vec<f64>, Option<Mat<f64>>)> {
        let mut a = a.to_vec();
        let mut w = vec![0.0f64; n];
        // The row-major lower triangle is the column-major upper one; with the vectors,
        // `a` is overwritten by them, column-major.
        let jobz = if vectors { b'V' } else { b'N' } as c_char;
        let uplo = b'U' as c_char;
        let nn = int(n);
        let mut info: c_int = 0;
        let (mut wq, mut iwq): (f64, c_int) = (0.0, 0);
        // Workspace query, then the solve (eigenvalues only: tridiagonal QR/root-free;
        // with vectors: divide and conquer).
        // SAFETY: a workspace query (lwork = liwork = -1) writes one value to each of `wq`
        // and `iwq` and reads nothing beyond the n x n `a` and the n-long `w`.
        unsafe {
            (self.dsyevd)(
                &jobz,
                &uplo,
                &nn,
                a.as_mut_ptr(),
                &nn,
                w.as_mut_ptr(),
                &mut wq,
                &-1,
                &mut iwq,
                &-1,
                &mut info,
                1,
                1,
            );
        }
        if info != 0 {
            return Err(crate::Error::Eigensolver {
                message: format!("dsyevd workspace query failed (info {info})"),
            });
        }
        let lwork = (wq as usize).max(2 * n + 1);
        let liwork = (iwq as usize).max(1);
        let mut work = vec![0.0f64; lwork];
        let mut iwork = vec![0 as c_int; liwork];
        // SAFETY: all buffers are sized as dsyevd documents (n*n, n, and the queried work).
        unsafe {
            (self.dsyevd)(
                &jobz,
                &uplo,
                &nn,
                a.as_mut_ptr(),
                &nn,
                w.as_mut_ptr(),
                work.as_mut_ptr(),
                &int(lwork),
                iwork.as_mut_ptr(),
                &int(liwork),
                &mut info,
                1,
                1,
            );
        }
        match info {
            0 => Ok((w, vectors.then(|| Mat::from_fn(n, n, |i, j| a[j * n + i])))),
            i if i < 0 => Err(crate::Error::Eigensolver {
                message: format!("dsyevd: argument {} invalid", -i),
            }),
            i => Err(crate::Error::Eigensolver {
                message: format!("eigensolver did not converge ({i} off-diagonal elements)"),
            }),
        }
    }

    /// `y = A x`, the lower triangle of the column-major `a` read.
    fn symv(&self, a: &[f64], n: usize, x: &[f64], y: &mut [f64]) {
        let nn = int(n);
        // SAFETY: `a` is n x n, `x` and `y` of length n (checked by the caller), y distinct.
        unsafe {
            (self.dsymv)(
                COL_MAJOR,
                LOWER,
                nn,
                1.0,
                a.as_ptr(),
                nn,
                x.as_ptr(),
                1,
                0.0,
                y.as_mut_ptr(),
                1,
            )
        }
    }

    /// `a = L L^T` in place (lower, column-major); `Err(row)` at the first non-positive pivot.
    fn potrf(&self, a: &mut [f64], n: usize) -> Result<(), usize> {
        let (nn, uplo) = (int(n), b'L' as c_char);
        let mut info: c_int = 0;
        // SAFETY: `a` is an n x n column-major buffer (checked by the caller).
        unsafe { (self.dpotrf)(&uplo, &nn, a.as_mut_ptr(), &nn, &mut info, 1) };
        match info {
            0 => Ok(()),
            // The leading minor of order `info` is not positive definite.
            i if i > 0 => Err(i as usize - 1),
            i => panic!("dpotrf: argument {} is invalid", -i),
        }
    }

    /// `x = L^{-1} x` (or `L^{-T} x`), `L` the lower triangle of the column-major `l`.
    fn trsv(&self, l: &[f64], n: usize, x: &mut [f64], transposed: bool) {
        let nn = int(n);
        let trans = if transposed { TRANS } else { NO_TRANS };
        // SAFETY: `l` is n x n, `x` of length n (checked by the caller).
        unsafe {
            (self.dtrsv)(
                COL_MAJOR,
                LOWER,
                trans,
                NON_UNIT,
                nn,
                l.as_ptr(),
                nn,
                x.as_mut_ptr(),
                1,
            )
        }
    }
}

/// A static C string as text (`?` for null).
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that outlives the call.
unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        return "?".to_string();
    }
    // SAFETY: the caller's promise.
    unsafe { CStr::from_ptr(p) }
        .to_string_lossy()
        .trim()
        .to_string()
}

fn int(v: usize) -> c_int {
    c_int::try_from(v).expect("matrix dimension exceeds the BLAS integer range")
}

/// A column-major operand as `(transpose flag, leading dimension)`: a faer view with unit
/// row stride is column-major, one with unit column stride is the transpose of one.
fn operand<T>(m: MatRef<'_, T>) -> (c_int, c_int, *const T) {
    let (rs, cs) = (m.row_stride(), m.col_stride());
    if rs == 1 && (cs >= m.nrows().max(1) as isize || m.ncols() <= 1) {
        (
            NO_TRANS,
            int((cs.max(1) as usize).max(m.nrows()).max(1)),
            m.as_ptr(),
        )
    } else if cs == 1 && (rs >= m.ncols().max(1) as isize || m.nrows() <= 1) {
        (
            TRANS,
            int((rs.max(1) as usize).max(m.ncols()).max(1)),
            m.as_ptr(),
        )
    } else {
        panic!("BLAS operand with strides ({rs}, {cs}) is neither column- nor row-major")
    }
}

fn output<T>(c: &mut MatMut<'_, T>) -> (c_int, *mut T) {
    // BLAS writes value (i, j) at `i + j ld`: unit row stride (or one row), and columns
    // apart by at least the rows (a reversed or overlapping view would be written outside).
    assert!(
        (c.row_stride() == 1 || c.nrows() <= 1)
            && (c.ncols() <= 1 || c.col_stride() >= c.nrows().max(1) as isize),
        "BLAS output must be column-major"
    );
    let ld = (c.col_stride().max(1) as usize).max(c.nrows()).max(1);
    (int(ld), c.as_ptr_mut())
}

macro_rules! level3 {
    ($t:ty, $gemm:ident, $syrk:ident, $axpy:ident) => {
        impl Level3<$t> for OpenBlas {
            fn axpy(&self, alpha: $t, x: &[$t], y: &mut [$t]) {
                assert_eq!(x.len(), y.len(), "axpy: lengths");
                if !x.is_empty() {
                    // SAFETY: `x` and `y` hold the `x.len()` values the call reads and writes
                    // (equal lengths asserted above), `y` a distinct mutable borrow; the
                    // routine's prototype is `get!`'s.
                    unsafe { (self.$axpy)(int(x.len()), alpha, x.as_ptr(), 1, y.as_mut_ptr(), 1) }
                }
            }
            fn gemm(
                &self,
                mut c: MatMut<'_, $t>,
                a: MatRef<'_, $t>,
                b: MatRef<'_, $t>,
                alpha: $t,
                beta: $t,
            ) {
                let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
                assert!(
                    a.nrows() == m && b.nrows() == k && b.ncols() == n,
                    "gemm: shapes"
                );
                if m == 0 || n == 0 {
                    return;
                }
                if k == 0 {
                    if beta == 0.0 {
                        c.fill(0.0);
                    } else {
                        for j in 0..n {
                            for i in 0..m {
                                c[(i, j)] *= beta;
                            }
                        }
                    }
                    return;
                }
                let (ta, lda, pa) = operand(a);
                let (tb, ldb, pb) = operand(b);
                let (ldc, pc) = output(&mut c);
                // SAFETY: `operand` and `output` return each view's pointer with a leading
                // dimension at which BLAS's column-major addressing reaches exactly the
                // view's values (they panic on any other layout); the shapes `m x k`, `k x
                // n`, `m x n` are asserted above; `c` is a mutable borrow distinct from `a`
                // and `b`. The routine's prototype is `get!`'s.
                unsafe {
                    (self.$gemm)(
                        COL_MAJOR,
                        ta,
                        tb,
                        int(m),
                        int(n),
                        int(k),
                        alpha,
                        pa,
                        lda,
                        pb,
                        ldb,
                        beta,
                        pc,
                        ldc,
                    )
                }
            }
            fn syrk_lower(&self, mut c: MatMut<'_, $t>, a: MatRef<'_, $t>, alpha: $t) {
                let (n, k) = (a.nrows(), a.ncols());
                assert!(c.nrows() == n && c.ncols() == n, "syrk: shapes");
                if k == 0 {
                    c.fill(0.0);
                    return;
                }
                let (ta, lda, pa) = operand(a);
                let (ldc, pc) = output(&mut c);
                // SAFETY: as in `gemm`: the pointers and leading dimensions of `operand` and
                // `output` address exactly the views' values, `c` is `n x n` (asserted
                // above) and a distinct mutable borrow; C = alpha op(A) op(A)^T with op(A)
                // the `n x k` view.
                unsafe {
                    (self.$syrk)(
                        COL_MAJOR,
                        LOWER,
                        ta,
                        int(n),
                        int(k),
                        alpha,
                        pa,
                        lda,
                        0.0,
                        pc,
                        ldc,
                    )
                }
            }
        }
    };
}
level3!(f32, sgemm, ssyrk, saxpy);
level3!(f64, dgemm, dsyrk, daxpy);
