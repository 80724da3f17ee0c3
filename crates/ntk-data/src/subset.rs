//! Choosing which samples to use: the first `n`, a class-balanced `n`, or a seeded random `n`.
//!
//! Each rule yields indices into the set; [`ImageSet::subset`] and [`Samples::subset`] apply
//! them. Asking for more samples than the set has is an error naming both numbers.

use std::fmt;
use std::str::FromStr;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{DataError, Result};
use crate::set::{ImageSet, Samples};

/// A rule selecting samples from a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Subset {
    /// Every sample, in order.
    All,
    /// The first `n` samples, in order.
    First {
        /// How many.
        n: usize,
    },
    /// `n / num_classes` samples of each class, the first ones in order of appearance; the
    /// remainder `n % num_classes` adds one more sample to each of the lowest classes. The
    /// chosen indices are returned in increasing order (the set's order is kept).
    Balanced {
        /// How many in total.
        n: usize,
    },
    /// `n` distinct samples drawn uniformly without replacement by a ChaCha8 stream seeded by
    /// `seed` (partial Fisher-Yates), in the order drawn.
    Random {
        /// How many.
        n: usize,
        /// The stream's seed.
        seed: u64,
    },
}

impl Subset {
    /// The indices this rule picks from a set with these labels.
    pub fn indices(&self, labels: &[u8], num_classes: usize) -> Result<Vec<usize>> {
        match *self {
            Self::All => Ok((0..labels.len()).collect()),
            Self::First { n } => first_indices(labels.len(), n),
            Self::Balanced { n } => balanced_indices(labels, num_classes, n),
            Self::Random { n, seed } => random_indices(labels.len(), n, seed),
        }
    }
}

impl fmt::Display for Subset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::All => write!(f, "all"),
            Self::First { n } => write!(f, "first:{n}"),
            Self::Balanced { n } => write!(f, "balanced:{n}"),
            Self::Random { n, seed } => write!(f, "random:{n}:{seed}"),
        }
    }
}

impl FromStr for Subset {
    type Err = DataError;

    /// Parses `all`, `first:N`, `balanced:N` or `random:N:SEED` (the [`Display`](fmt::Display)
    /// form).
    fn from_str(s: &str) -> Result<Self> {
        let bad = || DataError::UnknownName {
            what: "subset",
            given: s.to_string(),
            expected: "all, first:N, balanced:N or random:N:SEED".to_string(),
        };
        let parts: Vec<&str> = s.split(':').collect();
        let num = |i: usize| parts[i].parse::<u64>().map_err(|_| bad());
        match parts.as_slice() {
            ["all"] => Ok(Self::All),
            ["first", _] => Ok(Self::First {
                n: num(1)? as usize,
            }),
            ["balanced", _] => Ok(Self::Balanced {
                n: num(1)? as usize,
            }),
            ["random", _, _] => Ok(Self::Random {
                n: num(1)? as usize,
                seed: num(2)?,
            }),
            _ => Err(bad()),
        }
    }
}

fn check_count(what: &str, requested: usize, available: usize) -> Result<()> {
    if requested > available {
        return Err(DataError::NotEnoughSamples {
            what: what.to_string(),
            requested,
            available,
        });
    }
    Ok(())
}

/// `0..n`, checking `n <= total`.
pub fn first_indices(total: usize, n: usize) -> Result<Vec<usize>> {
    check_count("first-n subset", n, total)?;
    Ok((0..n).collect())
}

/// The class-balanced rule of [`Subset::Balanced`].
pub fn balanced_indices(labels: &[u8], num_classes: usize, n: usize) -> Result<Vec<usize>> {
    check_count("class-balanced subset", n, labels.len())?;
    if num_classes == 0 {
        return Err(DataError::NoClasses);
    }
    let (base, extra) = (n / num_classes, n % num_classes);
    let quota: Vec<usize> = (0..num_classes)
        .map(|c| base + usize::from(c < extra))
        .collect();
    let mut taken = vec![0usize; num_classes];
    let mut out = Vec::with_capacity(n);
    for (i, &l) in labels.iter().enumerate() {
        let c = usize::from(l);
        if c < num_classes && taken[c] < quota[c] {
            taken[c] += 1;
            out.push(i);
            if out.len() == n {
                break;
            }
        }
    }
    if let Some(class) = (0..num_classes).find(|&c| taken[c] < quota[c]) {
        return Err(DataError::NotEnoughInClass {
            class,
            requested: quota[class],
            available: taken[class],
        });
    }
    Ok(out)
}

/// The seeded random rule of [`Subset::Random`].
pub fn random_indices(total: usize, n: usize, seed: u64) -> Result<Vec<usize>> {
    check_count("random subset", n, total)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut idx: Vec<usize> = (0..total).collect();
    for i in 0..n {
        let j = rng.random_range(i..total);
        idx.swap(i, j);
    }
    idx.truncate(n);
    Ok(idx)
}

impl ImageSet {
    /// The samples a [`Subset`] rule picks.
    pub fn subset(&self, rule: &Subset) -> Result<Self> {
        self.select(&rule.indices(&self.labels, self.num_classes)?)
    }
}

impl Samples {
    /// The rows a [`Subset`] rule picks.
    pub fn subset(&self, rule: &Subset) -> Result<Self> {
        self.select(&rule.indices(&self.y, self.num_classes)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_takes_first_of_each_class_and_gives_remainder_to_low_classes() {
        let labels = [2, 0, 0, 1, 2, 1, 0, 2, 1, 1];
        // 7 = 2 per class + 1 extra for class 0.
        let idx = balanced_indices(&labels, 3, 7).unwrap();
        assert_eq!(idx, [0, 1, 2, 3, 4, 5, 6]);
        let idx = balanced_indices(&labels, 3, 9).unwrap();
        assert_eq!(idx, [0, 1, 2, 3, 4, 5, 6, 7, 8]);
        let counts = |idx: &[usize]| {
            let mut c = [0; 3];
            idx.iter().for_each(|&i| c[usize::from(labels[i])] += 1);
            c
        };
        assert_eq!(counts(&balanced_indices(&labels, 3, 5).unwrap()), [2, 2, 1]);
        // Class 0 has 3 samples, balanced 10 wants 4 of it.
        assert!(matches!(
            balanced_indices(&labels, 3, 10),
            Err(DataError::NotEnoughInClass {
                class: 0,
                requested: 4,
                available: 3
            })
        ));
    }

    #[test]
    fn random_is_deterministic_and_without_replacement() {
        let a = random_indices(100, 40, 7).unwrap();
        assert_eq!(a, random_indices(100, 40, 7).unwrap());
        assert_ne!(a, random_indices(100, 40, 8).unwrap());
        let mut s = a.clone();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), 40);
        assert!(s.iter().all(|&i| i < 100));
        let mut all = random_indices(10, 10, 0).unwrap();
        all.sort_unstable();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn first_and_parse() {
        assert_eq!(first_indices(5, 3).unwrap(), [0, 1, 2]);
        assert!(first_indices(5, 6).is_err());
        for rule in [
            Subset::All,
            Subset::First { n: 3 },
            Subset::Balanced { n: 100 },
            Subset::Random { n: 5, seed: 9 },
        ] {
            assert_eq!(rule.to_string().parse::<Subset>().unwrap(), rule);
        }
        assert!("first:x".parse::<Subset>().is_err());
        assert!("random:3".parse::<Subset>().is_err());
    }
}
