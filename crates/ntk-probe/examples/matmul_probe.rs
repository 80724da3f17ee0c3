use burn::tensor::{DType, Device, Tensor, TensorData};
use std::time::Instant;

fn main() {
    let dev = Device::flex();
    for dtype in [DType::F32, DType::F64] {
        for (m, k, n) in [(2000, 512, 2000), (2000, 512, 512)] {
            let a =
                Tensor::<2>::from_data(TensorData::new(vec![0.5f64; m * k], [m, k]), (&dev, dtype));
            let b = Tensor::<2>::from_data(
                TensorData::new(vec![0.25f64; k * n], [k, n]),
                (&dev, dtype),
            );
            let bt = Tensor::<2>::from_data(
                TensorData::new(vec![0.25f64; k * n], [n, k]),
                (&dev, dtype),
            );
            let _ = a.clone().matmul(b.clone()).try_into_vec_as::<f64>();
            let t = Instant::now();
            for _ in 0..3 {
                let _ = a.clone().matmul(b.clone()).into_data();
            }
            let s = t.elapsed().as_secs_f64() / 3.0;
            let t = Instant::now();
            for _ in 0..3 {
                let _ = a.clone().matmul(bt.clone().transpose()).into_data();
            }
            let s2 = t.elapsed().as_secs_f64() / 3.0;
            let fl = 2.0 * (m * k * n) as f64 / 1e9;
            println!(
                "burn {dtype:?} {m}x{k}x{n}: {:.1} GFLOP/s, with transposed rhs {:.1}",
                fl / s,
                fl / s2
            );
        }
    }
    // faer
    for (m, k, n) in [(2000usize, 512usize, 2000usize)] {
        let a = faer::Mat::<f64>::from_fn(m, k, |i, j| ((i + j) % 7) as f64);
        let b = faer::Mat::<f64>::from_fn(n, k, |i, j| ((i * j) % 5) as f64);
        let mut c = faer::Mat::<f64>::zeros(m, n);
        let t = Instant::now();
        for _ in 0..3 {
            faer::linalg::matmul::matmul(
                c.as_mut(),
                faer::Accum::Replace,
                a.as_ref(),
                b.transpose(),
                1.0,
                faer::Par::rayon(2),
            );
        }
        let s = t.elapsed().as_secs_f64() / 3.0;
        let fl = 2.0 * (m * k * n) as f64 / 1e9;
        println!("faer f64 {m}x{k}x{n}: {:.1} GFLOP/s", fl / s);
        let a = faer::Mat::<f32>::from_fn(m, k, |i, j| ((i + j) % 7) as f32);
        let b = faer::Mat::<f32>::from_fn(n, k, |i, j| ((i * j) % 5) as f32);
        let mut c = faer::Mat::<f32>::zeros(m, n);
        let t = Instant::now();
        for _ in 0..3 {
            faer::linalg::matmul::matmul(
                c.as_mut(),
                faer::Accum::Replace,
                a.as_ref(),
                b.transpose(),
                1.0,
                faer::Par::rayon(2),
            );
        }
        let s = t.elapsed().as_secs_f64() / 3.0;
        println!("faer f32 {m}x{k}x{n}: {:.1} GFLOP/s", fl / s);
        let t = Instant::now();
        for _ in 0..3 {
            faer::linalg::matmul::triangular::matmul(
                c.as_mut(),
                faer::linalg::matmul::triangular::BlockStructure::TriangularLower,
                faer::Accum::Replace,
                a.as_ref(),
                faer::linalg::matmul::triangular::BlockStructure::Rectangular,
                b.transpose(),
                faer::linalg::matmul::triangular::BlockStructure::Rectangular,
                1.0,
                faer::Par::rayon(2),
            );
        }
        let s = t.elapsed().as_secs_f64() / 3.0;
        println!(
            "faer f32 lower-triangular {m}x{k}x{n}: {:.1} effective GFLOP/s ({:.3} s)",
            fl / s,
            s
        );
    }
}
