//! cuDNN's part of a step: the 3x3 convolutions (forward, backward data, backward filter;
//! algorithms measured once per shape by `cudnnFind*` and kept) and BatchNorm (training with
//! the batch's statistics, inference with the running ones, backward), in f32 NCHW. By
//! default with FMA math, no TF32, so the products round as the host engine's f32 GEMMs do;
//! with [`Fp32Precision::Tf32`] (the user's explicit choice) the convolutions run on the
//! tensor cores in TF32, as PyTorch's `torch.backends.cudnn.conv.fp32_precision = "tf32"`.

use std::ffi::c_void;

use cudarc::cudnn::sys as dnn;

use ntk_numerics::backend::Fp32Precision;

use crate::cudnn::dev::{DevBuf, DevPtr};
use crate::cudnn::error::{Error, Result, cudnn};

/// cuDNN's workspace for one convolution pass at most this large (bytes): an algorithm that
/// wants more is passed over.
pub const WORKSPACE_LIMIT: usize = 256 << 20;

const ONE: f32 = 1.0;
const ZERO: f32 = 0.0;

fn scale(accumulate: bool) -> *const c_void {
    (if accumulate { &ONE } else { &ZERO }) as *const f32 as *const c_void
}

fn one() -> *const c_void {
    &ONE as *const f32 as *const c_void
}

fn p(ptr: DevPtr<f32>) -> *mut c_void {
    ptr.void()
}

/// An f32 NCHW tensor descriptor. The handle is crate-private: only [`Tensor::new`] makes
/// one, and `Drop` destroys it once.
pub struct Tensor(pub(crate) dnn::cudnnTensorDescriptor_t);

impl Tensor {
    pub fn new([n, c, h, w]: [usize; 4]) -> Result<Self> {
        let mut d = std::ptr::null_mut();
        // SAFETY: `cudnnCreateTensorDescriptor` writes one descriptor through `&mut d`, a
        // live local; it needs no handle or device memory. The descriptor is owned by the
        // `Tensor` made next, whose `Drop` destroys it once.
        cudnn("creating a tensor descriptor", unsafe {
            dnn::cudnnCreateTensorDescriptor(&mut d)
        })?;
        let t = Self(d);
        // SAFETY: `d` is the descriptor created just above (owned by `t`); the call only
        // records the format, type and four sizes in it (cuDNN rejects a non-positive size
        // with an error status).
        cudnn("setting a tensor descriptor", unsafe {
            dnn::cudnnSetTensor4dDescriptor(
                d,
                dnn::cudnnTensorFormat_t::CUDNN_TENSOR_NCHW,
                dnn::cudnnDataType_t::CUDNN_DATA_FLOAT,
                n as i32,
                c as i32,
                h as i32,
                w as i32,
            )
        })?;
        Ok(t)
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        // SAFETY: `self.0` was created by cuDNN in `Tensor::new` (this value exists only
        // once that succeeded, and the field is private to the crate) and is destroyed only
        // here, once; the calls that used it have been enqueued already, and work on the
        // device does not read a descriptor.
        unsafe {
            dnn::cudnnDestroyTensorDescriptor(self.0);
        }
    }
}

struct Filter(dnn::cudnnFilterDescriptor_t);

impl Drop for Filter {
    fn drop(&mut self) {
        // SAFETY: `self.0` was created by cuDNN in `Conv::new` (this value exists only once
        // that succeeded, and the field is private to the crate) and is destroyed only
        // here, once; the calls that used it have been enqueued already, and work on the
        // device does not read a descriptor.
        unsafe {
            dnn::cudnnDestroyFilterDescriptor(self.0);
        }
    }
}

struct ConvDesc(dnn::cudnnConvolutionDescriptor_t);

