//! What a training config may hold, checked before any work: each section's values and
//! ranges, the keys that do not apply to the network or the data, and the problems a
//! config has reported at once ([`TrainConfig::problems`]); warnings for values that run but
//! are likely mistakes.

use super::*;

impl TrainConfig {
    /// What the config lets through but a researcher should hear: a warm-up the run never
    /// leaves, a decay it never reaches ([`crate::schedule::ScheduleConfig::warnings`]); a
    /// seed axis whose runs are one run (an ONNX network's weights are its file's, and a
    /// full batch without augmentation has no order for the seed to draw: eighty-seventh
    /// hostile round, N8, where `best.csv` counted the copies as independent seeds).
    pub fn warnings(&self) -> Vec<String> {
        let (per_epoch, total, _) = self.step_counts(self.data.n);
        let mut warnings = self.schedule.warnings(total, per_epoch);
        let seeds = self.sweep.as_ref().map_or(0, |s| s.seeds.len());
        if self.onnx.is_some()
            && seeds > 1
            && self.train.batch_size >= self.data.n
            && !self.train.augment
        {
            warnings.push(format!(
                "sweep.seeds lists {seeds} seeds for an ONNX network (its weights are the \
                 file's) trained in full batches (train.batch_size {} >= data.n {}, no \
                 augmentation): a seed orders only the data, which a full batch does not, so \
                 every seed's run is the same run, and best.csv and compare.csv count its \
                 copies as independent seeds",
                self.train.batch_size, self.data.n
            ));
        }
        warnings
    }

    /// Checks values the types cannot, and what the config alone says of its data and
    /// network together (what a run would refuse after reading the files); every problem is
    /// reported at once ([`crate::Error::Problems`]), each naming its key and value.
    pub fn validate(&self) -> crate::Result<()> {
        let mut problems = self.problems();
        match problems.len() {
            0 => Ok(()),
            1 => Err(problems.remove(0)),
            _ => Err(crate::Error::Problems(problems)),
        }
    }

    /// [`Self::validate`] for a config as the user wrote it (its `[sweep]` included), where
    /// a key may apply to some points of a sweep only: `optim.scalar_lr_scale` applies when
    /// a network the config trains is a Fixup ResNet: the base's variant, or where
    /// `sweep.variants` replaces it, one of those (only Fixup has scalars: elsewhere the key
    /// changed nothing but the runs' fingerprints; fourteenth hostile round, D11; a Fixup
    /// base swept over other variants took it: sixty-fifth, D1). The sweep's other points
    /// leave it out ([`crate::sweep::expand`]); each point is checked by [`Self::validate`].
    pub fn validate_as_written(&self) -> crate::Result<()> {
        self.validate()?;
        let Some(r) = &self.resnet else {
            return Ok(());
        };
        let swept = self.sweep.iter().flat_map(|s| &s.variants);
        let fixup = match swept.clone().next() {
            Some(_) => swept.clone().any(|v| *v == ResNetVariant::Fixup),
            None => r.variant == ResNetVariant::Fixup,
        };
        if self.optim.scalar_lr_scale != 1.0 && !fixup {
            return Err(crate::Error::config(
                "optim.scalar_lr_scale",
                self.optim.scalar_lr_scale,
                "applies to the scalar biases and multipliers of Fixup ResNets; the \
                 networks it trains (resnet.variant, or sweep.variants where listed) are \
                 no Fixup ResNet",
            ));
        }
        Ok(())
    }

    /// Every problem of the config, in the order of its tables (the first of each check).
    pub fn problems(&self) -> Vec<crate::Error> {
        let data_n = match self.data.n {
            0 => Err(crate::Error::config(
                "data.n",
                0,
                "need at least one training sample",
            )),
            _ => Ok(()),
        };
        let mut problems: Vec<crate::Error> = [
            self.validate_optim(),
            self.validate_train(),
            data_n,
            self.validate_ntk(),
            self.validate_representations(),
            self.validate_prediction(),
            self.validate_sweep(),
            self.schedule.validate(),
            self.validate_min_lr(),
            self.validate_onnx(),
            self.validate_net_as_swept(),
        ]
        .into_iter()
        .filter_map(Result::err)
        .collect();
        problems.extend(self.input_problems());
        problems
    }

