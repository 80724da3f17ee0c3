//! The CIFAR ResNets of [`super`] on the host: forward in training mode and backward on host
//! GEMMs (im2col convolutions, [`conv`]), BatchNorm with batch statistics ([`norm`]),
//! NormReLU with the border gain, Fixup's scalars, option-A shortcuts and global average
//! pooling ([`map`]). It computes what Burn's autodiff computes for [`ntk_model::ResNet`] in
//! training mode (the tests hold it to `loss.backward()`), about 3-4x faster on a 2-core
//! CPU (`experiments/bench/README.md`): a training step is GEMMs and memory-bound passes,
//! and here the GEMMs run on OpenBLAS, chunk by chunk of images on every core, with the
//! passes between them threaded over the same chunks.
//!
//! All trainable parameters live in one vector [`HostResNet::theta`] (layer by layer in the
//! order of [`HostResNet::slots`]; convolution weights as `[c_out, 3, 3, c_in]`), so that an
//! optimizer updates them as one slice; BatchNorm's running statistics live apart.

pub mod avx512;
pub mod conv;
mod cpu;
mod jacobian;
pub mod map;
pub mod norm;
mod pass;
pub mod simd;
pub mod step;
#[cfg(test)]
mod tests;
pub(crate) mod wide;

use burn::module::{Param, RunningState};
use burn::nn::BatchNorm;
use burn::tensor::Tensor;
use ntk_numerics::linalg::Real;

use self::conv::Conv;
use self::map::{Dims, Shortcut};
use self::norm::Stats;
use crate::host::mlp::replace_param;
use ntk_model::activation::Normalized;
use ntk_model::resnet::{Block as BurnBlock, ResNet, ResNetVariant};

pub use pass::Workspace;

/// Where one parameter tensor lives in `theta`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub at: usize,
    pub len: usize,
}

impl Slot {
    pub fn range(&self) -> std::ops::Range<usize> {
        self.at..self.at + self.len
    }
}

/// One BatchNorm: its `gamma`, `beta`, where its running mean and variance live, and its
/// constants.
#[derive(Clone, Debug)]
pub struct Bn {
    pub gamma: Slot,
    pub beta: Slot,
    /// `running[at..at + c]` the mean, `running[at + c..at + 2c]` the variance.
    pub running: usize,
    pub momentum: f64,
    pub eps: f64,
}

impl Bn {
    /// How this BatchNorm normalizes: in evaluation mode with its running statistics taken
    /// from `running`; in training mode (`running = None`) with the batch's, `batch` where
    /// the convolution computed them.
    pub fn given<'a>(
        &self,
        running: Option<&'a [f64]>,
        batch: &'a Option<(Vec<f64>, Vec<f64>)>,
    ) -> norm::Source<'a> {
        let c = self.gamma.len;
        let given = match (running, batch) {
            (Some(r), _) => Some((
                &r[self.running..self.running + c],
                &r[self.running + c..self.running + 2 * c],
            )),
            (None, Some((m, v))) => Some((m.as_slice(), v.as_slice())),
            (None, None) => None,
        };
        norm::Source {
            eps: self.eps,
            given,
            fixed: running.is_some(),
        }
    }
}

/// What follows the stem convolution.
#[derive(Clone, Debug)]
pub enum StemKind {
    /// `relu(BN(z))`.
    BatchNorm(Bn),
    /// `s(z)`, `s` the normalized activation (NormReLU or SELU).
    Normalized,
    /// `relu(z + bias1)`.
    Fixup { bias: Slot },
}

/// A residual block's own parameters beyond its two convolutions.
#[derive(Clone, Debug)]
pub enum BlockKind {
    /// `y = relu(BN2(conv2(relu(BN1(conv1 x)))) + S x)`.
    BatchNorm { bn1: Bn, bn2: Bn },
    /// `y = s(merge(S x, conv2(s(conv1 x))))`, merge `(a + r) / sqrt 2` on carried channels,
    /// `s` the normalized activation (NormReLU or SELU).
    Normalized,
    /// `xa = x + b1a`, `y = relu(scale conv2(relu(conv1 xa + b1b) + b2a) + b2b + S x')` with
    /// `x' = xa` when the block downsamples, `x` otherwise.
    Fixup {
        b1a: Slot,
        b1b: Slot,
        b2a: Slot,
        scale: Slot,
        b2b: Slot,
    },
}

