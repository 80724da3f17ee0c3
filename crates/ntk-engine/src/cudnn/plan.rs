//! What the engine keeps on the device for a [`HostResNet`], worked out on the host: the
//! parameters' device order ([`device_order`]: the host engine's `theta` with each
//! convolution's weights as cuDNN's `[c_out, c_in, 3, 3]` instead of `[c_out, 3, 3, c_in]`),
//! and the feature maps a step keeps per block ([`Maps`]), sized for a batch of `cap` rows in
//! NCHW order.
//!
//! The SGD update is elementwise, so it runs on the device order as it would on the host's;
//! only uploads and downloads permute.

use crate::host::resnet::conv::Conv;
use crate::host::resnet::{BlockKind, HostResNet, Slot, StemKind};

/// `order[i]`: the index in the host engine's `theta` of the `i`-th parameter on the device.
pub fn device_order(net: &HostResNet<f32>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..net.num_params()).collect();
    let mut transpose = |s: Slot, c: &Conv<f32>| {
        let (ci, co) = (c.input.c, c.output.c);
        for o in 0..co {
            for i in 0..ci {
                for t in 0..9 {
                    order[s.at + (o * ci + i) * 9 + t] = s.at + o * 9 * ci + t * ci + i;
                }
            }
        }
    };
    transpose(net.stem_w, &net.stem);
    for b in &net.blocks {
        transpose(b.w1, &b.conv1);
        transpose(b.w2, &b.conv2);
    }
    order
}

/// `host` (the host engine's order) in the device order.
pub fn to_device<T: Copy>(host: &[T], order: &[usize]) -> Vec<T> {
    order.iter().map(|&h| host[h]).collect()
}

/// `device` (the device order) in the host engine's order.
pub fn to_host<T: Copy + Default>(device: &[T], order: &[usize]) -> Vec<T> {
    let mut out = vec![T::default(); device.len()];
    for (d, &h) in order.iter().enumerate() {
        out[h] = device[d];
    }
    out
}

/// The values one step keeps for one block (NCHW, `cap` images): what [`HostResNet`]'s trace
/// keeps, plus Fixup's `xb = a1 + b2a` (the host folds it into its convolution's im2col).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockMaps {
    /// batch_norm `z1`; norm_relu and selu `z1` (after the border gain); fixup `xa`.
    pub a: usize,
    /// `h1 = relu(BN1 z1)`, `s(z1)`, or Fixup's `a1`.
    pub b: usize,
    /// `z2`, the merge `m`, or Fixup's `z2`.
    pub c: usize,
    /// The block's output.
    pub y: usize,
    /// Fixup's `xb`; 0 otherwise.
    pub e: usize,
}

/// The lengths (f32 values) of every map a step keeps for a batch of `cap` images.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Maps {
    pub input: usize,
    pub stem: usize,
    pub blocks: Vec<BlockMaps>,
    /// The backward's scratch maps, each as long as the largest map.
    pub largest: usize,
    pub pooled: usize,
    pub logits: usize,
}

impl Maps {
    pub fn new(net: &HostResNet<f32>, cap: usize) -> Self {
        let stem = net.stem.output.with_n(cap).len();
        let blocks: Vec<BlockMaps> = net
            .blocks
            .iter()
            .map(|b| {
                let out = b.conv1.output.with_n(cap).len();
                let inp = b.conv1.input.with_n(cap).len();
                let fixup = matches!(b.kind, BlockKind::Fixup { .. });
                BlockMaps {
                    a: if fixup { inp } else { out },
                    b: out,
                    c: out,
                    y: out,
                    e: if fixup { out } else { 0 },
                }
            })
            .collect();
        let largest = blocks
            .iter()
            .flat_map(|b| [b.a, b.y])
            .chain([stem])
            .max()
            .unwrap_or(0);
        Self {
            input: net.stem.input.with_n(cap).len(),
            stem,
            blocks,
            largest,
            pooled: cap * net.head.features,
            logits: cap * net.head.classes,
        }
    }

