//! Slurm job arrays: a sweep's shard from the array task a job runs as (`--shard slurm`),
//! and the worker threads from the CPUs Slurm gave the task (`SLURM_CPUS_PER_TASK`).
//!
//! A task of `sbatch --array=A-B[:S]` has `SLURM_ARRAY_TASK_ID` (its index), and
//! `SLURM_ARRAY_TASK_MIN`, `SLURM_ARRAY_TASK_STEP` and `SLURM_ARRAY_TASK_COUNT`; its shard is
//! `(ID - MIN) / STEP` of `COUNT`. So `--array=0-7`, `--array=1-8` and `--array=0-14:2` are
//! each the eight shards 0/8..7/8; a list such as `--array=1,3,7` has no step and is refused.

/// An array task's place among the array's tasks: shard `index` of `count` (the sweep's
/// `Shard`, which this module does not need to know).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayTask {
    pub index: usize,
    pub count: usize,
}

/// The shard of this Slurm array task, read from the environment.
pub fn array_shard() -> crate::Result<ArrayTask> {
    shard_from(&|k| std::env::var(k).ok())
}

/// The shard of the array task whose environment `var` reads.
pub fn shard_from(var: &dyn Fn(&str) -> Option<String>) -> crate::Result<ArrayTask> {
    let bad = |why: String| crate::Error::SlurmShard { why };
    let number = |key: &str, default: Option<usize>| -> crate::Result<usize> {
        match var(key) {
            Some(v) => v
                .trim()
                .parse()
                // "-1" and a value beyond 64 bits are numbers, just not a task's: the range
                // is said (eleventh hostile round, S02: both read "is not a number").
                .map_err(|_| {
                    bad(format!(
                        "{key} = {v:?} is not a whole number from 0 to {}",
                        usize::MAX
                    ))
                }),
            None => default.ok_or_else(|| {
                bad(format!(
                    "{key} is not set: this is not a task of a Slurm job array (submit with \
                     sbatch --array=0-N, or pass --shard i/N)"
                ))
            }),
        }
    };
    let id = number("SLURM_ARRAY_TASK_ID", None)?;
    let count = number("SLURM_ARRAY_TASK_COUNT", None)?;
    let min = number("SLURM_ARRAY_TASK_MIN", Some(0))?;
    let step = number("SLURM_ARRAY_TASK_STEP", Some(1))?;
    // Slurm never writes a step of 0 (eleventh hostile round, S03: it was read as 1).
    if step == 0 {
        return Err(bad(
            "SLURM_ARRAY_TASK_STEP = 0: an array's step is at least 1 (--array=A-B:S)".to_string(),
        ));
    }
    if count == 0 {
        return Err(bad(
            "SLURM_ARRAY_TASK_COUNT = 0: an array has at least one task".to_string(),
        ));
    }
    let Some(offset) = id.checked_sub(min) else {
        return Err(bad(format!(
            "SLURM_ARRAY_TASK_ID = {id} is below SLURM_ARRAY_TASK_MIN = {min}: no task of \
             the array"
        )));
    };
    if offset % step != 0 {
        return Err(bad(format!(
            "task {id} of an array from {min} in steps of {step} is not one of a range \
             (--array=A-B or A-B:S); lists of indices have no shard order"
        )));
    }
    let index = offset / step;
    if index >= count {
        return Err(bad(format!(
            "task {id} is position {index} (from 0) of an array from {min} in steps of \
             {step}, at or past its SLURM_ARRAY_TASK_COUNT = {count} tasks: the array is not \
             the range A-B[:S] these variables describe (a list of indices such as \
             --array=1,3,7 has no shard order)"
        )));
    }
    Ok(ArrayTask { index, count })
}

/// Sets the BLAS threads and Rayon's pool to `SLURM_CPUS_PER_TASK` when Slurm says it and
/// the user did not (`OPENBLAS_NUM_THREADS`, `RAYON_NUM_THREADS`): a task then uses the
/// cores it was given, not every core of the node, and never more threads than the CPUs
/// the process may use ([`capped_at_cpus`]). `set_blas_threads` sets the host BLAS's
/// threads (`ntk_numerics::linalg::set_threads`). Call first thing in `main`, before any
/// thread starts. Returns the count it set.
pub fn use_cpus_per_task(set_blas_threads: impl FnOnce(usize)) -> Option<usize> {
    let text = std::env::var("SLURM_CPUS_PER_TASK").ok()?;
    let Some(asked) = text.trim().parse().ok().filter(|&n: &usize| n >= 1) else {
        // Slurm writes a count; anything else is said, not silently ignored.
        eprintln!(
            "warning: SLURM_CPUS_PER_TASK={text:?} is not a count of cores; the thread pools \
             keep their defaults"
        );
        return None;
    };
    let n = capped_at_cpus(
        asked,
        std::thread::available_parallelism().map_or(1, |c| c.get()),
    );
    if std::env::var_os("OPENBLAS_NUM_THREADS").is_none() {
        set_blas_threads(n);
    }
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        // SAFETY: called at the start of `main`, before any other thread exists.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", n.to_string()) };
    }
    Some(n)
}

/// The most Rayon worker threads per CPU the process may use that `RAYON_NUM_THREADS` may
/// ask for: oversubscription a user may want, with room. Beyond it the pool spends minutes
/// starting threads before any work (100,000 spent over 60 s on a 0.04 s probe: ninth
/// hostile round, V06).
pub const RAYON_THREADS_PER_CPU: usize = 64;