    /// What the data set's images and the network say of each other before any file is
    /// read: a scaling the images' channels do not allow, augmentation of anything but a
    /// built-in set's images, a network whose input is not the images' size.
    fn input_problems(&self) -> Vec<crate::Error> {
        let mut problems: Vec<crate::Error> = ntk_data::inputs::check(&self.data)
            .into_iter()
            .map(Into::into)
            .collect();
        if self.data.dataset == ntk_data::Dataset::File && self.data.labels.is_none() {
            problems.push(crate::Error::Missing {
                key: "data.labels",
                why: "training needs a label (an integer class) per row of data.x",
            });
        }
        // What the data's headers say; when they cannot be read, `check` said why.
        let (Ok(shape), Ok(dim)) = (
            ntk_data::inputs::expected_shape(&self.data),
            ntk_data::inputs::expected_dim(&self.data),
        ) else {
            return problems;
        };
        let dataset = self.data.dataset.name();
        if self.train.augment
            && let Err(reason) = ntk_data::inputs::augmentation(&self.data)
        {
            problems.push(crate::Error::AugmentNeedsImages {
                reason: reason.to_string(),
            });
        }
        if let Ok(spec) = self.spec() {
            let what = format!("data.dataset = \"{dataset}\"");
            if let Err(e) = spec.check_input_dim(dim, &what) {
                problems.push(e.into());
            } else if let Some(shape) = shape
                && let Err(e) = spec.check_image_shape(shape, &what)
            {
                problems.push(e.into());
            }
        }
        problems
    }

    fn validate_optim(&self) -> crate::Result<()> {
        let o = &self.optim;
        if !(o.lr.is_finite() && o.lr > 0.0) {
            return Err(crate::Error::config(
                "optim.lr",
                o.lr,
                "must be positive and finite",
            ));
        }
        if !(0.0..1.0).contains(&o.momentum) {
            return Err(crate::Error::config(
                "optim.momentum",
                o.momentum,
                "must be in [0, 1)",
            ));
        }
        if o.nesterov && o.momentum == 0.0 {
            return Err(crate::Error::Needs {
                key: "optim.nesterov",
                value: "true",
                needs: "optim.momentum > 0",
            });
        }
        if !(o.weight_decay.is_finite() && o.weight_decay >= 0.0) {
            return Err(crate::Error::config(
                "optim.weight_decay",
                o.weight_decay,
                "must be non-negative and finite",
            ));
        }
        if !(o.scalar_lr_scale.is_finite() && o.scalar_lr_scale > 0.0) {
            return Err(crate::Error::config(
                "optim.scalar_lr_scale",
                o.scalar_lr_scale,
                "must be positive and finite",
            ));
        }
        for (key, v) in [
            ("optim.lr", o.lr),
            ("optim.weight_decay", o.weight_decay),
            ("optim.scalar_lr_scale", o.scalar_lr_scale),
            ("optim.lr * optim.scalar_lr_scale", o.lr * o.scalar_lr_scale),
        ] {
            self.check_representable(key, v)?;
        }
        Ok(())
    }

    /// A nonzero setting the training precision holds as a normal number: below its smallest
    /// normal an `optim.lr` of 1e-50 was 0 in f32 and the run trained with a constant loss,
    /// no word said (round 22's N6); above f32's largest it is infinite.
    fn check_representable(&self, key: &'static str, v: f64) -> crate::Result<()> {
        let (smallest, largest, below, above) = match self.train.precision {
            Precision::F32 => (
                f64::from(f32::MIN_POSITIVE),
                f64::from(f32::MAX),
                "is below f32's smallest normal number (1.18e-38): 0 or losing its digits in \
                 f32 training (train.precision = \"f32\"; f64 holds it)",
                "is above f32's largest number (3.4e38): infinite in f32 training \
                 (train.precision = \"f32\")",
            ),
            Precision::F64 => (
                f64::MIN_POSITIVE,
                f64::MAX,
                "is below f64's smallest normal number (2.2e-308): 0 or losing its digits",
                "is not finite",
            ),
        };
        match v {
            0.0 => Ok(()),
            v if v < smallest => Err(crate::Error::config(key, v, below)),
            v if v > largest => Err(crate::Error::config(key, v, above)),
            _ => Ok(()),
        }
    }

