//! A CIFAR ResNet's tensors under the names of the project's PyTorch peer
//! (`experiments/train_bench/pytorch_resnet_step.py`, `ResNet`): `stem.weight`, the
//! batch_norm variant's `stem_bn.*` and `blocks.{i}.bn{1,2}.*` (`nn.BatchNorm2d`), Fixup's
//! `stem_bias`, `blocks.{i}.{bias1a, bias1b, bias2a, scale, bias2b}` and `head_bias`, every
//! block's `blocks.{i}.conv{1,2}.weight` (`[out, in, 3, 3]` as in PyTorch), and
//! `classifier.weight` (`[classes, features]`, PyTorch's `nn.Linear` layout: the transpose of
//! ours) with `classifier.bias`. See [`crate::export`].

use burn::module::Param;
use burn::tensor::Tensor;

use super::{Block, Conv3x3, ResNet};
use crate::error::ModelError;
use crate::export::{Get, Named, NamedTensor, batch_norm_tensors, batch_norm_with, like, values};

fn conv(name: String, c: &Conv3x3) -> NamedTensor {
    let w = c.weight.val();
    (name, w.dims().to_vec(), values(&w))
}

fn conv_with(mut c: Conv3x3, name: &str, get: Get<'_>) -> Result<Conv3x3, ModelError> {
    let w = c.weight.val();
    let dims = w.dims();
    c.weight = Param::from_tensor(like(&w, get(name, &dims)?, dims));
    Ok(c)
}

fn scalar(name: String, p: &Param<Tensor<1>>) -> NamedTensor {
    (name, vec![1], values(&p.val()))
}

fn scalar_with(
    p: &Param<Tensor<1>>,
    name: &str,
    get: Get<'_>,
) -> Result<Param<Tensor<1>>, ModelError> {
    let t = p.val();
    Ok(Param::from_tensor(like(&t, get(name, &[1])?, [1])))
}

impl Named for ResNet {
    fn tensors(&self) -> Vec<NamedTensor> {
        let mut out = vec![conv("stem.weight".into(), &self.stem)];
        if let Some(bn) = &self.stem_bn {
            out.extend(batch_norm_tensors("stem_bn", bn));
        }
        if let Some(b) = &self.stem_bias {
            out.push(scalar("stem_bias".into(), b));
        }
        for (i, block) in self.blocks.iter().enumerate() {
            let at = |n: &str| format!("blocks.{i}.{n}");
            match block {
                Block::BatchNorm(b) => {
                    out.push(conv(at("conv1.weight"), &b.conv1));
                    out.extend(batch_norm_tensors(&at("bn1"), &b.bn1));
                    out.push(conv(at("conv2.weight"), &b.conv2));
                    out.extend(batch_norm_tensors(&at("bn2"), &b.bn2));
                }
                Block::NormRelu(b) => {
                    out.push(conv(at("conv1.weight"), &b.conv1));
                    out.push(conv(at("conv2.weight"), &b.conv2));
                }
                Block::Fixup(b) => {
                    out.push(scalar(at("bias1a"), &b.bias1a));
                    out.push(conv(at("conv1.weight"), &b.conv1));
                    out.push(scalar(at("bias1b"), &b.bias1b));
                    out.push(scalar(at("bias2a"), &b.bias2a));
                    out.push(conv(at("conv2.weight"), &b.conv2));
                    out.push(scalar(at("scale"), &b.scale));
                    out.push(scalar(at("bias2b"), &b.bias2b));
                }
            }
        }
        if let Some(b) = &self.head_bias {
            out.push(scalar("head_bias".into(), b));
        }
        let w = self.classifier.weight.val();
        let [features, classes] = w.dims();
        let wt = crate::init::transpose(&values(&w), features, classes);
        out.push(("classifier.weight".into(), vec![classes, features], wt));
        out.push(scalar_like("classifier.bias", &self.classifier.bias));
        out
    }

