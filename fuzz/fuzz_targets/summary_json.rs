//! `summary.json` of both tools, as `collect` and the resume checks read it back, with the
//! provenance check a sweep makes against it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ntk_runs::provenance::{self, Provenance};

fn check(p: Option<&Provenance>) {
    // With the tools' rule of one recorded form per network, as they compare records.
    let now = Provenance::new("fuzz", provenance::FlatConfig::new(), "faer")
        .with_canonical(ntk_model::spec::canonical_recorded);
    let _ = provenance::check_reuse(std::path::Path::new("summary.json"), p, &now);
    if let Some(p) = p {
        let entries = [("a".into(), Some(p)), ("b".into(), Some(&now))];
        let _ = provenance::check_one_base(&entries, &["model.depth"], ntk_probe::run::ONE_FORM);
        let _ = provenance::check_each(&entries, ntk_probe::run::ONE_FORM);
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