    fn validate_train(&self) -> crate::Result<()> {
        let t = &self.train;
        let at_least_one = |key, v: usize| match v {
            0 => Err(crate::Error::config(key, 0, "must be at least 1")),
            _ => Ok(()),
        };
        at_least_one("train.batch_size", t.batch_size)?;
        self.validate_batch_norm_batches()?;
        match (t.epochs, t.iterations) {
            (Some(0), _) => at_least_one("train.epochs", 0)?,
            (_, Some(0)) => at_least_one("train.iterations", 0)?,
            (Some(_), Some(_)) => {
                return Err(crate::Error::Exclusive {
                    keys: "train.epochs and train.iterations",
                    reason: "give one, not both",
                });
            }
            (None, None) => {
                return Err(crate::Error::Missing {
                    key: "train",
                    why: "give epochs or iterations",
                });
            }
            _ => {}
        }
        // Step counts (epochs x steps per epoch) must not overflow; no run is this long.
        if let Some(e) = t.epochs.filter(|e| *e > MAX_EPOCHS) {
            return Err(crate::Error::config(
                "train.epochs",
                e,
                "must be at most 1e9",
            ));
        }
        if let Some(i) = t.iterations.filter(|i| *i > MAX_ITERATIONS) {
            return Err(crate::Error::config(
                "train.iterations",
                i,
                "must be at most 1e12",
            ));
        }
        at_least_one("train.eval_every", t.eval_every)?;
        // Its default (1) is recorded in every run's config.toml, so only another value is
        // the user's and does not apply without a test set (eighth hostile round, A01).
        if t.eval_every > 1 && t.test_n == 0 {
            return Err(crate::Error::config(
                "train.eval_every",
                t.eval_every,
                "does not apply: train.test_n = 0, so no test set is evaluated",
            ));
        }
        at_least_one("train.checkpoint_every", t.checkpoint_every)?;
        if !(t.divergence_factor.is_finite() && t.divergence_factor > 1.0) {
            return Err(crate::Error::config(
                "train.divergence_factor",
                t.divergence_factor,
                "must be a finite number above 1 (the multiple of the initial loss at which a \
                 run counts as diverged)",
            ));
        }
        Ok(())
    }

    /// A cosine schedule decays from each run's lr to `schedule.min_lr`: a floor above the
    /// lr would raise the rate instead.
    fn validate_min_lr(&self) -> crate::Result<()> {
        if self.schedule.kind != crate::schedule::ScheduleKind::Cosine {
            return Ok(());
        }
        // The sweep's lrs replace optim.lr when listed.
        let lrs = self.sweep.as_ref().map_or(&[][..], |s| &s.lrs[..]);
        let lowest = match lrs {
            [] => self.optim.lr,
            _ => lrs.iter().copied().fold(f64::INFINITY, f64::min),
        };
        if self.schedule.min_lr > lowest {
            return Err(crate::Error::MinLrAboveLr {
                min_lr: self.schedule.min_lr,
                lr: lowest,
            });
        }
        Ok(())
    }

    fn validate_ntk(&self) -> crate::Result<()> {
        let Some(k) = &self.ntk else {
            return Ok(());
        };
        if k.every == 0 {
            return Err(crate::Error::config("ntk.every", 0, "must be at least 1"));
        }
        if k.n < 2 || k.n > self.data.n {
            return Err(crate::Error::OutOfRange {
                key: "ntk.n",
                value: k.n,
                bound_key: "data.n",
                bound: self.data.n,
                why: "",
            });
        }
        if let (OutputMode::Single(output), Ok(spec)) = (k.output, self.spec())
            && output >= spec.classes()
        {
            return Err(crate::Error::OutputBeyond {
                output,
                outputs: spec.classes(),
                classes_key: spec.classes_key(),
            });
        }
        if let (Some(stats), Ok(spec)) = (k.batch_norm_statistics, self.spec())
            && !spec.has_batch_norm()
        {
            return Err(crate::Error::config(
                "ntk.batch_norm_statistics",
                stats,
                "only for BatchNorm networks (model.normalization = \"batch_norm\", \
                 resnet.variant = \"batch_norm\")",
            ));
        }
        Ok(())
    }