    /// Every map's values together (f32), scratch included: the engine's device memory for
    /// maps, `4 x` this in bytes.
    pub fn total(&self) -> usize {
        let blocks: usize = self
            .blocks
            .iter()
            .map(|b| b.a + b.b + b.c + b.y + b.e)
            .sum();
        self.input + 2 * self.stem + blocks + 5 * self.largest + 2 * self.pooled + 2 * self.logits
    }
}

/// Where BatchNorm layers sit: `(gamma, beta, running offset, channels, momentum, eps)` of
/// each, stem first, then each block's two.
pub fn batch_norms(net: &HostResNet<f32>) -> Vec<crate::host::resnet::Bn> {
    let mut out = Vec::new();
    if let StemKind::BatchNorm(bn) = &net.stem_kind {
        out.push(bn.clone());
    }
    for b in &net.blocks {
        if let BlockKind::BatchNorm { bn1, bn2 } = &b.kind {
            out.push(bn1.clone());
            out.push(bn2.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::resnet::conv::{from_hwc, to_hwc};
    use ntk_model::ResNet;
    use ntk_model::{ResNetConfig, ResNetVariant};

    fn net(variant: ResNetVariant) -> HostResNet<f32> {
        let cfg = ResNetConfig::example(8, variant);
        let device = burn::tensor::Device::flex();
        let r = ResNet::new(&cfg, &device, burn::tensor::DType::F32).expect("a ResNet-8");
        HostResNet::read(&r)
    }

    #[test]
    fn the_device_order_is_a_permutation_that_transposes_the_convolutions() {
        for v in [ResNetVariant::BatchNorm, ResNetVariant::Fixup] {
            let h = net(v);
            let order = device_order(&h);
            let mut seen = order.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..h.num_params()).collect::<Vec<_>>(), "{v:?}");
            let host: Vec<f64> = (0..h.num_params()).map(|i| i as f64).collect();
            let dev = to_device(&host, &order);
            // Each convolution's slot on the device is Burn's [c_out, c_in, 3, 3] order.
            let s = h.stem_w;
            let (ci, co) = (h.stem.input.c, h.stem.output.c);
            assert_eq!(dev[s.range()], from_hwc(&host[s.range()], ci, co)[..]);
            assert_eq!(to_hwc(&dev[s.range()], ci, co), host[s.range()]);
            let b = &h.blocks[h.blocks.len() - 1];
            let (ci, co) = (b.conv2.input.c, b.conv2.output.c);
            assert_eq!(dev[b.w2.range()], from_hwc(&host[b.w2.range()], ci, co)[..]);
            // Everything else in place, and back again.
            assert_eq!(dev[h.head.w.range()], host[h.head.w.range()]);
            assert_eq!(to_host(&dev, &order), host);
        }
    }

    #[test]
    fn the_maps_are_those_of_the_trace_in_nchw() {
        let h = net(ResNetVariant::BatchNorm);
        let m = Maps::new(&h, 4);
        assert_eq!(m.input, 4 * 3 * 32 * 32);
        assert_eq!(m.stem, 4 * 16 * 32 * 32);
        assert_eq!(m.largest, m.stem);
        // ResNet-8: one block per stage; the last stage's maps are 64 x 8 x 8.
        assert_eq!(m.blocks.len(), 3);
        assert_eq!(m.blocks[2].y, 4 * 64 * 8 * 8);
        assert_eq!(m.blocks[2].e, 0);
        assert_eq!(m.pooled, 4 * 64);
        assert_eq!(m.logits, 4 * 10);
        let f = Maps::new(&net(ResNetVariant::Fixup), 4);
        // Fixup's downsampling block keeps its input xa = x + b1a (32 x 16 x 16 after 16 x 32 x 32).
        assert_eq!(f.blocks[1].a, 4 * 16 * 32 * 32);
        assert_eq!(f.blocks[1].e, 4 * 32 * 16 * 16);
        assert_eq!(batch_norms(&h).len(), 1 + 2 * 3);
        assert!(batch_norms(&net(ResNetVariant::Fixup)).is_empty());
    }
}