/// Why `RAYON_NUM_THREADS` cannot be honoured on a process that may use `cpus`: a count
/// beyond [`RAYON_THREADS_PER_CPU`] per CPU, named with the bound. `None` when it is unset,
/// not a count (Rayon then keeps its default, as it does for 0) or within the bound.
pub fn rayon_threads_refusal(value: Option<&str>, cpus: usize) -> Option<String> {
    let asked: usize = value?.trim().parse().ok()?;
    let most = RAYON_THREADS_PER_CPU * cpus.max(1);
    let cpus = cpus.max(1);
    let per_cpu = if cpus == 1 {
        "for the 1 CPU".to_string()
    } else {
        format!("for each of the {cpus} CPUs")
    };
    (asked > most).then(|| {
        format!(
            "RAYON_NUM_THREADS={asked}: more than {RAYON_THREADS_PER_CPU} worker threads \
             {per_cpu} this process may use (at most {most}); starting them would take \
             minutes before any work. Set it to {cpus} (one per CPU) or unset it"
        )
    })
}

/// The threads for `asked` CPUs on a process that may use `cpus`: never more than `cpus`
/// (OpenBLAS caps its `OPENBLAS_NUM_THREADS` so, but not a count set at run time). Uncapped,
/// `SLURM_CPUS_PER_TASK=16` on 2 CPUs started 16 BLAS threads with a 128 MiB buffer and an
/// allocator arena each: under `ulimit -v 4000000` the BLAS library's allocation failed and
/// it retried forever (a hang in 3-5 of 5 tries), where `OPENBLAS_NUM_THREADS=16` ran.
pub fn capped_at_cpus(asked: usize, cpus: usize) -> usize {
    asked.min(cpus.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn a_rayon_pool_beyond_64_threads_a_cpu_is_refused_by_name() {
        let refusal = rayon_threads_refusal(Some("100000"), 2).unwrap();
        assert!(
            refusal.starts_with("RAYON_NUM_THREADS=100000: "),
            "{refusal}"
        );
        assert!(
            refusal.contains("(at most 128)") && refusal.contains("Set it to 2"),
            "{refusal}"
        );
        assert!(refusal.contains("for each of the 2 CPUs"), "{refusal}");
        // One CPU in the singular (tenth hostile round, V03).
        let one = rayon_threads_refusal(Some("65"), 1).unwrap();
        assert!(
            one.contains("worker threads for the 1 CPU this process may use (at most 64)"),
            "{one}"
        );
        // Within the bound, unset, or no count (Rayon's default): honoured.
        for ok in [
            Some("128"),
            Some("3"),
            Some("0"),
            Some("abc"),
            Some("-1"),
            None,
        ] {
            assert_eq!(rayon_threads_refusal(ok, 2), None, "{ok:?}");
        }
    }

    fn shard(vars: &[(&str, &str)]) -> crate::Result<ArrayTask> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        shard_from(&|k| map.get(k).cloned())
    }

    #[test]
    fn range_arrays_map_to_shards_and_anything_else_is_named() {
        let s = shard(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
        ])
        .unwrap();
        assert_eq!((s.index, s.count), (3, 8));
        // --array=1-8: task 8 is the last shard.
        let s = shard(&[
            ("SLURM_ARRAY_TASK_ID", "8"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ])
        .unwrap();
        assert_eq!((s.index, s.count), (7, 8));
        // --array=0-14:2
        let s = shard(&[
            ("SLURM_ARRAY_TASK_ID", "6"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
        ])
        .unwrap();
        assert_eq!((s.index, s.count), (3, 8));
        // Outside an array, a list of indices, garbage.
        let e = shard(&[]).unwrap_err().to_string();
        assert!(
            e.contains("SLURM_ARRAY_TASK_ID is not set") && e.contains("--array"),
            "{e}"
        );
        let e = shard(&[
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("task 7"), "{e}");
        let e = shard(&[
            ("SLURM_ARRAY_TASK_ID", "x"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("SLURM_ARRAY_TASK_ID = \"x\""), "{e}");
        // Eleventh hostile round, S02: numbers that are not a task's read "is not a
        // number"; the range is said.
        for v in ["-1", "99999999999999999999"] {
            let e = shard(&[("SLURM_ARRAY_TASK_ID", v), ("SLURM_ARRAY_TASK_COUNT", "2")])
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!(
                    "SLURM_ARRAY_TASK_ID = \"{v}\" is not a whole number from 0 to"
                )),
                "{e}"
            );
        }
        // S03: a step of 0, which Slurm never writes, is named (it was read as 1).
        let e = shard(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
            ("SLURM_ARRAY_TASK_STEP", "0"),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("SLURM_ARRAY_TASK_STEP = 0"), "{e}");
    }

    #[test]
    fn the_threads_never_exceed_the_cpus_the_process_may_use() {
        assert_eq!(capped_at_cpus(16, 2), 2);
        assert_eq!(capped_at_cpus(4, 16), 4);
        assert_eq!(capped_at_cpus(3, 0), 1);
    }

    #[test]
    fn an_empty_array_or_a_task_past_its_count_is_named_as_such() {
        let e = shard(&[
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "0"),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("SLURM_ARRAY_TASK_COUNT = 0"), "{e}");
        assert!(!e.contains("lists of indices"), "{e}");
        for id in ["4", "9"] {
            let e = shard(&[("SLURM_ARRAY_TASK_ID", id), ("SLURM_ARRAY_TASK_COUNT", "4")])
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("task {id}")) && e.contains("SLURM_ARRAY_TASK_COUNT = 4"),
                "{e}"
            );
        }
        let e = shard(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "3"),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("below SLURM_ARRAY_TASK_MIN = 3"), "{e}");
    }
}
