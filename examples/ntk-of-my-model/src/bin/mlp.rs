use ntk_kernel::api::{Conditioning, mlp_ntk};
use ntk_model::{ActivationKind, Mlp, MlpConfig};
use ntk_numerics::backend::{self, Precision};
use ntk_numerics::kernel::OutputMode;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let compute = backend::select(Some("flex"), Precision::F64)?;
    // Liu & Hui's network: width 512, depth 4, ReLU, NTK parameterization (Eq. 1).
    let cfg = MlpConfig::new(5, 512, 4, ActivationKind::Relu);
    let mlp = Mlp::new(&cfg, &compute.device, compute.dtype())?;
    let x: Vec<f64> = ntk_data::gaussian(100, 5, 0)
        .x
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    let k = mlp_ntk(&mlp, &x, 100, &compute, OutputMode::Sum)?;
    let c = Conditioning::of(&k, compute.precision)?;
    println!(
        "kappa = {:.3e}, min gradient angle = {:.2} deg",
        c.kappa.unwrap(),
        c.min_grad_angle_deg.unwrap()
    );
    Ok(())
}