    fn with_tensors(mut self, get: Get<'_>) -> Result<Self, ModelError> {
        self.stem = conv_with(self.stem, "stem.weight", get)?;
        if let Some(bn) = self.stem_bn.take() {
            self.stem_bn = Some(batch_norm_with(bn, "stem_bn", get)?);
        }
        if let Some(b) = &self.stem_bias {
            self.stem_bias = Some(scalar_with(b, "stem_bias", get)?);
        }
        let blocks = std::mem::take(&mut self.blocks);
        for (i, block) in blocks.into_iter().enumerate() {
            let at = |n: &str| format!("blocks.{i}.{n}");
            self.blocks.push(match block {
                Block::BatchNorm(mut b) => {
                    b.conv1 = conv_with(b.conv1, &at("conv1.weight"), get)?;
                    b.bn1 = batch_norm_with(b.bn1, &at("bn1"), get)?;
                    b.conv2 = conv_with(b.conv2, &at("conv2.weight"), get)?;
                    b.bn2 = batch_norm_with(b.bn2, &at("bn2"), get)?;
                    Block::BatchNorm(b)
                }
                Block::NormRelu(mut b) => {
                    b.conv1 = conv_with(b.conv1, &at("conv1.weight"), get)?;
                    b.conv2 = conv_with(b.conv2, &at("conv2.weight"), get)?;
                    Block::NormRelu(b)
                }
                Block::Fixup(mut b) => {
                    b.bias1a = scalar_with(&b.bias1a, &at("bias1a"), get)?;
                    b.conv1 = conv_with(b.conv1, &at("conv1.weight"), get)?;
                    b.bias1b = scalar_with(&b.bias1b, &at("bias1b"), get)?;
                    b.bias2a = scalar_with(&b.bias2a, &at("bias2a"), get)?;
                    b.conv2 = conv_with(b.conv2, &at("conv2.weight"), get)?;
                    b.scale = scalar_with(&b.scale, &at("scale"), get)?;
                    b.bias2b = scalar_with(&b.bias2b, &at("bias2b"), get)?;
                    Block::Fixup(b)
                }
            });
        }
        if let Some(b) = &self.head_bias {
            self.head_bias = Some(scalar_with(b, "head_bias", get)?);
        }
        let w = self.classifier.weight.val();
        let [features, classes] = w.dims();
        let wt = get("classifier.weight", &[classes, features])?;
        let ours = crate::init::transpose(&wt, classes, features);
        self.classifier.weight = Param::from_tensor(like(&w, ours, [features, classes]));
        let b = self.classifier.bias.val();
        self.classifier.bias =
            Param::from_tensor(like(&b, get("classifier.bias", &[classes])?, [classes]));
        Ok(self)
    }

    fn config_json(&self) -> String {
        serde_json::to_string(self.config()).expect("config serializes")
    }

    /// The peer's `num_batches_tracked` of every BatchNorm and `gain` of every convolution
    /// with the border gain.
    fn derived(&self) -> Vec<String> {
        let mut out = Vec::new();
        let gain = |out: &mut Vec<String>, name: String, c: &Conv3x3| {
            if c.border_gain {
                out.push(format!("{name}.gain"));
            }
        };
        gain(&mut out, "stem".into(), &self.stem);
        if self.stem_bn.is_some() {
            out.push("stem_bn.num_batches_tracked".into());
        }
        for (i, block) in self.blocks.iter().enumerate() {
            let (c1, c2) = match block {
                Block::BatchNorm(b) => {
                    out.push(format!("blocks.{i}.bn1.num_batches_tracked"));
                    out.push(format!("blocks.{i}.bn2.num_batches_tracked"));
                    (&b.conv1, &b.conv2)
                }
                Block::NormRelu(b) => (&b.conv1, &b.conv2),
                Block::Fixup(b) => (&b.conv1, &b.conv2),
            };
            gain(&mut out, format!("blocks.{i}.conv1"), c1);
            gain(&mut out, format!("blocks.{i}.conv2"), c2);
        }
        out
    }
}

fn scalar_like(name: &str, p: &Param<Tensor<1>>) -> NamedTensor {
    let v = values(&p.val());
    (name.to_string(), vec![v.len()], v)
}
