//! The kernel matrix on the host, and which outputs of a multi-output network it covers.

use serde::{Deserialize, Serialize};

/// How a network with `k` outputs becomes a kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "OutputIn", into = "OutputRepr")]
pub enum OutputMode {
    /// `K_ij = sum_o <grad f_o(x_i), grad f_o(x_j)>` (the official code's "trace"); n x n.
    #[default]
    Sum,
    /// One output `o`: `K_ij = <grad f_o(x_i), grad f_o(x_j)>`; n x n.
    Single(usize),
    /// The whole `(n k) x (n k)` kernel, row `i k + o` for sample `i`, output `o`.
    Full,
}

/// How an [`OutputMode`] is written in a config: `"sum"`, `"full"` or an output index.
#[derive(Serialize)]
#[serde(untagged)]
enum OutputRepr {
    Name(String),
    Index(usize),
}

/// What a config may hold where an [`OutputMode`] goes: every value is read, so that a
/// negative or fractional index, or a value of another type, is refused naming the value
/// ([`crate::Error::UnknownOutput`]) rather than with serde's words about the enum.
#[derive(Deserialize)]
#[serde(untagged)]
enum OutputIn {
    Name(String),
    Index(i64),
    Number(f64),
    Other(serde::de::IgnoredAny),
}

impl TryFrom<OutputIn> for OutputMode {
    type Error = crate::Error;
    fn try_from(r: OutputIn) -> crate::Result<Self> {
        let unknown = |output: String| crate::Error::UnknownOutput { output };
        match r {
            OutputIn::Index(o) => usize::try_from(o)
                .map(Self::Single)
                .map_err(|_| unknown(o.to_string())),
            OutputIn::Name(s) => Self::parse(&s).ok_or_else(|| unknown(s)),
            // As written: 1.0 is no index, and "1" would name one (hundred-and-twenty-fifth
            // hostile round, N1).
            OutputIn::Number(x) => Err(unknown(format!("{x:?}"))),
            OutputIn::Other(_) => Err(unknown("(not a name or a number)".into())),
        }
    }
}

impl From<OutputMode> for OutputRepr {
    fn from(m: OutputMode) -> Self {
        match m {
            OutputMode::Single(o) => Self::Index(o),
            other => Self::Name(other.name()),
        }
    }
}

impl OutputMode {
    /// Parses `sum`, `full` or an output index, written as an integer is (ASCII digits, no
    /// sign and no leading zero: "+1" and "01" are no index; hundred-and-twenty-third hostile
    /// round, N1).
    pub fn parse(s: &str) -> Option<Self> {
        let canonical = !s.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit())
            && (s == "0" || !s.starts_with('0'));
        match s {
            "sum" | "trace" => Some(Self::Sum),
            "full" => Some(Self::Full),
            other if canonical => other.parse().ok().map(Self::Single),
            _ => None,
        }
    }
    pub fn name(&self) -> String {
        match self {
            Self::Sum => "sum".into(),
            Self::Single(o) => format!("output_{o}"),
            Self::Full => "full".into(),
        }
    }
    /// The outputs whose gradients the kernel is formed from, of a network of `count`
    /// outputs: `o` alone for [`Self::Single`], else every one.
    pub fn outputs(self, count: usize) -> Vec<usize> {
        match self {
            Self::Single(o) => vec![o],
            Self::Sum | Self::Full => (0..count).collect(),
        }
    }
}

/// A symmetric kernel matrix in row-major f64 on the host.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub size: usize,
    pub data: Vec<f64>,
}

impl Kernel {
    pub fn zeros(size: usize) -> Self {
        Self {
            size,
            data: vec![0.0; size * size],
        }
    }
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.size + j]
    }
    /// Largest `|A_ij - B_ij| / max |B|`.
    pub fn relative_error(&self, reference: &Kernel) -> f64 {
        assert_eq!(self.size, reference.size);
        let scale = reference.data.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = self
            .data
            .iter()
            .zip(&reference.data)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        diff / scale
    }
    /// The Gram matrix `X X^T` of row-major `n x d` inputs, in f64.
    pub fn gram(x: &[f64], n: usize, d: usize) -> Self {
        let mut k = Self::zeros(n);
        for i in 0..n {
            for j in 0..=i {
                let v: f64 = (0..d).map(|t| x[i * d + t] * x[j * d + t]).sum();
                k.data[i * n + j] = v;
                k.data[j * n + i] = v;
            }
        }
        k
    }
    /// The sub-kernel on the given rows and columns (the block protocol's blocks).
    pub fn submatrix(&self, idx: &[usize]) -> Self {
        let m = idx.len();
        let mut out = Self::zeros(m);
        for (a, &i) in idx.iter().enumerate() {
            for (b, &j) in idx.iter().enumerate() {
                out.data[a * m + b] = self.get(i, j);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::IntoDeserializer;
    use serde::de::value::Error as ValueError;

    fn read<'a>(d: impl serde::Deserializer<'a, Error = ValueError>) -> Result<OutputMode, String> {
        OutputMode::deserialize(d).map_err(|e| e.to_string())
    }

    #[test]
    fn an_output_that_is_no_index_is_named_not_the_enum() {
        assert_eq!(read(3i64.into_deserializer()), Ok(OutputMode::Single(3)));
        assert_eq!(read("full".into_deserializer()), Ok(OutputMode::Full));
        assert_eq!(read("0".into_deserializer()), Ok(OutputMode::Single(0)));
        assert_eq!(read("10".into_deserializer()), Ok(OutputMode::Single(10)));
        for (e, value) in [
            (read((-1i64).into_deserializer()), "`-1`"),
            (read(1.5f64.into_deserializer()), "`1.5`"),
            (read(1.0f64.into_deserializer()), "`1.0`"),
            (read("-1".into_deserializer()), "`-1`"),
            (read("+1".into_deserializer()), "`+1`"),
            (read("01".into_deserializer()), "`01`"),
            (read(" 1".into_deserializer()), "` 1`"),
            (read(true.into_deserializer()), "not a name or a number"),
        ] {
            let e = e.unwrap_err();
            assert!(e.contains(value) && e.contains("output index"), "{e}");
            assert!(!e.contains("variant"), "{e}");
        }
    }
}