impl Drop for ConvDesc {
    fn drop(&mut self) {
        // SAFETY: `self.0` was created by cuDNN in `Conv::new` (this value exists only once
        // that succeeded, and the field is private to the crate) and is destroyed only
        // here, once; the calls that used it have been enqueued already, and work on the
        // device does not read a descriptor.
        unsafe {
            dnn::cudnnDestroyConvolutionDescriptor(self.0);
        }
    }
}

/// The algorithms chosen for one convolution shape, and their largest workspace.
#[derive(Clone, Copy, Debug)]
pub struct Algos {
    fwd: dnn::cudnnConvolutionFwdAlgo_t,
    bwd_data: Option<dnn::cudnnConvolutionBwdDataAlgo_t>,
    bwd_filter: dnn::cudnnConvolutionBwdFilterAlgo_t,
    workspace: usize,
}

/// Algorithms by shape and math `(n, c_in, h, w, c_out, stride, data, tf32)`: measured once
/// each.
pub type AlgoCache = std::collections::HashMap<[usize; 8], Algos>;

/// cuDNN's math type for `fp32`: FMA math (no tensor cores, no TF32) for `ieee`; the default
/// math, which lets f32 convolutions use TF32 tensor cores, for `tf32` (PyTorch sets the same
/// pair from its `fp32_precision`).
pub fn math_type(fp32: Fp32Precision) -> dnn::cudnnMathType_t {
    match fp32 {
        Fp32Precision::Ieee => dnn::cudnnMathType_t::CUDNN_FMA_MATH,
        Fp32Precision::Tf32 => dnn::cudnnMathType_t::CUDNN_DEFAULT_MATH,
    }
}

/// One 3x3, padding-1 convolution (cross-correlation, as Burn's and PyTorch's) for a batch
/// size, with its three algorithms.
pub struct Conv {
    pub x: Tensor,
    pub y: Tensor,
    w: Filter,
    desc: ConvDesc,
    fwd: dnn::cudnnConvolutionFwdAlgo_t,
    bwd_data: Option<dnn::cudnnConvolutionBwdDataAlgo_t>,
    bwd_filter: dnn::cudnnConvolutionBwdFilterAlgo_t,
    /// The largest workspace its passes need (bytes).
    pub workspace: usize,
    shape: String,
}