/// One residual block.
#[derive(Clone, Debug)]
pub struct Block<T> {
    pub conv1: Conv<T>,
    pub w1: Slot,
    pub conv2: Conv<T>,
    pub w2: Slot,
    pub shortcut: Shortcut,
    pub kind: BlockKind,
}

/// Pooling, Fixup's `bias2` and the classifier `z = a W + b` (`W: [features, classes]`).
#[derive(Clone, Debug)]
pub struct Head {
    pub features: usize,
    pub classes: usize,
    pub bias2: Option<Slot>,
    pub w: Slot,
    pub b: Slot,
}

/// A CIFAR ResNet's parameters and training-mode passes on the host, in `T`.
#[derive(Clone)]
pub struct HostResNet<T: Real> {
    pub stem: Conv<T>,
    pub stem_w: Slot,
    pub stem_kind: StemKind,
    pub blocks: Vec<Block<T>>,
    pub head: Head,
    /// The normalized activation of the norm-free variants (norm_relu, selu, normalized).
    pub normalized: Option<Normalized>,
    /// Every trainable parameter.
    pub theta: Vec<T>,
    /// BatchNorm's running means and variances.
    pub running: Vec<T>,
    ws: Option<Workspace<T>>,
}

/// Hands out consecutive slots.
#[derive(Default)]
struct Layout {
    theta: usize,
    running: usize,
}

impl Layout {
    fn take(&mut self, len: usize) -> Slot {
        let s = Slot {
            at: self.theta,
            len,
        };
        self.theta += len;
        s
    }
    fn bn(&mut self, c: usize, bn: &BatchNorm) -> Bn {
        let out = Bn {
            gamma: self.take(c),
            beta: self.take(c),
            running: self.running,
            momentum: bn.momentum,
            eps: bn.epsilon,
        };
        self.running += 2 * c;
        out
    }
}

fn values<const D: usize>(p: &Param<Tensor<D>>) -> Vec<f64> {
    p.val().try_into_vec_as().expect("reading a parameter")
}

fn running<const D: usize>(r: &RunningState<Tensor<D>>) -> Vec<f64> {
    r.value()
        .try_into_vec_as()
        .expect("reading a running statistic")
}

