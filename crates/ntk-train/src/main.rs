//! `ntk-train --config FILE --out DIR`: SGD training with per-epoch metrics.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use ntk_probe::backend;
use ntk_train::config::TrainConfig;

#[derive(Parser)]
#[command(
    name = "ntk-train",
    version,
    about = "SGD training of NTK-parameterized networks"
)]
struct Cli {
    #[arg(long)]
    config: PathBuf,
    #[arg(long, default_value = "runs/train")]
    out: PathBuf,
    /// Override train.epochs.
    #[arg(long)]
    epochs: Option<usize>,
    /// Override train.lr.
    #[arg(long)]
    lr: Option<f64>,
    /// Backend (also BURN_DEVICE).
    #[arg(long)]
    device: Option<String>,
}

fn run(cli: Cli) -> Result<(), String> {
    let mut cfg = TrainConfig::load(&cli.config)?;
    if let Some(e) = cli.epochs {
        cfg.train.epochs = e;
    }
    if let Some(lr) = cli.lr {
        cfg.train.lr = lr;
    }
    cfg.validate()?;
    ntk_probe::run::check_writable(&cli.out)?;
    let compute = backend::select(
        cli.device.as_deref().or(cfg.train.device.as_deref()),
        cfg.train.precision,
    )?;
    let s = ntk_train::train::train(&cfg, &compute, &cli.out)?;
    println!(
        "{} epochs{}; final train loss {:.5}, test accuracy {}; {:.1} s; wrote {}/{{metrics.csv, summary.json}}",
        s.epochs_completed,
        if s.diverged {
            " (diverged: non-finite loss)"
        } else {
            ""
        },
        s.final_train_loss,
        s.final_test_accuracy
            .map_or("-".into(), |a| format!("{:.4}", a)),
        s.seconds,
        cli.out.display()
    );
    Ok(())
}

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("ntk-train: internal error: {info}")
    }));
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