impl Conv {
    /// `n` images of `c_in x h x w` to `c_out` channels at `stride`; `data`: whether the
    /// input's gradient is needed (not for the stem); products rounded as `fp32` says.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        handle: dnn::cudnnHandle_t,
        cache: &mut AlgoCache,
        fp32: Fp32Precision,
        n: usize,
        [c_in, h, w]: [usize; 3],
        c_out: usize,
        stride: usize,
        data: bool,
    ) -> Result<Self> {
        let (ho, wo) = ((h - 1) / stride + 1, (w - 1) / stride + 1);
        let shape = format!("{n}x{c_in}x{h}x{w} -> {c_out} channels, stride {stride}");
        let x = Tensor::new([n, c_in, h, w])?;
        let y = Tensor::new([n, c_out, ho, wo])?;
        let mut fd = std::ptr::null_mut();
        // SAFETY: `cudnnCreateFilterDescriptor` writes one descriptor through `&mut fd`, a
        // live local; it is owned by the `Filter` made next, whose `Drop` destroys it once.
        cudnn("creating a filter descriptor", unsafe {
            dnn::cudnnCreateFilterDescriptor(&mut fd)
        })?;
        let f = Filter(fd);
        // SAFETY: `fd` is the descriptor created just above (owned by `f`); the call only
        // records the type, format and four sizes in it.
        cudnn("setting a filter descriptor", unsafe {
            dnn::cudnnSetFilter4dDescriptor(
                fd,
                dnn::cudnnDataType_t::CUDNN_DATA_FLOAT,
                dnn::cudnnTensorFormat_t::CUDNN_TENSOR_NCHW,
                c_out as i32,
                c_in as i32,
                3,
                3,
            )
        })?;
        let mut cd = std::ptr::null_mut();
        // SAFETY: `cudnnCreateConvolutionDescriptor` writes one descriptor through `&mut
        // cd`, a live local; it is owned by the `ConvDesc` made next, whose `Drop` destroys
        // it once.
        cudnn("creating a convolution descriptor", unsafe {
            dnn::cudnnCreateConvolutionDescriptor(&mut cd)
        })?;
        let desc = ConvDesc(cd);
        // SAFETY: `cd` is the descriptor created just above (owned by `desc`); the call
        // only records padding, stride, dilation, mode and type in it.
        cudnn("setting a convolution descriptor", unsafe {
            dnn::cudnnSetConvolution2dDescriptor(
                cd,
                1,
                1,
                stride as i32,
                stride as i32,
                1,
                1,
                dnn::cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION,
                dnn::cudnnDataType_t::CUDNN_DATA_FLOAT,
            )
        })?;
        // SAFETY: `cd` is the live descriptor set just above; the call stores an enum in
        // it.
        cudnn("setting the math type", unsafe {
            dnn::cudnnSetConvolutionMathType(cd, math_type(fp32))
        })?;
        let mut conv = Self {
            x,
            y,
            w: f,
            desc,
            fwd: dnn::cudnnConvolutionFwdAlgo_t::CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
            bwd_data: None,
            bwd_filter: dnn::cudnnConvolutionBwdFilterAlgo_t::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
            workspace: 0,
            shape,
        };
        let key = [
            n,
            c_in,
            h,
            w,
            c_out,
            stride,
            usize::from(data),
            usize::from(fp32 == Fp32Precision::Tf32),
        ];
        match cache.get(&key) {
            Some(a) => {
                conv.fwd = a.fwd;
                conv.bwd_data = a.bwd_data;
                conv.bwd_filter = a.bwd_filter;
                conv.workspace = a.workspace;
            }
            None => {
                conv.find(handle, data)?;
                let a = Algos {
                    fwd: conv.fwd,
                    bwd_data: conv.bwd_data,
                    bwd_filter: conv.bwd_filter,
                    workspace: conv.workspace,
                };
                cache.insert(key, a);
            }
        }
        Ok(conv)
    }

    /// Measures cuDNN's algorithms for the three passes and keeps the fastest of each that
    /// succeeds within [`WORKSPACE_LIMIT`].
    fn find(&mut self, h: dnn::cudnnHandle_t, data: bool) -> Result<()> {
        const N: usize = 8;
        let mut count = 0i32;
        // SAFETY: `cudnnConvolutionFwdAlgoPerf_t` is a `repr(C)` struct of `u32` enums
        // whose 0 is a declared variant (`..._IMPLICIT_GEMM`, `CUDNN_STATUS_SUCCESS`,
        // `CUDNN_NON_DETERMINISTIC`, `CUDNN_DEFAULT_MATH`), an `f32`, a `usize` and
        // `c_int`s: all-zero bytes are a valid value.
        let mut fwd: [dnn::cudnnConvolutionFwdAlgoPerf_t; N] = unsafe { std::mem::zeroed() };
        // SAFETY: `h` is the engine's live cuDNN handle (`Gpu::cudnn`, on its stream); the
        // four descriptors are `self`'s, live until `self` drops; `count` is a live local
        // and `fwd` has room for `N` rows, the count requested, so cuDNN writes at most `N`
        // (and `fastest` reads only the first `count`). This legacy `Find` allocates and
        // frees the device buffers it times itself: no pointer of ours is read. It relies
        // on cuDNN writing only `algo`/`status`/... values that this binding (cudarc's
        // cudnn-09010) declares, or the enum fields hold invalid values; not checked here:
        // see issue 67.
        cudnn("measuring the forward algorithms", unsafe {
            dnn::cudnnFindConvolutionForwardAlgorithm(
                h,
                self.x.0,
                self.w.0,
                self.desc.0,
                self.y.0,
                N as i32,
                &mut count,
                fwd.as_mut_ptr(),
            )
        })?;
        let (algo, memory) = fastest(&fwd, count, |r| (r.status, r.memory, r.algo))
            .ok_or_else(|| self.none("forward"))?;
        self.fwd = algo;
        self.workspace = self.workspace.max(memory);
        // SAFETY: as for `fwd` above: a `repr(C)` struct of `u32` enums whose 0 is a
        // declared variant (`..._BWD_FILTER_ALGO_0` and the same three), an `f32`, a
        // `usize` and `c_int`s.
        let mut bf: [dnn::cudnnConvolutionBwdFilterAlgoPerf_t; N] = unsafe { std::mem::zeroed() };
        // SAFETY: as for the forward algorithms above: live handle and descriptors, `count`
        // a local, `bf` with room for the `N` rows requested; cuDNN times on buffers it
        // allocates itself. The same reliance on cuDNN writing only declared enum values
        // (see issue 67).
        cudnn("measuring the filter-gradient algorithms", unsafe {
            dnn::cudnnFindConvolutionBackwardFilterAlgorithm(
                h,
                self.x.0,
                self.y.0,
                self.desc.0,
                self.w.0,
                N as i32,
                &mut count,
                bf.as_mut_ptr(),
            )
        })?;
        let (algo, memory) = fastest(&bf, count, |r| (r.status, r.memory, r.algo))
            .ok_or_else(|| self.none("filter-gradient"))?;
        self.bwd_filter = algo;
        self.workspace = self.workspace.max(memory);
        if data {
            // SAFETY: as for `fwd` above: a `repr(C)` struct of `u32` enums whose 0 is a
            // declared variant (`..._BWD_DATA_ALGO_0` and the same three), an `f32`, a
            // `usize` and `c_int`s.
            let mut bd: [dnn::cudnnConvolutionBwdDataAlgoPerf_t; N] = unsafe { std::mem::zeroed() };
            // SAFETY: as for the forward algorithms above: live handle and descriptors,
            // `count` a local, `bd` with room for the `N` rows requested; cuDNN times on
            // buffers it allocates itself. The same reliance on cuDNN writing only declared
            // enum values (see issue 67).
            cudnn("measuring the input-gradient algorithms", unsafe {
                dnn::cudnnFindConvolutionBackwardDataAlgorithm(
                    h,
                    self.w.0,
                    self.y.0,
                    self.desc.0,
                    self.x.0,
                    N as i32,
                    &mut count,
                    bd.as_mut_ptr(),
                )
            })?;
            let (algo, memory) = fastest(&bd, count, |r| (r.status, r.memory, r.algo))
                .ok_or_else(|| self.none("input-gradient"))?;
            self.bwd_data = Some(algo);
            self.workspace = self.workspace.max(memory);
        }
        Ok(())
    }

    fn none(&self, pass: &'static str) -> Error {
        Error::NoAlgorithm {
            pass,
            shape: self.shape.clone(),
        }
    }

    /// `y = conv(x, w)`.
    pub(crate) fn forward(
        &self,
        h: dnn::cudnnHandle_t,
        ws: DevBuf<u8>,
        x: impl Into<DevPtr<f32>>,
        w: DevPtr<f32>,
        y: impl Into<DevPtr<f32>>,
    ) -> Result<()> {
        let (x, y) = (x.into(), y.into());
        // SAFETY: `h` is the engine's live handle, on the stream every buffer was allocated
        // and zeroed on; the descriptors are `self`'s. The scalars point to the constants
        // `ONE`/`ZERO`, promoted to statics, in host memory as cuDNN's default expects.
        // This crate-private fn does not check the device addresses: its callers
        // (engine/forward.rs) pass `x` and `y` from the engine's maps, sized by
        // `plan::Maps` for `cap >= n` images of this convolution's input and output shapes,
        // `w` the weight slot of `c_out c_in 9` values in `theta`, and `ws` the plan's
        // workspace of `ws.len()` bytes, at least what `self.fwd` needs (`CudnnResNet::plan`
        // allocates the largest `workspace` of its convolutions, each at least its chosen
        // algorithms' `memory`).
        cudnn("convolution forward", unsafe {
            dnn::cudnnConvolutionForward(
                h,
                one(),
                self.x.0,
                p(x),
                self.w.0,
                p(w),
                self.desc.0,
                self.fwd,
                ws.ptr().void(),
                ws.len(),
                scale(false),
                self.y.0,
                p(y),
            )
        })
    }

    /// `dx (+)= conv^T(w, dy)` (`accumulate`: added to what `dx` holds).
    pub(crate) fn backward_data(
        &self,
        h: dnn::cudnnHandle_t,
        ws: DevBuf<u8>,
        w: DevPtr<f32>,
        dy: impl Into<DevPtr<f32>>,
        dx: impl Into<DevPtr<f32>>,
        accumulate: bool,
    ) -> Result<()> {
        let (dy, dx) = (dy.into(), dx.into());
        let algo = self
            .bwd_data
            .expect("a convolution planned with its input gradient");
        // SAFETY: as in `forward`: live handle and descriptors, static host scalars. Not
        // checked here, upheld by the callers (engine/backward.rs): `w` is the weight slot
        // in `theta`, `dy` and `dx` are maps of `plan::Maps::largest` values (at least this
        // convolution's output and input for `n <= cap` images), and `ws` holds at least
        // what `algo` needs (as in `forward`).
        cudnn("convolution backward data", unsafe {
            dnn::cudnnConvolutionBackwardData(
                h,
                one(),
                self.w.0,
                p(w),
                self.y.0,
                p(dy),
                self.desc.0,
                algo,
                ws.ptr().void(),
                ws.len(),
                scale(accumulate),
                self.x.0,
                p(dx),
            )
        })
    }

    /// `dw = dy^T x` (overwritten).
    pub(crate) fn backward_filter(
        &self,
        h: dnn::cudnnHandle_t,
        ws: DevBuf<u8>,
        x: impl Into<DevPtr<f32>>,
        dy: impl Into<DevPtr<f32>>,
        dw: DevPtr<f32>,
    ) -> Result<()> {
        let (x, dy) = (x.into(), dy.into());
        // SAFETY: as in `forward`: live handle and descriptors, static host scalars. Not
        // checked here, upheld by the callers (engine/backward.rs): `x` is this
        // convolution's saved input map and `dy` a map of `plan::Maps::largest` values,
        // `dw` the weight's slot of `c_out c_in 9` values in `grad`, and `ws` holds at
        // least what `self.bwd_filter` needs (as in `forward`).
        cudnn("convolution backward filter", unsafe {
            dnn::cudnnConvolutionBackwardFilter(
                h,
                one(),
                self.x.0,
                p(x),
                self.y.0,
                p(dy),
                self.desc.0,
                self.bwd_filter,
                ws.ptr().void(),
                ws.len(),
                scale(false),
                self.w.0,
                p(dw),
            )
        })
    }
}

