//! The probe's inputs: a data set, subset and scaling turned into the `n x d` matrix that is
//! fed to the network (and saved as `inputs.npy`).

use crate::{DataError, Result, Samples, Source, Subset};

use crate::config::{DataConfig, Dataset, SubsetRule};

/// Inputs as fed to the network, row-major f64 (exactly representable in f32 for image
/// data and the synthetic draw, which are made in f32).
#[derive(Clone, Debug)]
pub struct Inputs {
    pub x: Vec<f64>,
    pub n: usize,
    pub d: usize,
    pub labels: Vec<u8>,
    /// A one-line description for reports ("mnist train, balanced 2000, minus-one-one").
    pub description: String,
}

impl Inputs {
    pub fn from_samples(s: &Samples, description: String) -> Self {
        Self {
            x: s.x.iter().map(|&v| f64::from(v)).collect(),
            n: s.n,
            d: s.dim,
            labels: s.y.clone(),
            description,
        }
    }

    /// SHA-256 of the inputs and labels ([`ntk_runs::provenance::data_digest`]): what the
    /// provenance of a result records as `data.digest`.
    pub fn digest(&self) -> String {
        ntk_runs::provenance::data_digest(&self.x, self.n, self.d, &self.labels)
    }

    /// Rows `idx` as a new input set.
    pub fn select(&self, idx: &[usize]) -> Self {
        let mut x = Vec::with_capacity(idx.len() * self.d);
        for &i in idx {
            x.extend_from_slice(&self.x[i * self.d..(i + 1) * self.d]);
        }
        Self {
            x,
            n: idx.len(),
            d: self.d,
            labels: idx.iter().map(|&i| self.labels[i]).collect(),
            description: self.description.clone(),
        }
    }

    fn normalize_rows(&mut self) -> Result<()> {
        unit_rows(&mut self.x, self.d)
    }
}

/// Scales every row of the row-major `x` (rows of `d` values) to unit Euclidean norm
/// (`data.unit_norm`); a zero row is an error naming its index.
pub fn unit_rows(x: &mut [f64], d: usize) -> Result<()> {
    for (i, row) in x.chunks_mut(d).enumerate() {
        let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm == 0.0 {
            return Err(DataError::ZeroSample { index: i });
        }
        row.iter_mut().for_each(|v| *v /= norm);
    }
    Ok(())
}

/// The input dimension a `[data]` table gives, known before anything is loaded (for the
/// memory estimate): the synthetic `input_dim`, or the data set's image size.
pub fn expected_dim(cfg: &DataConfig) -> usize {
    match expected_shape(cfg) {
        None => cfg.input_dim.unwrap_or(5),
        Some([c, h, w]) => c * h * w,
    }
}

/// The images' `[channels, height, width]` of a data set (`None` for the synthetic set,
/// whose samples are vectors): what the config alone says, before any file is read.
pub fn expected_shape(cfg: &DataConfig) -> Option<[usize; 3]> {
    match cfg.dataset {
        Dataset::Synthetic => None,
        Dataset::Mnist | Dataset::FashionMnist => Some([1, 28, 28]),
        Dataset::Cifar10 => Some([3, 32, 32]),
        Dataset::Digits => Some([1, 8, 8]),
    }
}

/// The problems of a `[data]` table that the config alone shows (a scaling the images'
/// channels do not allow), each naming its key: what [`load`] would refuse after reading
/// the files.
pub fn check(cfg: &DataConfig) -> Vec<DataError> {
    let mut problems = Vec::new();
    if let (Some(scaling), Some([channels, _, _])) = (cfg.scaling, expected_shape(cfg))
        && let Err(e) = scaling.check_channels(channels)
    {
        problems.push(at_key("data.scaling", e));
    }
    problems
}

/// Loads the inputs a `[data]` table describes. Errors name the file or the key.
pub fn load(cfg: &DataConfig) -> Result<Inputs> {
    let mut inputs = match cfg.dataset {
        Dataset::Synthetic => {
            let d = cfg.input_dim.unwrap_or(5);
            let s = crate::gaussian(cfg.n, d, cfg.seed);
            Inputs::from_samples(
                &s,
                format!("synthetic N(0, I_{d}), n = {}, seed {}", cfg.n, cfg.seed),
            )
        }
        other => {
            let source = match other {
                Dataset::Mnist => Source::Mnist,
                Dataset::FashionMnist => Source::FashionMnist,
                Dataset::Cifar10 => Source::Cifar10,
                Dataset::Digits => Source::Digits,
                Dataset::Synthetic => unreachable!(),
            };
            let set = source.load(cfg.dir.as_deref(), cfg.split)?;
            if cfg.n > set.n {
                return Err(DataError::DataN {
                    n: cfg.n,
                    dataset: source.to_string(),
                    split: format!("{:?}", cfg.split),
                    available: set.n,
                });
            }
            let subset = match cfg.subset {
                SubsetRule::First => Subset::First { n: cfg.n },
                SubsetRule::Balanced => Subset::Balanced { n: cfg.n },
                SubsetRule::Random => Subset::Random {
                    n: cfg.n,
                    seed: cfg.seed,
                },
            };
            let idx = subset
                .indices(&set.labels, set.num_classes)
                .map_err(|e| at_key("data.subset", e))?;
            let picked = set.select(&idx)?;
            let scaling = cfg.scaling.unwrap_or(source.paper_scaling());
            let samples = scaling
                .apply(&picked)
                .map_err(|e| at_key("data.scaling", e))?;
            Inputs::from_samples(
                &samples,
                format!("{source} {:?}, {subset}, {}", cfg.split, scaling.name()).to_lowercase(),
            )
        }
    };
    if cfg.unit_norm {
        inputs.normalize_rows()?;
        inputs.description.push_str(", unit norm");
    }
    Ok(inputs)
}

/// An error of the data the config key `key` describes.
fn at_key(key: &'static str, e: DataError) -> DataError {
    DataError::Key {
        key,
        source: Box::new(e),
    }
}
