//! Memory budget: the work of a probe or a training run is estimated before anything is
//! allocated, and refused with a message naming the value, the estimate and the memory
//! available, instead of an allocation abort or the OOM killer.
//!
//! The available memory is the least of `MemAvailable` (`/proc/meminfo`), what the
//! process's memory cgroup still allows (v2 `memory.max`, v1 `memory.limit_in_bytes`, less
//! the usage, over the cgroup and its ancestors) and what `RLIMIT_AS` still allows;
//! `--max-memory SIZE` (or `NTK_MAX_MEMORY`) replaces it for users who know better (swap,
//! another machine's size).
//! Estimates count the big buffers only (kernels, eigensolver workspace, activations,
//! parameters, data); they are meant to be within a factor of two, not exact.
//!
//! What the system allows is read by `ntk_system::memory` (below the libraries, which cap
//! their reads by it too); its items are re-exported here, where the tools find them.

pub use ntk_system::memory::{
    ADDRESS_PER_THREAD, ADDRESS_RESERVE, PROBE_ADDRESS_FLOOR, TRAIN_ADDRESS_FLOOR, human,
    rlimit_as, set_address_floor, system_limit, worker_threads,
};
use ntk_system::memory::{
    GIB, RLIMIT_SOURCE, address_kept, address_space, least_work, rlimit_advice,
};

/// Environment variable naming the memory the tools may plan for (`64G`, `512M`, bytes).
pub const MAX_MEMORY_ENV: &str = "NTK_MAX_MEMORY";

/// `ntk-probe` before any work (measured: 114 MiB, mostly OpenBLAS's per-thread buffers and
/// the allocator's arenas): the first part of every estimate of its commands.
pub const PROBE_PROGRAM_BYTES: f64 = 128.0 * 1024.0 * 1024.0;

/// `ntk-train` before any work: the first part of every estimate of its runs.
pub const TRAIN_PROGRAM_BYTES: f64 = 32.0 * 1024.0 * 1024.0;

/// The largest size a limit may name: 16 EiB, all a 64-bit address space holds.
pub const MAX_SIZE: f64 = 18_446_744_073_709_551_616.0;

/// Parses `64G`, `512M`, `1.5T`, `100000` (bytes); binary units (K, M, G, T, P, E), also
/// written `GiB` or `GB` (both binary here; hundred-and-eighth hostile round, N4: `1GiB` was
/// refused), and `B` for bytes, in whole bytes rounded down. A size is at least one byte and
/// at most [`MAX_SIZE`]: `0.5`, `1e-3` and `1e400` (an infinity) are refused as `0` and `inf`
/// are, not read as 0 bytes or as no limit (twenty-eighth hostile round, N1).
pub fn parse_size(s: &str) -> crate::Result<f64> {
    let trimmed = s.trim();
    let lower = trimmed.to_ascii_lowercase();
    // `GiB`, `GB` as `G`; `100B` as `100`.
    let cut = if lower.ends_with("ib")
        && lower.len() > 2
        && lower.as_bytes()[lower.len() - 3].is_ascii_alphabetic()
    {
        2
    } else if lower.ends_with('b') {
        1
    } else {
        0
    };
    let t = &trimmed[..trimmed.len() - cut];
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1024.0,
                'M' => 1024.0 * 1024.0,
                'G' => GIB,
                'T' => GIB * 1024.0,
                'P' => GIB * 1024.0 * 1024.0,
                'E' => GIB * 1024.0 * 1024.0 * 1024.0,
                _ => return Err(bad_size("", s)),
            };
            (&t[..i], m)
        }
        _ => (t, 1.0),
    };
    // Whole bytes, rounded down before the range is checked: `1.5` is 1 byte, `0.9` none
    // (twenty-ninth hostile round, N2: checked, then rounded half to even).
    match num.trim().parse::<f64>().map(|v| (v * mult).floor()) {
        Ok(bytes) if (1.0..=MAX_SIZE).contains(&bytes) => Ok(bytes),
        _ => Err(bad_size("", s)),
    }
}

/// The error for a size that does not parse, `setting` naming where it came from.
fn bad_size(setting: &str, value: &str) -> crate::Error {
    crate::Error::Size {
        setting: setting.to_string(),
        value: value.to_string(),
    }
}

/// Refuses to start under an `RLIMIT_AS` that leaves less than [`ADDRESS_RESERVE`] beyond
/// the program's own mapping: such a process hangs in the BLAS library rather than fails,
/// whatever the work. Not overruled by `--max-memory` (which overrules the estimate of the
/// work, not this floor). Both binaries call it first.
pub fn check_address_space() -> crate::Result<()> {
    let Some((limit, mapped)) = address_space() else {
        return Ok(());
    };
    let kept = address_kept(mapped);
    if limit >= kept {
        return Ok(());
    }
    Err(crate::Error::AddressSpace {
        limit_kib: limit as u64 / 1024,
        room: human((limit - mapped).max(0.0)),
        mapped: human(mapped),
        reserve: human(kept),
        threads: worker_threads(),
        least_work: least_work(),
        need_kib: ((kept + least_work()) / 1024.0).ceil() as u64,
    })
}

/// The memory the work may use: `cli` (`--max-memory`), else `NTK_MAX_MEMORY`, else the
/// least of `MemAvailable`, the cgroup's limit and `RLIMIT_AS` ([`system_limit`]); `None`
/// when nothing says (no check then).
pub fn limit(cli: Option<&str>) -> crate::Result<Option<(f64, String)>> {
    if let Some(s) = cli {
        return parse_size(s)
            .map(|b| Some((b, "--max-memory".to_string())))
            .map_err(|_| bad_size("--max-memory ", s));
    }
    if let Ok(s) = std::env::var(MAX_MEMORY_ENV) {
        return parse_size(&s)
            .map(|b| Some((b, MAX_MEMORY_ENV.to_string())))
            .map_err(|_| bad_size(&format!("{MAX_MEMORY_ENV}="), &s));
    }
    Ok(system_limit())
}