/// One BatchNorm's device pointers: `gamma`, `beta` (and their gradients), the running mean
/// and variance, cuDNN's saved batch mean and `1 / sqrt(var + eps)`.
#[derive(Clone, Copy, Debug)]
pub struct BnPtrs {
    pub gamma: DevPtr<f32>,
    pub beta: DevPtr<f32>,
    pub dgamma: DevPtr<f32>,
    pub dbeta: DevPtr<f32>,
    pub mean: DevPtr<f32>,
    pub var: DevPtr<f32>,
    pub save_mean: DevPtr<f32>,
    pub save_inv_std: DevPtr<f32>,
    pub eps: f64,
}

const SPATIAL: dnn::cudnnBatchNormMode_t = dnn::cudnnBatchNormMode_t::CUDNN_BATCHNORM_SPATIAL;

/// cuDNN's BatchNorm for training and its backward (`NTK_CUDNN_BN`): `spatial` (the default)
/// or `persistent` (`CUDNN_BATCHNORM_SPATIAL_PERSISTENT`, which cuDNN may run on faster
/// kernels that hold a channel's values on chip). Evaluation is `spatial` either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BnMode {
    Spatial,
    Persistent,
}

impl BnMode {
    /// The mode `NTK_CUDNN_BN` names ([`BnMode::parse`]).
    pub fn from_env() -> Result<Self> {
        let value = std::env::var_os("NTK_CUDNN_BN");
        Self::parse(value.as_ref().map(|v| v.to_string_lossy()).as_deref())
    }

