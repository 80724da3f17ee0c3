use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Tensor, TensorData, activation::relu};
use ntk_data::arrays::{Role, read_inputs};
use ntk_kernel::api::{Conditioning, empirical_ntk};
use ntk_numerics::{backend, backend::Precision, kernel::OutputMode};

#[derive(Module, Debug)]
struct MyNet {
    hidden: Linear,
    out: Linear,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or("my_inputs.npy".into()); // n x d, or n images
    let x = read_inputs(path.as_ref(), Role::X)?; // .npy, .npz or CSV, as data.x reads them
    let (n, d) = (x.rows, x.dim());
    let compute = backend::select(Some("flex"), Precision::F32)?;
    let dev = &compute.device;
    dev.seed(0); // the same initialization on every run
    let net = MyNet {
        hidden: LinearConfig::new(d, 512).init(dev),
        out: LinearConfig::new(512, 10).init(dev),
    };
    let batch = Tensor::<2>::from_data(TensorData::new(x.values, [n, d]), (dev, compute.dtype()));
    let forward = |m: &MyNet, x: Tensor<2>| m.out.forward(relu(m.hidden.forward(x)));
    let k = empirical_ntk(&net, forward, batch, OutputMode::Sum, Precision::F64); // f32 net, f64 kernel
    let c = Conditioning::of(&k, Precision::F64)?;
    let kappa = c
        .kappa
        .map_or("none (singular)".into(), |v| format!("{v:.4e}"));
    let angle = c
        .min_grad_angle_deg
        .map_or("-".into(), |v| format!("{v:.3}"));
    println!(
        "kappa {kappa}, rank {} of {}, min angle {angle} deg",
        c.rank, k.size
    );
    Ok(())
}
