//! A tensor of the rank a graph's value has at run time (1 to 4), over Burn's const-rank
//! tensors: reshapes between ranks and NumPy broadcasting for the elementwise operators.

use burn::tensor::Tensor;

/// The highest rank a value may have.
pub const MAX_RANK: usize = 4;

/// One value of the graph. A scalar (rank 0 in ONNX) is held as rank 1 of one element,
/// which broadcasts the same way.
#[derive(Clone, Debug)]
pub enum Value {
    /// Rank 1.
    R1(Tensor<1>),
    /// Rank 2.
    R2(Tensor<2>),
    /// Rank 3.
    R3(Tensor<3>),
    /// Rank 4.
    R4(Tensor<4>),
}

/// Applies a rank-generic expression to the tensor inside a [`Value`], keeping its rank.
macro_rules! map_value {
    ($v:expr, $t:ident => $e:expr) => {
        match $v {
            $crate::value::Value::R1($t) => $crate::value::Value::R1($e),
            $crate::value::Value::R2($t) => $crate::value::Value::R2($e),
            $crate::value::Value::R3($t) => $crate::value::Value::R3($e),
            $crate::value::Value::R4($t) => $crate::value::Value::R4($e),
        }
    };
}
pub(crate) use map_value;

impl Value {
    /// The dimensions.
    pub fn dims(&self) -> Vec<usize> {
        match self {
            Value::R1(t) => t.dims().to_vec(),
            Value::R2(t) => t.dims().to_vec(),
            Value::R3(t) => t.dims().to_vec(),
            Value::R4(t) => t.dims().to_vec(),
        }
    }

    /// The number of elements.
    pub fn numel(&self) -> usize {
        self.dims().iter().product()
    }

    /// All elements in one row (row-major order).
    pub fn flat(self) -> Tensor<1> {
        let n = self.numel();
        match self {
            Value::R1(t) => t,
            Value::R2(t) => t.reshape([n]),
            Value::R3(t) => t.reshape([n]),
            Value::R4(t) => t.reshape([n]),
        }
    }

    /// A rank-1 tensor's elements in `dims` (row-major); `None` when the rank is outside
    /// 1..=4 or the element counts differ. A rank-0 shape gives one element as rank 1.
    pub fn from_flat(t: Tensor<1>, dims: &[usize]) -> Option<Value> {
        if dims.iter().product::<usize>() != t.dims()[0] {
            return None;
        }
        Some(match *dims {
            [] => Value::R1(t),
            [a] => Value::R1(t.reshape([a])),
            [a, b] => Value::R2(t.reshape([a, b])),
            [a, b, c] => Value::R3(t.reshape([a, b, c])),
            [a, b, c, d] => Value::R4(t.reshape([a, b, c, d])),
            _ => return None,
        })
    }

    /// This value in `dims` (same element count); `None` otherwise.
    pub fn reshape(self, dims: &[usize]) -> Option<Value> {
        if self.dims() == dims {
            return Some(self);
        }
        Value::from_flat(self.flat(), dims)
    }

    /// This value with leading dimensions of one up to `rank`.
    fn lift(self, rank: usize) -> Option<Value> {
        let dims = self.dims();
        if dims.len() >= rank {
            return Some(self);
        }
        let mut lifted = vec![1; rank - dims.len()];
        lifted.extend(dims);
        self.reshape(&lifted)
    }

    /// The rank-2 tensor, when this is one.
    pub fn into_r2(self) -> Option<Tensor<2>> {
        match self {
            Value::R2(t) => Some(t),
            _ => None,
        }
    }

    /// The rank-4 tensor, when this is one.
    pub fn into_r4(self) -> Option<Tensor<4>> {
        match self {
            Value::R4(t) => Some(t),
            _ => None,
        }
    }
}

/// The shape two shapes broadcast to under NumPy's rule (dimensions aligned at the end,
/// each pair equal or one of them 1); `None` when they do not broadcast.
pub fn broadcast_dims(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let at = |s: &[usize], i: usize| {
        let pad = rank - s.len();
        if i < pad { 1 } else { s[i - pad] }
    };
    (0..rank)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// An elementwise binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binary {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b`.
    Div,
}

/// `a op b` with NumPy broadcasting; `None` when the shapes do not broadcast or the result's
/// rank exceeds [`MAX_RANK`].
pub fn binary(op: Binary, a: Value, b: Value) -> Option<Value> {
    let dims = broadcast_dims(&a.dims(), &b.dims())?;
    let rank = dims.len();
    let (a, b) = (a.lift(rank)?, b.lift(rank)?);
    macro_rules! apply {
        ($x:expr, $y:expr) => {
            match op {
                Binary::Add => $x + $y,
                Binary::Sub => $x - $y,
                Binary::Mul => $x * $y,
                Binary::Div => $x / $y,
            }
        };
    }
    Some(match (a, b) {
        (Value::R1(x), Value::R1(y)) => Value::R1(apply!(x, y)),
        (Value::R2(x), Value::R2(y)) => Value::R2(apply!(x, y)),
        (Value::R3(x), Value::R3(y)) => Value::R3(apply!(x, y)),
        (Value::R4(x), Value::R4(y)) => Value::R4(apply!(x, y)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(
            broadcast_dims(&[2, 3, 4, 5], &[3, 1, 1]),
            Some(vec![2, 3, 4, 5])
        );
        assert_eq!(broadcast_dims(&[1], &[4, 2]), Some(vec![4, 2]));
        assert_eq!(broadcast_dims(&[3], &[4, 2]), None);
    }
}
