//! The run's stepper: its network (the checkpoint's parameters on a resume) and who
//! computes its steps ([`ntk_engine::choose`]), the optimizer state a resume loads into it,
//! and the refusal of a checkpoint another engine wrote (also in a dry run, which builds
//! nothing: [`engine_of`]).

use std::path::Path;

use ntk_engine::{StateForm, Stepper};
use ntk_numerics::backend::Compute;

use crate::checkpoint;
use crate::config::TrainConfig;
use crate::run::Run;

/// Builds the network (with the checkpoint's parameters when resuming) and its stepper
/// ([`ntk_engine::choose`]); when resuming, checks that the checkpoint's optimizer state is of
/// this engine's form and loads it. Logs who computes the steps.
pub(crate) fn build(
    run: &Run,
    found: Option<&checkpoint::Loaded>,
) -> crate::Result<Box<dyn Stepper>> {
    let (compute, d) = (run.compute, run.data.train.d);
    let fresh = run.spec.build(d, &compute.device, compute.dtype())?;
    let model = match found {
        Some(ck) => {
            let epoch = ck.pointer.epoch;
            let line = format!("{}: resuming after epoch {epoch}", run.out.display());
            run.reporter.log(&line);
            ck.load_model(fresh)?
        }
        None => fresh,
    };
    let t = &run.cfg.train;
    let setup = ntk_engine::Setup {
        sgd: &run.sgd,
        loss: t.loss,
        compute,
        batch: t.batch_size,
        fp32: t.fp32_precision,
    };
    let mut stepper = ntk_engine::choose(t.engine, model, &setup)?;
    if let Some(ck) = found {
        let form = stepper.state_form();
        check_engine(run.out, ck.pointer.engine, form)?;
        let state = ck.load_state(stepper.fresh_state())?;
        stepper.load_state(state).map_err(|e| crate::Error::At {
            path: ck.dir.clone(),
            source: Box::new(e.into()),
        })?;
    }
    run.reporter.log(&format!(
        "{}: {} steps ({} engine)",
        run.labels.model,
        stepper.method(),
        stepper.engine()
    ));
    Ok(stepper)
}

/// Whose optimizer state a run of `cfg` on `compute` would keep: the form of the engine it
/// would take ([`ntk_engine::plan`], which builds nothing and starts no device), so that a
/// dry run refuses the resume of another engine's checkpoint as the run would.
pub(crate) fn engine_of(cfg: &TrainConfig, compute: &Compute) -> crate::Result<StateForm> {
    let t = &cfg.train;
    Ok(ntk_engine::plan(t.engine, &cfg.spec()?, compute).state_form())
}

/// Refuses to resume a checkpoint written by another engine than `engine` (the optimizer
/// state differs in form).
pub(crate) fn check_engine(
    out: &Path,
    written_by: StateForm,
    engine: StateForm,
) -> crate::Result<()> {
    if written_by == engine {
        return Ok(());
    }
    Err(crate::Error::EngineMismatch {
        out: out.to_path_buf(),
        written_by,
        engine,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_of_another_engine_is_named() {
        let err = check_engine(Path::new("runs/x"), StateForm::Burn, StateForm::Host)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "runs/x: the checkpoint was written by the burn engine and this run would use \
             the host engine; set train.engine = \"burn\" to resume it"
        );
        assert!(check_engine(Path::new("runs/x"), StateForm::Host, StateForm::Host).is_ok());
    }
}