    /// `None` (unset) or `spatial`: [`BnMode::Spatial`]; `persistent`:
    /// [`BnMode::Persistent`]; another value is an error naming the setting.
    pub fn parse(value: Option<&str>) -> Result<Self> {
        match value {
            None | Some("spatial") => Ok(Self::Spatial),
            Some("persistent") => Ok(Self::Persistent),
            Some(other) => Err(Error::Setting {
                name: "NTK_CUDNN_BN",
                value: other.to_string(),
                expected: "spatial or persistent",
            }),
        }
    }

    fn cu(self) -> dnn::cudnnBatchNormMode_t {
        match self {
            Self::Spatial => SPATIAL,
            Self::Persistent => dnn::cudnnBatchNormMode_t::CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
        }
    }
}

/// Training mode: `y = gamma (x - mean) / sqrt(var + eps) + beta` with the batch's
/// statistics, saved for the backward. The running statistics are updated by the engine's
/// own kernel (Burn's rule, with the biased variance), so cuDNN's are given a scratch pair
/// `dummy` and a factor of 0.
#[allow(clippy::too_many_arguments)]
pub(crate) fn bn_train(
    h: dnn::cudnnHandle_t,
    mode: BnMode,
    x_desc: &Tensor,
    param: &Tensor,
    x: impl Into<DevPtr<f32>>,
    y: impl Into<DevPtr<f32>>,
    b: &BnPtrs,
    dummy: (DevBuf<f32>, DevBuf<f32>),
) -> Result<()> {
    let (x, y) = (x.into(), y.into());
    // SAFETY: `h` is the engine's live handle; `x_desc` (the convolution's output, `n x c x
    // h x w`) and `param` (`1 x c x 1 x 1`) are live descriptors; the scalars are static
    // host constants. Not checked here, upheld by the callers (engine/forward.rs): `x` and
    // `y` are distinct maps of at least `x_desc`'s size (`plan::Maps`), `gamma`/`beta` are
    // `c`-value slots of `theta`, `save_mean`/`save_inv_std` were allocated with `c`
    // values, and `dummy` holds two buffers of the widest BatchNorm's channels (cuDNN
    // writes its running statistics there, factor 0).
    cudnn("BatchNorm forward training", unsafe {
        dnn::cudnnBatchNormalizationForwardTraining(
            h,
            mode.cu(),
            one(),
            scale(false),
            x_desc.0,
            p(x),
            x_desc.0,
            p(y),
            param.0,
            p(b.gamma),
            p(b.beta),
            0.0,
            p(dummy.0.ptr()),
            p(dummy.1.ptr()),
            b.eps,
            p(b.save_mean),
            p(b.save_inv_std),
        )
    })
}

