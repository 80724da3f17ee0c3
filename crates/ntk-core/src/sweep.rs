//! What both tools' sweeps share: the bound on a sweep's size and the shard a process
//! runs (`--shard i/N`).

/// The most points one sweep may expand to.
pub const MAX_POINTS: usize = 100_000;

/// `i/N`: this process runs the points `p` with `p mod N == i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn parse(s: &str) -> Result<Self, String> {
        let bad = || format!("--shard {s}: expected i/N with 0 <= i < N");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }
    pub fn all() -> Self {
        Self { index: 0, count: 1 }
    }
    pub fn owns(&self, p: usize) -> bool {
        p % self.count == self.index
    }
}
