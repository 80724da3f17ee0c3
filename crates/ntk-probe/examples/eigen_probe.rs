use std::time::Instant;
fn main() {
    let n = 2000;
    let a = faer::Mat::<f64>::from_fn(n, 300, |i, j| {
        (((i * 7 + j * 13) % 17) as f64 - 8.0) / 8.0 + if i == j { 1.0 } else { 0.0 }
    });
    let mut k = faer::Mat::<f64>::zeros(n, n);
    faer::linalg::matmul::matmul(
        k.as_mut(),
        faer::Accum::Replace,
        a.as_ref(),
        a.transpose(),
        1.0,
        faer::Par::rayon(2),
    );
    for i in 0..n {
        k[(i, i)] += 1.0;
    }
    for par in [faer::Par::Seq, faer::Par::rayon(2)] {
        faer::set_global_parallelism(par);
        let t = Instant::now();
        let ev = k.self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
        println!(
            "{par:?}: eigenvalues {:.3} s (min {:.3e})",
            t.elapsed().as_secs_f64(),
            ev[0]
        );
        let t = Instant::now();
        let _ = k.self_adjoint_eigen(faer::Side::Lower).unwrap();
        println!(
            "{par:?}: eigen with vectors {:.3} s",
            t.elapsed().as_secs_f64()
        );
    }
}