/// A sum of named parts, in bytes.
#[derive(Clone, Debug, Default)]
pub struct Estimate {
    pub parts: Vec<(String, f64)>,
}

impl Estimate {
    /// Adds `count` elements of `bytes` each (floating point: products may exceed u64).
    pub fn add(&mut self, what: impl Into<String>, count: f64, bytes: f64) -> &mut Self {
        self.parts.push((what.into(), count * bytes));
        self
    }
    pub fn total(&self) -> f64 {
        self.parts.iter().map(|(_, b)| b).sum()
    }

    /// Refuses the work when it exceeds the limit; `culprit` names the values that set it
    /// (`data.n = 60000, model.width = 512`).
    pub fn check(&self, culprit: &str, max_memory: Option<&str>) -> crate::Result<()> {
        let Some((limit, source)) = limit(max_memory)? else {
            return Ok(());
        };
        let total = self.total();
        let mut parts: Vec<&(String, f64)> = self.parts.iter().filter(|p| p.1 > 0.0).collect();
        parts.sort_by(|a, b| b.1.total_cmp(&a.1));
        let detail: Vec<String> = parts
            .iter()
            .take(3)
            .map(|(w, b)| format!("{w} {}", human(*b)))
            .collect();
        if total <= limit {
            // A limit the user gives overrules the estimate, but cannot lift `ulimit -v`:
            // said before the work starts (round 22's N5: the run ended in an out-of-memory
            // error that named neither the flag nor the limit).
            if let Some((room, rlimit)) = ntk_system::memory::rlimit_remaining()
                && total > room
                && !source.starts_with(RLIMIT_SOURCE)
            {
                let advice = rlimit_advice(total)
                    .map(|kib| format!("; raise it to ulimit -v {kib} or more"))
                    .unwrap_or_default();
                eprintln!(
                    "warning: {culprit}: the work needs about {} ({}); {source} allows it, but \
                     {rlimit} {}: an allocation beyond that fails (an out-of-memory error) \
                     whatever {source} says{advice}",
                    human(total),
                    detail.join(", "),
                    human(room)
                );
            }
            return Ok(());
        }
        let advice = source
            .starts_with(RLIMIT_SOURCE)
            .then(|| rlimit_advice(total))
            .flatten()
            .map(|kib| format!(", or raise it to ulimit -v {kib} or more"))
            .unwrap_or_default();
        Err(crate::Error::Memory {
            advice,
            culprit: culprit.to_string(),
            needed: total,
            detail,
            source_name: source,
            limit,
        })
    }
}

/// Runs `cmd` (its output discarded) and returns whether it succeeded and its own peak
/// resident memory in bytes: `wait4` reports the usage of that child alone, whatever other
/// processes run beside it. What the tests hold the estimates to (both tools'
/// `tests/probe/hostile.rs` and `tests/train/hostile.rs`).
#[cfg(unix)]
// The child is waited for by `wait4`, which clippy does not see.
#[allow(clippy::zombie_processes)]
pub fn peak_of(mut cmd: std::process::Command) -> std::io::Result<(bool, f64)> {
    use std::process::Stdio;
    let child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data; all zeros is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for this child (which std has not waited for) and fills the two structs.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if r != pid {
        return Err(std::io::Error::last_os_error());
    }
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    Ok((ok, usage.ru_maxrss as f64 * 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("64G").unwrap(), 64.0 * GIB);
        assert_eq!(parse_size("512m").unwrap(), 512.0 * 1024.0 * 1024.0);
        assert_eq!(parse_size("1000").unwrap(), 1000.0);
        assert_eq!(parse_size("1").unwrap(), 1.0);
        assert_eq!(parse_size("1.5").unwrap(), 1.0);
        assert_eq!(parse_size("2.5").unwrap(), 2.0);
        assert_eq!(parse_size("0.1G").unwrap(), (0.1 * GIB).floor());
        assert_eq!(parse_size("16E").unwrap(), MAX_SIZE);
        assert_eq!(parse_size("2P").unwrap(), 2.0 * 1024.0 * 1024.0 * GIB);
        // Written with their bytes (hundred-and-eighth hostile round, N4).
        assert_eq!(parse_size("1GiB").unwrap(), GIB);
        assert_eq!(parse_size("1.5 gb").unwrap(), 1.5 * GIB);
        assert_eq!(parse_size("512MiB").unwrap(), 512.0 * 1024.0 * 1024.0);
        assert_eq!(parse_size("100B").unwrap(), 100.0);
        // Out of range is refused as malformed text is, never read as 0 bytes or no limit.
        for bad in [
            "",
            "G",
            "GiB",
            "iB",
            "B",
            "1iB",
            "1QB",
            "1GiBB",
            "-1G",
            "nanG",
            "5Q",
            "inf",
            "0",
            "0.5",
            "1e-3",
            "1e400",
            "1e30",
            "18446744073709555712",
            "17E",
            "99999999999999999999999G",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_estimate_over_the_limit_names_culprit_estimate_and_limit() {
        let mut e = Estimate::default();
        e.add("kernel", 60000.0 * 60000.0, 8.0);
        let err = e
            .check("data.n = 60000", Some("8G"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("data.n = 60000"), "{err}");
        assert!(err.contains("26.8 GiB") && err.contains("8.0 GiB"), "{err}");
        assert!(e.check("data.n = 60000", Some("64G")).is_ok());
    }
}