impl<T: Real> HostResNet<T> {
    /// Copies the parameters and running statistics of `net`.
    pub fn read(net: &ResNet) -> Self {
        let cfg = net.config();
        let gain = cfg.border_gain();
        let (s, base) = (cfg.image_size, cfg.base_width);
        let mut lay = Layout::default();
        let mut theta: Vec<f64> = Vec::new();
        let mut run: Vec<f64> = Vec::new();
        let stem = Conv::new(cfg.in_channels, s, s, base, 1, gain);
        let stem_w = lay.take(stem.num_weights());
        theta.extend(conv::to_hwc(
            &values(&net.stem.weight),
            cfg.in_channels,
            base,
        ));
        let mut read_bn = |lay: &mut Layout, theta: &mut Vec<f64>, bn: &BatchNorm, c: usize| {
            let out = lay.bn(c, bn);
            theta.extend(values(&bn.gamma));
            theta.extend(values(&bn.beta));
            run.extend(running(&bn.running_mean));
            run.extend(running(&bn.running_var));
            out
        };
        let stem_kind = match (cfg.variant, &net.stem_bn, &net.stem_bias) {
            (ResNetVariant::BatchNorm, Some(bn), _) => {
                StemKind::BatchNorm(read_bn(&mut lay, &mut theta, bn, base))
            }
            (ResNetVariant::Fixup, _, Some(b)) => {
                theta.extend(values(b));
                StemKind::Fixup { bias: lay.take(1) }
            }
            _ => StemKind::Normalized,
        };
        let mut blocks = Vec::with_capacity(net.blocks.len());
        let mut input = Dims::new(0, s, s, base);
        for b in &net.blocks {
            let (c_in, h) = (input.c, input.h);
            let down = b.downsamples();
            let c_out = if down { 2 * c_in } else { c_in };
            let conv1 = Conv::new(c_in, h, input.w, c_out, if down { 2 } else { 1 }, gain);
            let out = conv1.output;
            let conv2 = Conv::new(c_out, out.h, out.w, c_out, 1, gain);
            let w1 = lay.take(conv1.num_weights());
            let scalar = |lay: &mut Layout, theta: &mut Vec<f64>, p: &Param<Tensor<1>>| {
                theta.extend(values(p));
                lay.take(1)
            };
            let (kind, w2) = match b {
                BurnBlock::BatchNorm(bb) => {
                    theta.extend(conv::to_hwc(&values(&bb.conv1.weight), c_in, c_out));
                    let bn1 = read_bn(&mut lay, &mut theta, &bb.bn1, c_out);
                    let w2 = lay.take(conv2.num_weights());
                    theta.extend(conv::to_hwc(&values(&bb.conv2.weight), c_out, c_out));
                    let bn2 = read_bn(&mut lay, &mut theta, &bb.bn2, c_out);
                    (BlockKind::BatchNorm { bn1, bn2 }, w2)
                }
                BurnBlock::NormRelu(nb) => {
                    theta.extend(conv::to_hwc(&values(&nb.conv1.weight), c_in, c_out));
                    let w2 = lay.take(conv2.num_weights());
                    theta.extend(conv::to_hwc(&values(&nb.conv2.weight), c_out, c_out));
                    (BlockKind::Normalized, w2)
                }
                BurnBlock::Fixup(fb) => {
                    theta.extend(conv::to_hwc(&values(&fb.conv1.weight), c_in, c_out));
                    let b1a = scalar(&mut lay, &mut theta, &fb.bias1a);
                    let b1b = scalar(&mut lay, &mut theta, &fb.bias1b);
                    let b2a = scalar(&mut lay, &mut theta, &fb.bias2a);
                    let w2 = lay.take(conv2.num_weights());
                    theta.extend(conv::to_hwc(&values(&fb.conv2.weight), c_out, c_out));
                    let scale = scalar(&mut lay, &mut theta, &fb.scale);
                    let b2b = scalar(&mut lay, &mut theta, &fb.bias2b);
                    let kind = BlockKind::Fixup {
                        b1a,
                        b1b,
                        b2a,
                        scale,
                        b2b,
                    };
                    (kind, w2)
                }
            };
            blocks.push(Block {
                shortcut: Shortcut { input, output: out },
                conv1,
                w1,
                conv2,
                w2,
                kind,
            });
            input = out;
        }
        let features = input.c;
        let classes = cfg.num_classes;
        let bias2 = net.head_bias.as_ref().map(|b| {
            theta.extend(values(b));
            lay.take(1)
        });
        let w = lay.take(features * classes);
        theta.extend(values(&net.classifier.weight));
        let b = lay.take(classes);
        theta.extend(values(&net.classifier.bias));
        assert_eq!(theta.len(), lay.theta, "every slot was read");
        Self {
            stem,
            stem_w,
            stem_kind,
            blocks,
            head: Head {
                features,
                classes,
                bias2,
                w,
                b,
            },
            normalized: cfg.normalized(),
            theta: theta.into_iter().map(T::of).collect(),
            running: run.into_iter().map(T::of).collect(),
            ws: None,
        }
    }

    /// Trainable parameters: the length of `theta`.
    pub fn num_params(&self) -> usize {
        self.theta.len()
    }

    /// Where Fixup's scalar parameters sit in `theta`, ascending (the stem's `bias1`, each
    /// block's `bias1a`, `bias1b`, `bias2a`, `scale`, `bias2b`, the head's `bias2`: those of
    /// [`ResNet::fixup_scalars`]); empty for the other variants.
    pub fn fixup_scalars(&self) -> Vec<usize> {
        let mut out = Vec::new();
        if let StemKind::Fixup { bias } = &self.stem_kind {
            out.push(bias.at);
        }
        for b in &self.blocks {
            if let BlockKind::Fixup {
                b1a,
                b1b,
                b2a,
                scale,
                b2b,
            } = &b.kind
            {
                out.extend([b1a.at, b1b.at, b2a.at, scale.at, b2b.at]);
            }
        }
        out.extend(self.head.bias2.map(|s| s.at));
        out.sort_unstable();
        out
    }

    fn get(&self, s: Slot) -> Vec<f64> {
        self.theta[s.range()].iter().map(|v| v.f64()).collect()
    }

    fn conv_weights(&self, s: Slot, conv: &Conv<T>) -> Vec<f64> {
        conv::from_hwc(&self.get(s), conv.input.c, conv.output.c)
    }

