//! `summary.json` of both tools, as `collect` and the resume checks read it back, with the
//! provenance check a sweep makes against it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ntk_runs::provenance::{self, Provenance};

fn check(p: Option<&Provenance>) {
    let now = Provenance::new("fuzz", provenance::FlatConfig::new(), "faer");
    let _ = provenance::check_reuse(std::path::Path::new("summary.json"), p, &now);
    if let Some(p) = p {
        let _ = provenance::check_one_base(
            &[("a".into(), Some(p)), ("b".into(), Some(&now))],
            &["model.depth"],
        );
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = serde_json::from_slice::<ntk_probe::run::Summary>(data) {
        check(s.provenance.as_ref());
    }
    if let Ok(s) = serde_json::from_slice::<ntk_train::train::TrainSummary>(data) {
        check(s.provenance.as_ref());
    }
});
