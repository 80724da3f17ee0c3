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

/// Bytes in a GiB.
const GIB: f64 = (1u64 << 30) as f64;

/// Environment variable naming the memory the tools may plan for (`64G`, `512M`, bytes).
pub const MAX_MEMORY_ENV: &str = "NTK_MAX_MEMORY";

/// Parses `64G`, `512M`, `1.5T`, `100000` (bytes); binary units.
pub fn parse_size(s: &str) -> crate::Result<f64> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1024.0,
                'M' => 1024.0 * 1024.0,
                'G' => GIB,
                'T' => GIB * 1024.0,
                _ => return Err(bad_size("", s)),
            };
            (&t[..i], m)
        }
        _ => (t, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v * mult),
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

/// `MemAvailable` in bytes, if the system says.
fn mem_available() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0)
}

/// What a cgroup (v2 `memory.max`, v1 `memory.limit_in_bytes`) still allows this process:
/// the least, over the process's cgroup and its ancestors, of the limit less the usage.
fn cgroup_remaining() -> Option<(f64, String)> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut best: Option<(f64, String)> = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (mounts, limit_file, usage_file): (&[&str], _, _) = if controllers.is_empty() {
            (
                &["/sys/fs/cgroup", "/sys/fs/cgroup/unified"],
                "memory.max",
                "memory.current",
            )
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                &["/sys/fs/cgroup/memory"],
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            )
        } else {
            continue;
        };
        for mount in mounts {
            let mut dir = std::path::PathBuf::from(format!("{mount}{path}"));
            loop {
                let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
                let limit = read(limit_file).and_then(|t| t.trim().parse::<f64>().ok());
                let usage = read(usage_file).and_then(|t| t.trim().parse::<f64>().ok());
                // "max" (v2) does not parse; v1's "unlimited" is a number near 2^63.
                if let (Some(limit), Some(usage)) = (limit, usage)
                    && limit < 1e18
                {
                    let left = (limit - usage).max(0.0);
                    if best.as_ref().is_none_or(|b| left < b.0) {
                        let what = format!(
                            "the cgroup's memory limit ({}, {} of {} in use)",
                            dir.join(limit_file).display(),
                            human(usage),
                            human(limit)
                        );
                        best = Some((left, what));
                    }
                }
                if dir.as_os_str().len() <= mount.len() || !dir.pop() {
                    break;
                }
            }
        }
    }
    best
}

/// The address space the work maps beyond its data as it starts, whatever its size: the
/// worker threads' stacks, the allocator's per-thread arenas (64 MiB reserved each) and
/// OpenBLAS's work buffer (128 MiB, allocated at its first call; OpenBLAS retries a failed
/// allocation forever, so a process without this room hangs instead of failing). Measured
/// with the dev binaries: ntk-probe ran a 50-sample kernel with 309 MiB of room beyond its
/// mapping at start and hung or died with 260 MiB; ntk-train trained with 54 MiB and hung
/// with 5 MiB.
pub const ADDRESS_RESERVE: f64 = 320.0 * 1024.0 * 1024.0;

/// The address space ntk-probe maps in all, its data aside, once its threads run, with
/// two worker threads: measured 717 MiB for a 200-sample probe under `ulimit -v 738772`
/// (the least that ran it), of which the allocators' arenas (mimalloc's, glibc's for the
/// BLAS threads) and the BLAS library's buffers are most. The mapping at start is no
/// measure of it: mimalloc reserves what the limit leaves room for, so under a higher limit
/// more is mapped at start, and an advice computed from it was never enough. A binary
/// whose mapping at start does not follow the limit sets none ([`set_address_floor`]).
pub const PROBE_ADDRESS_FLOOR: f64 = 640.0 * 1024.0 * 1024.0;

/// The floor a binary set ([`set_address_floor`]), in bytes; 0 when none.
static ADDRESS_FLOOR: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Sets the address space this binary maps in all before any data (such as
/// [`PROBE_ADDRESS_FLOOR`]): what [`check_address_space`] and the memory estimate keep under
/// `RLIMIT_AS` whatever is mapped at start. Call first thing in `main`.
pub fn set_address_floor(bytes: f64) {
    ADDRESS_FLOOR.store(bytes as u64, std::sync::atomic::Ordering::Relaxed);
}

/// What each worker thread beyond two adds to what the program keeps: its BLAS buffer and
/// allocator arena and the Rayon worker's. Measured: a probe with 16 BLAS and 16 Rayon
/// threads peaked 2.77 GB (virtual) above the same probe with 2 and 2, 198 MiB a pair.
pub const ADDRESS_PER_THREAD: f64 = 200.0 * 1024.0 * 1024.0;

/// The worker threads the process will run: the CPUs it may use, or `RAYON_NUM_THREADS`
/// where set (Rayon starts that many whatever the CPUs), or `OPENBLAS_NUM_THREADS` up to
/// the CPUs (OpenBLAS caps it there), the largest.
pub fn worker_threads() -> usize {
    let env = |k: &str| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rayon = env("RAYON_NUM_THREADS").filter(|&n| n >= 1).unwrap_or(cpus);
    let blas = env("OPENBLAS_NUM_THREADS").map_or(cpus, |n| n.min(cpus));
    rayon.max(blas)
}

/// The address space kept from the work's data under `RLIMIT_AS`, with `mapped` mapped
/// now: the larger of the binary's floor ([`set_address_floor`]) and the mapping with
/// [`ADDRESS_RESERVE`] beyond it, and [`ADDRESS_PER_THREAD`] for each of
/// [`worker_threads`] beyond two. With the floor it does not grow with the limit, so a
/// `ulimit -v` advised from it is enough once followed.
fn address_kept(mapped: f64) -> f64 {
    let threads = worker_threads().saturating_sub(2) as f64;
    let floor = ADDRESS_FLOOR.load(std::sync::atomic::Ordering::Relaxed) as f64;
    floor.max(mapped + ADDRESS_RESERVE) + ADDRESS_PER_THREAD * threads
}

/// `RLIMIT_AS` (`ulimit -v`) in bytes when finite (it reads no file and allocates nothing).
pub fn rlimit_as() -> Option<f64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rl) } != 0
        || rl.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    Some(rl.rlim_cur as f64)
}

