use std::time::Instant;
fn main() {
    for (m, k, n) in [(2000usize, 512usize, 512usize)] {
        let a = faer::Mat::<f32>::from_fn(m, k, |i, j| ((i + j) % 7) as f32);
        let b = faer::Mat::<f32>::from_fn(k, n, |i, j| ((i * j) % 5) as f32);
        let mut c = faer::Mat::<f32>::zeros(m, n);
        for (name, par) in [("seq", faer::Par::Seq), ("rayon2", faer::Par::rayon(2))] {
            let t = Instant::now();
            for _ in 0..10 {
                faer::linalg::matmul::matmul(
                    c.as_mut(),
                    faer::Accum::Replace,
                    a.as_ref(),
                    b.as_ref(),
                    1.0,
                    par,
                );
            }
            let s = t.elapsed().as_secs_f64() / 10.0;
            let t = Instant::now();
            for _ in 0..10 {
                faer::linalg::matmul::matmul(
                    c.as_mut(),
                    faer::Accum::Replace,
                    a.as_ref(),
                    b.transpose(),
                    1.0,
                    par,
                );
            }
            let s2 = t.elapsed().as_secs_f64() / 10.0;
            let fl = 2.0 * (m * k * n) as f64 / 1e9;
            println!(
                "faer f32 {m}x{k}x{n} {name}: {:.1} GFLOP/s, rhs^T {:.1}",
                fl / s,
                fl / s2
            );
        }
    }
}