    /// `[prediction]`: at least one kernel, none twice.
    fn validate_prediction(&self) -> crate::Result<()> {
        let Some(p) = &self.prediction else {
            return Ok(());
        };
        let listed = || {
            let names: Vec<String> = p
                .kernels
                .iter()
                .map(|k| format!("\"{}\"", k.name()))
                .collect();
            format!("[{}]", names.join(", "))
        };
        if p.kernels.is_empty() {
            return Err(crate::Error::config(
                "prediction.kernels",
                listed(),
                "name at least one kernel: \"empirical\", \"theory\" (or leave the key out for \"empirical\")",
            ));
        }
        let twice = (1..p.kernels.len()).any(|i| p.kernels[..i].contains(&p.kernels[i]));
        if twice {
            return Err(crate::Error::config(
                "prediction.kernels",
                listed(),
                "a kernel is listed twice: each kernel predicts once",
            ));
        }
        // The run it predicts (the square loss, full batch, plain gradient descent), at
        // load rather than after the run started (issue 65 item 15).
        crate::predict::check(self, self.data.n)?;
        self.validate_predicted_network(&listed())
    }

    /// The network `[prediction]` linearizes must be the one that trains: BatchNorm
    /// normalizes full-batch training by the batch's statistics, the linearization by its
    /// running ones (evaluation mode; measured: 17.84 predicted against 0.514 before any
    /// step), so BatchNorm networks are refused (issue 65 item 5). The infinite-width kernel
    /// covers the MLPs of `ntk_kernel::theory` only; its refusal names `prediction.kernels`.
    fn validate_predicted_network(&self, listed: &str) -> crate::Result<()> {
        let Some(p) = &self.prediction else {
            return Ok(());
        };
        let Ok(spec) = self.spec() else {
            // No network or two: validate_net says so.
            return Ok(());
        };
        if spec.has_batch_norm() {
            let (key, reason) = match spec {
                NetSpec::Mlp(_) => (
                    "model.normalization",
                    "[prediction] linearizes the network in evaluation mode (BatchNorm's \
                     running statistics), but full-batch training normalizes by the batch's \
                     own: the prediction would describe another network. Leave [prediction] \
                     out, or predict an MLP with normalization = \"layer_norm\" or \"none\"",
                ),
                NetSpec::ResNet(_) => (
                    "resnet.variant",
                    "[prediction] linearizes the network in evaluation mode (BatchNorm's \
                     running statistics), but full-batch training normalizes by the batch's \
                     own: the prediction would describe another network. Leave [prediction] \
                     out, or predict a ResNet with variant = \"norm_relu\", \"fixup\", \
                     \"selu\" or \"normalized\"",
                ),
                // Refused when read (`ntk_onnx::OnnxFile::check_trainable`); named all the
                // same.
                NetSpec::Onnx(_) => (
                    "onnx.file",
                    "[prediction] linearizes the network in evaluation mode, but training \
                     normalizes by the batch's own statistics: leave [prediction] out",
                ),
            };
            return Err(crate::Error::config(
                key,
                format!("\"{}\" with [prediction]", spec.normalization_name()),
                reason,
            ));
        }
        if !p.kernels.contains(&PredictKernel::Theory) {
            return Ok(());
        }
        let NetSpec::Mlp(mlp) = spec else {
            return Err(crate::Error::config(
                "prediction.kernels",
                listed,
                "the infinite-width kernel (\"theory\") is written for MLPs, not ResNets or \
                 ONNX graphs: use kernels = [\"empirical\"]",
            ));
        };
        let one = ntk_model::MlpConfig {
            output_dim: 1,
            ..mlp
        };
        match ntk_kernel::theory::Scaling::of(&one) {
            Ok(_) | Err(ntk_kernel::theory::NotCovered::UnknownInputDim) => Ok(()),
            Err(reason) => Err(crate::Error::config(
                "prediction.kernels",
                format!("{listed} ({reason})"),
                "the infinite-width kernel (\"theory\") does not cover this network; use \
                 kernels = [\"empirical\"]",
            )),
        }
    }