/// Inference mode, with the running statistics.
pub(crate) fn bn_infer(
    h: dnn::cudnnHandle_t,
    x_desc: &Tensor,
    param: &Tensor,
    x: impl Into<DevPtr<f32>>,
    y: impl Into<DevPtr<f32>>,
    b: &BnPtrs,
) -> Result<()> {
    let (x, y) = (x.into(), y.into());
    // SAFETY: as in `bn_train`: live handle and descriptors, static host scalars. Not
    // checked here, upheld by the callers: `x` and `y` hold `x_desc`'s size, `gamma`/`beta`
    // are `c`-value slots of `theta`, and `mean`/`var` the layer's `c`-value running
    // statistics in the engine's `running` buffer (`HostResNet`'s layout, uploaded whole).
    cudnn("BatchNorm forward inference", unsafe {
        dnn::cudnnBatchNormalizationForwardInference(
            h,
            SPATIAL,
            one(),
            scale(false),
            x_desc.0,
            p(x),
            x_desc.0,
            p(y),
            param.0,
            p(b.gamma),
            p(b.beta),
            p(b.mean),
            p(b.var),
            b.eps,
        )
    })
}

/// The backward of [`bn_train`]: `dx` from `dy`, and `dgamma`, `dbeta` overwritten.
#[allow(clippy::too_many_arguments)]
pub(crate) fn bn_backward(
    h: dnn::cudnnHandle_t,
    mode: BnMode,
    x_desc: &Tensor,
    param: &Tensor,
    x: impl Into<DevPtr<f32>>,
    dy: impl Into<DevPtr<f32>>,
    dx: impl Into<DevPtr<f32>>,
    b: &BnPtrs,
) -> Result<()> {
    let (x, dy, dx) = (x.into(), dy.into(), dx.into());
    // SAFETY: as in `bn_train`: live handle and descriptors, static host scalars. Not
    // checked here, upheld by the callers (engine/backward.rs): `x`, `dy` and `dx` hold
    // `x_desc`'s size (`dx` distinct from `dy`), `gamma` is a `c`-value slot of `theta`,
    // `dgamma`/`dbeta` are `c`-value slots of `grad`, and `save_mean`/`save_inv_std` hold
    // the `c` values `bn_train` saved.
    cudnn("BatchNorm backward", unsafe {
        dnn::cudnnBatchNormalizationBackward(
            h,
            mode.cu(),
            one(),
            scale(false),
            one(),
            scale(false),
            x_desc.0,
            p(x),
            x_desc.0,
            p(dy),
            x_desc.0,
            p(dx),
            param.0,
            p(b.gamma),
            p(b.dgamma),
            p(b.dbeta),
            b.eps,
            p(b.save_mean),
            p(b.save_inv_std),
        )
    })
}