    /// Writes the parameters and running statistics into `net` (the network they were read
    /// from), keeping each parameter's id.
    pub fn write_into(&self, net: &mut ResNet) {
        let conv_shape = |c: &Conv<T>| vec![c.output.c, c.input.c, 3, 3];
        let scalar = |p: Param<Tensor<1>>, s: Slot| replace_param(p, self.get(s), vec![1]);
        net.stem.weight = replace_param(
            net.stem.weight.clone(),
            self.conv_weights(self.stem_w, &self.stem),
            conv_shape(&self.stem),
        );
        match (&self.stem_kind, &mut net.stem_bn, &mut net.stem_bias) {
            (StemKind::BatchNorm(bn), Some(b), _) => self.write_bn(bn, b),
            (StemKind::Fixup { bias }, _, Some(b)) => *b = scalar(b.clone(), *bias),
            _ => {}
        }
        for (hb, bb) in self.blocks.iter().zip(net.blocks.iter_mut()) {
            let (c1, c2) = match bb {
                BurnBlock::BatchNorm(b) => (&mut b.conv1, &mut b.conv2),
                BurnBlock::NormRelu(b) => (&mut b.conv1, &mut b.conv2),
                BurnBlock::Fixup(b) => (&mut b.conv1, &mut b.conv2),
            };
            c1.weight = replace_param(
                c1.weight.clone(),
                self.conv_weights(hb.w1, &hb.conv1),
                conv_shape(&hb.conv1),
            );
            c2.weight = replace_param(
                c2.weight.clone(),
                self.conv_weights(hb.w2, &hb.conv2),
                conv_shape(&hb.conv2),
            );
            match (&hb.kind, bb) {
                (BlockKind::BatchNorm { bn1, bn2 }, BurnBlock::BatchNorm(b)) => {
                    self.write_bn(bn1, &mut b.bn1);
                    self.write_bn(bn2, &mut b.bn2);
                }
                (
                    BlockKind::Fixup {
                        b1a,
                        b1b,
                        b2a,
                        scale,
                        b2b,
                    },
                    BurnBlock::Fixup(b),
                ) => {
                    b.bias1a = scalar(b.bias1a.clone(), *b1a);
                    b.bias1b = scalar(b.bias1b.clone(), *b1b);
                    b.bias2a = scalar(b.bias2a.clone(), *b2a);
                    b.scale = scalar(b.scale.clone(), *scale);
                    b.bias2b = scalar(b.bias2b.clone(), *b2b);
                }
                _ => {}
            }
        }
        if let (Some(s), Some(b)) = (self.head.bias2, net.head_bias.as_mut()) {
            *b = scalar(b.clone(), s);
        }
        let (f, k) = (self.head.features, self.head.classes);
        net.classifier.weight = replace_param(
            net.classifier.weight.clone(),
            self.get(self.head.w),
            vec![f, k],
        );
        net.classifier.bias =
            replace_param(net.classifier.bias.clone(), self.get(self.head.b), vec![k]);
    }

    fn write_bn(&self, bn: &Bn, b: &mut BatchNorm) {
        let c = bn.gamma.len;
        b.gamma = replace_param(b.gamma.clone(), self.get(bn.gamma), vec![c]);
        b.beta = replace_param(b.beta.clone(), self.get(bn.beta), vec![c]);
        let run =
            |at: usize| -> Vec<f64> { self.running[at..at + c].iter().map(|v| v.f64()).collect() };
        b.running_mean = set_running(b.running_mean.clone(), run(bn.running));
        b.running_var = set_running(b.running_var.clone(), run(bn.running + c));
    }
}

/// `state` holding `values` (same id, device and dtype). The value is set directly:
/// `RunningState::update` would only stage it for the current thread, and a visitor (a
/// checkpoint's record) reads the value from before the staged updates.
fn set_running(state: RunningState<Tensor<1>>, values: Vec<f64>) -> RunningState<Tensor<1>> {
    struct Set(Vec<f64>);
    impl burn::module::ModuleMapper for Set {
        fn map_float<const D: usize>(&mut self, p: Param<Tensor<D>>) -> Param<Tensor<D>> {
            p.map(|old| {
                let shape = old.shape();
                Tensor::<D>::from_data(
                    burn::tensor::TensorData::new(std::mem::take(&mut self.0), shape),
                    (&old.device(), old.dtype()),
                )
            })
        }
    }
    burn::module::Module::map(state, &mut Set(values))
}

/// Applies staged BatchNorm statistics to running ones: `r = (1 - m) r + m s`.
fn update_running<T: Real>(running: &mut [T], bn: &Bn, stats: &Stats) {
    let c = bn.gamma.len;
    let m = bn.momentum;
    for ch in 0..c {
        let r = &mut running[bn.running + ch];
        *r = T::of((1.0 - m) * r.f64() + m * stats.mean[ch]);
        let r = &mut running[bn.running + c + ch];
        *r = T::of((1.0 - m) * r.f64() + m * stats.var[ch]);
    }
}