    fn validate_representations(&self) -> crate::Result<()> {
        let Some(r) = &self.representations else {
            return Ok(());
        };
        if r.every == 0 {
            return Err(crate::Error::config(
                "representations.every",
                0,
                "must be at least 1",
            ));
        }
        let test_n = self.train.test_n;
        if r.n < 2 || r.n > test_n {
            return Err(crate::Error::OutOfRange {
                key: "representations.n",
                value: r.n,
                bound_key: "train.test_n",
                bound: test_n,
                why: ", the test inputs whose representations are compared",
            });
        }
        Ok(())
    }

    fn validate_sweep(&self) -> crate::Result<()> {
        let Some(s) = &self.sweep else {
            return Ok(());
        };
        // A ResNet's axes, refused as such before its base network is built, whose own
        // refusal asked for a `resnet.activation` that the next one refused
        // (hundred-and-thirty-sixth hostile round, D2).
        if let Some(r) = &self.resnet {
            if !s.families.is_empty() {
                return Err(crate::Error::config(
                    "sweep.families",
                    format!("[{} families]", s.families.len()),
                    "MLP only: a ResNet's normalization follows resnet.variant (sweep over \
                     sweep.variants), and only variant \"normalized\" takes an activation \
                     (sweep over sweep.activations)",
                ));
            }
            // The base's `normalized`, which every run replaces: its activation was asked
            // for, then refused at the first point (hundred-and-thirty-seventh hostile round,
            // D2).
            if r.variant == ResNetVariant::Normalized
                && !s.variants.is_empty()
                && !s.variants.contains(&ResNetVariant::Normalized)
            {
                return Err(crate::Error::config(
                    "resnet.variant",
                    "\"normalized\"",
                    "is replaced at every run by sweep.variants, which does not list it: give \
                     resnet.variant one of the swept variants, without resnet.activation (only \
                     \"normalized\" takes one)",
                ));
            }
            let variants = match s.variants.is_empty() {
                true => vec![r.variant],
                false => s.variants.clone(),
            };
            let normalized = |v: &ResNetVariant| *v == ResNetVariant::Normalized;
            if variants.iter().any(normalized) && !variants.iter().all(normalized) {
                let names: Vec<String> = variants
                    .iter()
                    .map(|v| format!("\"{}\"", ntk_names::name(v)))
                    .collect();
                return Err(crate::Error::config(
                    "sweep.variants",
                    format!("[{}]", names.join(", ")),
                    "lists \"normalized\", which takes resnet.activation, beside variants that \
                     refuse it (each runs its own activation): sweep \"normalized\" alone (its \
                     activations over sweep.activations) and the others in a sweep of their own",
                ));
            }
        }
        let pair_axes = !s.activations.is_empty() || !s.normalizations.is_empty();
        if !s.families.is_empty() && pair_axes {
            return Err(crate::Error::Exclusive {
                keys: "sweep.families",
                reason: "replaces sweep.activations and sweep.normalizations: give families \
                         alone",
            });
        }
        if let Some(lr) = s.lrs.iter().find(|lr| !(lr.is_finite() && **lr > 0.0)) {
            return Err(crate::Error::config(
                "sweep.lrs",
                lr,
                "not a positive learning rate",
            ));
        }
        // A value listed twice would be one run directory for two points. The message
        // spells the value as the file does (it read `lists None twice` for "none" and
        // `lists (Relu, None) twice` for a family: Rust's names, twelfth hostile round).
        let lrs: Vec<String> = s.lrs.iter().map(|lr| lr_tag(*lr)).collect();
        if let Some((first, again)) = twice_at(&lrs) {
            let (a, b) = (s.lrs[first], s.lrs[again]);
            return Err(crate::Error::ListedTwice {
                key: "sweep.lrs",
                value: if a == b {
                    format!("{a}")
                } else {
                    format!("{a} and {b} (one run directory, lr{})", lrs[first])
                },
            });
        }
        twice("sweep.depths", &s.depths)?;
        twice("sweep.seeds", &s.seeds)?;
        twice("sweep.activations", &s.activations)?;
        twice("sweep.normalizations", &s.normalizations)?;
        twice("sweep.variants", &s.variants)?;
        if let Some((_, again)) = twice_at(&s.families) {
            let f = s.families[again];
            return Err(crate::Error::ListedTwice {
                key: "sweep.families",
                value: format!(
                    "{{ activation = {}, normalization = {} }}",
                    spelled(&f.activation),
                    spelled(&f.normalization)
                ),
            });
        }
        Ok(())
    }