/// The first of `count` rows of a `cudnnFind*` answer (fastest first) that succeeded within
/// [`WORKSPACE_LIMIT`]: its algorithm and workspace. `row` reads a row's status, workspace
/// bytes and algorithm (the three passes report them in three types).
fn fastest<R, A>(
    rows: &[R],
    count: i32,
    row: impl Fn(&R) -> (dnn::cudnnStatus_t, usize, A),
) -> Option<(A, usize)> {
    rows[..(count.max(0) as usize).min(rows.len())]
        .iter()
        .map(row)
        .find(|(status, memory, _)| {
            *status == dnn::cudnnStatus_t::CUDNN_STATUS_SUCCESS && *memory <= WORKSPACE_LIMIT
        })
        .map(|(_, memory, algo)| (algo, memory))
}

#[cfg(test)]
mod tests {
    use super::BnMode;

    #[test]
    fn the_batch_norm_mode_setting() {
        assert_eq!(BnMode::parse(None).unwrap(), BnMode::Spatial);
        assert_eq!(BnMode::parse(Some("spatial")).unwrap(), BnMode::Spatial);
        assert_eq!(
            BnMode::parse(Some("persistent")).unwrap(),
            BnMode::Persistent
        );
        let e = BnMode::parse(Some("fast")).unwrap_err().to_string();
        assert_eq!(e, "NTK_CUDNN_BN=\"fast\": expected spatial or persistent");
    }
}
