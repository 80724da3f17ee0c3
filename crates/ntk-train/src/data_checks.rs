//! What a run refuses of its data before anything is built: augmentation of anything but a
//! built-in set's images, labels beyond the network's outputs, and inputs beyond f32's range
//! in an f32 run (each would otherwise index past the logits or train on infinities).

use ntk_data::ImageAugment;
use ntk_model::NetSpec;

use crate::config::TrainConfig;
use crate::data::Data;

/// Refuses data the run cannot train on: augmentation of anything but a built-in set's
/// images, labels beyond the network's outputs (both engines would index past the logits),
/// then inputs beyond f32's range in an f32 run. Returns the augmentation, checked, when the
/// run augments.
pub(crate) fn check_inputs(
    cfg: &TrainConfig,
    spec: &NetSpec,
    data: &Data,
) -> crate::Result<Option<ImageAugment>> {
    let set = &data.train;
    let augment = if cfg.train.augment {
        let aug = ntk_data::inputs::augmentation(&cfg.data).map_err(|reason| {
            crate::Error::AugmentNeedsImages {
                reason: reason.to_string(),
            }
        })?;
        let [c, h, w] = aug.shape;
        if set.d != c * h * w {
            return Err(crate::Error::AugmentNeedsImages {
                reason: format!(
                    "{} has {} inputs, not {c}x{h}x{w} images",
                    set.description, set.d
                ),
            });
        }
        Some(aug)
    } else {
        None
    };
    check_labels(cfg, spec, data)?;
    check_f32_range(cfg, data)?;
    Ok(augment)
}

/// Refuses labels beyond the network's outputs (after `[prediction]`'s own check of the
/// training set's size).
fn check_labels(cfg: &TrainConfig, spec: &NetSpec, data: &Data) -> crate::Result<()> {
    let set = &data.train;
    crate::predict::check(cfg, set.n)?;
    let classes = spec.classes();
    let sets = || std::iter::once(set).chain(data.test.as_ref());
    // The set with the largest label, named in the message.
    if let Some((top, with)) = sets()
        .filter_map(|s| s.labels.iter().max().map(|t| (*t, s)))
        .max_by_key(|(t, _)| *t)
    {
        // One output under the square loss regresses on -1 / +1: two classes.
        if classes == 1 && cfg.train.loss == ntk_engine::loss::Loss::Mse {
            if top > 1 {
                // The key whose one output it is: an ONNX file's own width, not a
                // `model.output_dim` that `[onnx]` refuses (hundred-and-thirty-sixth hostile
                // round, second review, D3).
                let (key, value) = match spec {
                    NetSpec::Onnx(o) => (
                        "onnx.file",
                        format!(
                            "\"{}\" (1 output; {} has labels up to {top})",
                            o.file.path.display(),
                            with.description
                        ),
                    ),
                    _ => (
                        "model.output_dim",
                        format!("1 ({} has labels up to {top})", with.description),
                    ),
                };
                return Err(crate::Error::config(
                    key,
                    value,
                    "one output under train.loss = \"mse\" takes two classes (targets -1 and +1)",
                ));
            }
        } else if usize::from(top) >= classes {
            return Err(crate::Error::LabelsBeyondOutputs {
                key: spec.classes_key(),
                classes,
                data: with.description.clone(),
                top,
            });
        }
    }
    Ok(())
}

/// Refuses inputs beyond f32's range in an f32 run: they become infinities (and its loss NaN);
/// and a nonzero row whose every entry is below f32's smallest normal number: it becomes 0
/// or subnormal, and the run trains on zeros (hundred-and-thirty-first hostile round, second
/// review, D2: inputs scaled by 1e-160 trained at loss 0.5 exactly, rc 0). Underflow and
/// overflow alike, as ntk-probe treats them.
fn check_f32_range(cfg: &TrainConfig, data: &Data) -> crate::Result<()> {
    if cfg.train.precision != ntk_numerics::backend::Precision::F32 {
        return Ok(());
    }
    let sets = std::iter::once((&data.train, SetRole::Train))
        .chain(data.test.iter().map(|t| (t, SetRole::Test)));
    for (s, role) in sets {
        // The key and file of the set, and each row as the file counts it (a random
        // subset's sample 52 is named as the file's row 40: hundred-and-thirty-second hostile
        // round, D1 and its second review's N1).
        let named = || format!("{}: {}", role.name(cfg), s.description);
        if let Some(i) = s.x.iter().position(|v| v.abs() > f64::from(f32::MAX)) {
            return Err(crate::Error::BeyondF32 {
                data: named(),
                row: s.row_words(i / s.d.max(1)),
                column: i % s.d.max(1),
                value: s.x[i],
            });
        }
        for (row, x) in s.x.chunks(s.d.max(1)).enumerate() {
            let top = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            if top > 0.0 && top < f64::from(f32::MIN_POSITIVE) {
                return Err(crate::Error::UnderF32 {
                    data: named(),
                    row: s.row_words(row),
                    value: top,
                });
            }
        }
    }
    Ok(())
}

/// Which of a run's two sets a check speaks of.
#[derive(Clone, Copy)]
enum SetRole {
    Train,
    Test,
}

impl SetRole {
    /// The key that names the set's inputs (`data.x`, `data.test_x`) for the user's files;
    /// the split's words for a built-in or synthetic set.
    fn name(self, cfg: &TrainConfig) -> &'static str {
        let file = cfg.data.dataset == ntk_data::config::Dataset::File;
        match (self, file) {
            (SetRole::Train, true) => "data.x",
            (SetRole::Test, true) => "data.test_x",
            (SetRole::Train, false) => "the training set",
            (SetRole::Test, false) => "the held-out set",
        }
    }
}