    /// The keys of a config with `[onnx]` that do not apply to a network read from a file,
    /// all named in one error: another network table, the sweep axes that change an
    /// architecture, what only MLPs and ResNets have (their representations by layer, the
    /// infinite-width kernel, Fixup's scalars, BatchNorm's statistics: a BatchNorm graph is
    /// refused when it is read).
    fn validate_onnx(&self) -> crate::Result<()> {
        if self.onnx.is_none() {
            return Ok(());
        }
        let axes = self.sweep.clone().unwrap_or_default();
        let theory = self
            .prediction
            .as_ref()
            .is_some_and(|p| p.kernels.contains(&PredictKernel::Theory));
        let present = [
            ("model", self.model.is_some()),
            ("resnet", self.resnet.is_some()),
            ("sweep.depths", !axes.depths.is_empty()),
            ("sweep.activations", !axes.activations.is_empty()),
            ("sweep.normalizations", !axes.normalizations.is_empty()),
            ("sweep.families", !axes.families.is_empty()),
            ("sweep.variants", !axes.variants.is_empty()),
            ("representations", self.representations.is_some()),
            ("prediction.kernels = \"theory\"", theory),
            ("optim.scalar_lr_scale", self.optim.scalar_lr_scale != 1.0),
            (
                "ntk.batch_norm_statistics",
                self.ntk
                    .as_ref()
                    .is_some_and(|k| k.batch_norm_statistics.is_some()),
            ),
        ];
        let keys: Vec<&str> = present
            .iter()
            .filter(|(_, here)| *here)
            .map(|(key, _)| *key)
            .collect();
        match keys.as_slice() {
            [] => Ok(()),
            _ => Err(crate::Error::NotForOnnx(keys.join(", "))),
        }
    }

    /// An MLP with BatchNorm normalizes each feature over the batch: a batch of one sample
    /// is its own mean, every normalized value 0, and such steps train nothing (fourteenth
    /// hostile round, D12: the loss stayed ln 3 at every epoch without a word). Refused for
    /// `train.batch_size = 1` and for a last batch of one (`data.n` one more than a multiple
    /// of the batch size), for the base network and every normalization a sweep names. (A
    /// ResNet's BatchNorm takes each channel over the pixels too: one image is enough.)
    fn validate_batch_norm_batches(&self) -> crate::Result<()> {
        let Some(m) = &self.model else { return Ok(()) };
        let axes = self.sweep.clone().unwrap_or_default();
        let batch_norm = std::iter::once(m.normalization)
            .chain(axes.normalizations.iter().copied())
            .chain(axes.families.iter().map(|f| f.normalization))
            .any(|n| n == Normalization::BatchNorm);
        if !batch_norm || m.depth == 0 {
            return Ok(());
        }
        let b = self.train.batch_size;
        if b == 1 {
            return Err(crate::Error::config(
                "train.batch_size",
                1,
                "BatchNorm (model.normalization = \"batch_norm\") normalizes each feature over \
                 the batch: one sample is its own mean, so every normalized value is 0 and the \
                 step trains nothing; use 2 or more",
            ));
        }
        if b > 1 && self.data.n > b && self.data.n % b == 1 {
            return Err(crate::Error::config(
                "train.batch_size",
                b,
                "leaves a last batch of one sample (data.n is one more than a multiple of it): \
                 BatchNorm (model.normalization = \"batch_norm\") normalizes each feature over \
                 the batch, so that step's normalized values are all 0; choose a batch size \
                 that leaves no batch of one",
            ));
        }
        Ok(())
    }

