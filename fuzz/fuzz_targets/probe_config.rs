//! `ntk-probe` configs: a probe config and a sweep config, parsed and validated as the
//! binary does, then the memory estimate of whatever passed (and of whatever merely
//! parsed: the estimate must not fail on any parsed config).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(cfg) = ntk_probe::config::ProbeConfig::parse(text) {
        let _ = cfg.validate();
        let _ =
            ntk_probe::run::check_memory(&cfg, 784, ntk_probe::run::Reuse::OneKernel, Some("1G"));
    }
    if let Ok(cfg) = ntk_probe::sweep::SweepConfig::parse(text) {
        let _ = cfg.points();
    }
});
