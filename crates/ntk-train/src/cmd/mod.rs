//! The subcommands of `ntk-train`, one module each (laid out as `ntk-probe`'s).

pub(crate) mod bench;
pub(crate) mod collect;
pub(crate) mod plot;
pub(crate) mod run;