/// `RLIMIT_AS` (`ulimit -v`) in bytes when finite, and the address space mapped now
/// (`VmSize`).
fn address_space() -> Option<(f64, f64)> {
    let limit = rlimit_as()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmSize:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((limit, kb * 1024.0))
}

/// The prefix of [`rlimit_remaining`]'s source name, by which [`Estimate::check`] knows
/// the limit is `RLIMIT_AS` (and advises the `ulimit -v` that fits the work).
const RLIMIT_SOURCE: &str = "what RLIMIT_AS";

/// What `RLIMIT_AS` still allows the work's data: the limit less what the program keeps
/// ([`address_kept`]).
fn rlimit_remaining() -> Option<(f64, String)> {
    let (limit, mapped) = address_space()?;
    let kept = address_kept(mapped);
    let left = (limit - kept).max(0.0);
    Some((
        left,
        format!(
            "{RLIMIT_SOURCE} (ulimit -v {}: {}, of which {} kept for the program, its {} \
             worker threads, allocator arenas and the BLAS library's buffers) leaves",
            limit as u64 / 1024,
            human(limit),
            human(kept),
            worker_threads()
        ),
    ))
}

/// The `ulimit -v` (KiB) under which work of `needed` bytes fits, given what the program
/// keeps now ([`address_kept`]); `None` without a finite `RLIMIT_AS`.
fn rlimit_advice(needed: f64) -> Option<u64> {
    let (_, mapped) = address_space()?;
    Some(((address_kept(mapped) + needed) / 1024.0).ceil() as u64)
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
        need_kib: (kept / 1024.0).ceil() as u64,
    })
}

/// The memory the system lets this process have now: the least of `MemAvailable`, what
/// its cgroups allow (v1 and v2) and what `RLIMIT_AS` allows, with the source's name.
pub fn system_limit() -> Option<(f64, String)> {
    let available = mem_available().map(|b| (b, "available memory (MemAvailable)".to_string()));
    [available, cgroup_remaining(), rlimit_remaining()]
        .into_iter()
        .flatten()
        .min_by(|a, b| a.0.total_cmp(&b.0))
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
        if total <= limit {
            return Ok(());
        }
        let mut parts: Vec<&(String, f64)> = self.parts.iter().filter(|p| p.1 > 0.0).collect();
        parts.sort_by(|a, b| b.1.total_cmp(&a.1));
        let detail: Vec<String> = parts
            .iter()
            .take(3)
            .map(|(w, b)| format!("{w} {}", human(*b)))
            .collect();
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

/// `1.5 GiB`, `300 MiB`, `2.3e6 GiB`; below a MiB in KiB, below a KiB in bytes (`1 KiB`
/// is not `0 MiB`).
pub fn human(bytes: f64) -> String {
    if bytes >= 1e6 * GIB {
        format!("{:.1e} GiB", bytes / GIB)
    } else if bytes >= GIB {
        format!("{:.1} GiB", bytes / GIB)
    } else if bytes >= 1024.0 * 1024.0 {
        format!("{:.0} MiB", bytes / (1024.0 * 1024.0))
    } else if bytes >= 1024.0 {
        format!("{:.0} KiB", bytes / 1024.0)
    } else {
        format!("{bytes:.0} bytes")
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
    /// Sizes below a MiB keep their magnitude (`--max-memory 1K` is not "0 MiB").
    #[test]
    fn small_sizes_are_not_zero() {
        assert_eq!(super::human(1024.0), "1 KiB");
        assert_eq!(super::human(100.0), "100 bytes");
        assert_eq!(super::human(3.0 * 1024.0 * 1024.0), "3 MiB");
    }

    use super::*;

    /// What the program keeps under `RLIMIT_AS` does not grow with what is mapped below the
    /// floor (the allocator maps more at start under a higher limit), and grows with the
    /// mapping above it and with the threads.
    #[test]
    fn what_the_program_keeps_follows_its_floor_not_the_mapping_below_it() {
        set_address_floor(PROBE_ADDRESS_FLOOR);
        let mib = 1024.0 * 1024.0;
        let extra = ADDRESS_PER_THREAD * worker_threads().saturating_sub(2) as f64;
        assert_eq!(address_kept(135.0 * mib), PROBE_ADDRESS_FLOOR + extra);
        assert_eq!(address_kept(263.0 * mib), PROBE_ADDRESS_FLOOR + extra);
        assert_eq!(
            address_kept(1024.0 * mib),
            1024.0 * mib + ADDRESS_RESERVE + extra
        );
        set_address_floor(0.0);
        assert_eq!(
            address_kept(70.0 * mib),
            70.0 * mib + ADDRESS_RESERVE + extra
        );
    }

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("64G").unwrap(), 64.0 * GIB);
        assert_eq!(parse_size("512m").unwrap(), 512.0 * 1024.0 * 1024.0);
        assert_eq!(parse_size("1000").unwrap(), 1000.0);
        for bad in ["", "G", "-1G", "nanG", "5Q", "inf"] {
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