    /// [`Self::validate_net`] of the networks the config trains: where a sweep's
    /// activations (or families) replace the base's activation, a base whose own
    /// activation refuses it passes where one of the swept activations takes it (each point
    /// is checked with its own, [`crate::sweep::expand`]; hundred-and-forty-seventh hostile
    /// round, second review, D1: a base `activation = "relu"` beside
    /// `model.activation_param` was refused as "relu takes no parameter", though no point
    /// was ReLU). The base's own error otherwise.
    fn validate_net_as_swept(&self) -> crate::Result<()> {
        let own = self.validate_net();
        let swept: Vec<ActivationKind> = self
            .sweep
            .iter()
            .flat_map(|s| {
                s.activations
                    .iter()
                    .copied()
                    .chain(s.families.iter().map(|f| f.activation))
            })
            .collect();
        if own.is_ok() || swept.is_empty() {
            return own;
        }
        let with = |kind: ActivationKind| {
            let mut base = self.clone();
            if let Some(m) = base.model.as_mut() {
                m.activation = kind;
            } else if let Some(r) = base.resnet.as_mut()
                && r.activation.is_some()
            {
                r.activation = Some(kind);
            }
            base.validate_net()
        };
        match swept.into_iter().any(|kind| with(kind).is_ok()) {
            true => Ok(()),
            false => own,
        }
    }

    /// The network: a valid ResNet, and a classifier with two outputs or more.
    fn validate_net(&self) -> crate::Result<()> {
        let spec = self.spec()?;
        spec.validate()?;
        ntk_engine::check(
            self.train.engine,
            &spec,
            self.train.precision,
            self.train.fp32_precision,
        )?;
        match spec {
            // The square loss regresses a one-output network on +-1 (two classes).
            NetSpec::Mlp(m) if m.output_dim == 1 && self.train.loss == Loss::Mse => Ok(()),
            // A file set without labels: its missing `data.labels` is the problem (reported by
            // `input_problems`), not the one output the classes would have replaced.
            NetSpec::Mlp(_)
                if self.data.dataset == ntk_data::Dataset::File && self.data.labels.is_none() =>
            {
                Ok(())
            }
            NetSpec::Mlp(m) if m.output_dim < 2 => Err(crate::Error::config(
                "model.output_dim",
                m.output_dim,
                "classification needs one output per class (or 1 with train.loss = \"mse\" on \
                 two classes: targets -1 and +1)",
            )),
            NetSpec::ResNet(r) => {
                if r.num_classes < 2 {
                    return Err(crate::Error::config(
                        "resnet.num_classes",
                        r.num_classes,
                        "classification needs two classes or more",
                    ));
                }
                Ok(())
            }
            NetSpec::Mlp(_) if self.optim.scalar_lr_scale != 1.0 => Err(crate::Error::config(
                "optim.scalar_lr_scale",
                self.optim.scalar_lr_scale,
                "applies to the scalar biases and multipliers of Fixup ResNets; an MLP has none",
            )),
            NetSpec::Mlp(_) => Ok(()),
            // The square loss regresses a one-output network on +-1 (two classes).
            NetSpec::Onnx(o) if o.outputs == 1 && self.train.loss == Loss::Mse => Ok(()),
            NetSpec::Onnx(o) if o.outputs < 2 => Err(crate::Error::config(
                "onnx.file",
                format!("\"{}\" ({} output)", o.file.path.display(), o.outputs),
                "classification needs one output per class (or 1 with train.loss = \"mse\" on \
                 two classes: targets -1 and +1)",
            )),
            NetSpec::Onnx(_) => Ok(()),
        }
    }
}

/// The most epochs (and iterations) a run may ask for: beyond, step counts could overflow.
const MAX_EPOCHS: usize = 1_000_000_000;

const MAX_ITERATIONS: usize = 1_000_000_000_000;

/// Refuses a sweep axis that lists a value twice.
fn twice<T: PartialEq + serde::Serialize>(key: &'static str, values: &[T]) -> crate::Result<()> {
    match twice_at(values) {
        Some((_, again)) => Err(crate::Error::ListedTwice {
            key,
            value: spelled(&values[again]),
        }),
        None => Ok(()),
    }
}

/// The first value listed again: (its first index, the index of the repeat).
fn twice_at<T: PartialEq>(values: &[T]) -> Option<(usize, usize)> {
    (0..values.len()).find_map(|i| {
        values[..i]
            .iter()
            .position(|v| *v == values[i])
            .map(|first| (first, i))
    })
}

/// A value as a config file spells it (`"relu"`, `"none"`, `3`).
fn spelled<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "?".into())
}
