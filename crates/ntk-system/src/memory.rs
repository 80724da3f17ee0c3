//! The memory the system lets this process have now: the least of `MemAvailable`
//! (`/proc/meminfo`), what the process's memory cgroup still allows (v2 `memory.max`, v1
//! `memory.limit_in_bytes`, less the usage, over the cgroup and its ancestors) and what
//! `RLIMIT_AS` still allows beyond what the program keeps for itself (its floor, its
//! worker threads' buffers and arenas) ([`system_limit`]); and sizes in words ([`human`]).
//! The estimates of a run's work and their refusal are `ntk_runs::budget`'s.

/// Bytes in a GiB.
pub const GIB: f64 = (1u64 << 30) as f64;

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

/// The address space ntk-train maps in all, its data aside: measured with the dev binary,
/// it maps 133 MiB at start under any `ulimit -v` from 360000 to 1000000 KiB (31 MiB under
/// 300000, where mimalloc has less room to reserve), so with [`ADDRESS_RESERVE`] beyond that
/// 453 MiB. Without it the advice under a small limit grew once followed (session 61: 300000
/// advised 359468, which advised 463468, before the work's own check: three refusals).
pub const TRAIN_ADDRESS_FLOOR: f64 = 460.0 * 1024.0 * 1024.0;

/// The floor a binary set ([`set_address_floor`]), in bytes; 0 when none.
static ADDRESS_FLOOR: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The least work a binary set ([`set_address_floor`]), in bytes; 0 when none.
static LEAST_WORK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Sets the address space this binary maps in all before any data (such as
/// [`PROBE_ADDRESS_FLOOR`]): what `ntk_runs::budget::check_address_space` and the memory
/// estimate keep under `RLIMIT_AS` whatever is mapped at start; and `least_work`, the part
/// every estimate of its work opens with (the program itself), which a limit advised from
/// the floor alone must leave room for (hundred-and-thirty-first hostile round, D5: the
/// floor's advice was refused again by the smallest work's estimate). Call first thing in
/// `main`.
pub fn set_address_floor(bytes: f64, least_work: f64) {
    ADDRESS_FLOOR.store(bytes as u64, std::sync::atomic::Ordering::Relaxed);
    LEAST_WORK.store(least_work as u64, std::sync::atomic::Ordering::Relaxed);
}

/// Room for a small run's own buffers (its data, parameters and activations) beyond the
/// program itself, in what [`least_work`] advises: a run of a few hundred samples starts at
/// the limit a floor's refusal advises, and a larger one's estimate says its own limit.
pub const SMALL_WORK: f64 = 8.0 * 1024.0 * 1024.0;

/// The least work the binary set ([`set_address_floor`]) and [`SMALL_WORK`], in bytes; 0
/// where none was set.
pub fn least_work() -> f64 {
    match LEAST_WORK.load(std::sync::atomic::Ordering::Relaxed) {
        0 => 0.0,
        set => set as f64 + SMALL_WORK,
    }
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
pub fn address_kept(mapped: f64) -> f64 {
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
pub fn address_space() -> Option<(f64, f64)> {
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

/// The prefix of the source name [`system_limit`] gives `RLIMIT_AS`'s room, by which a
/// check of an estimate (`ntk_runs::budget::Estimate::check`) knows the limit is
/// `RLIMIT_AS` (and advises the `ulimit -v` that fits the work).
pub const RLIMIT_SOURCE: &str = "what RLIMIT_AS";

/// What `RLIMIT_AS` still allows the work's data: the limit less what the program keeps
/// ([`address_kept`]).
pub fn rlimit_remaining() -> Option<(f64, String)> {
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
pub fn rlimit_advice(needed: f64) -> Option<u64> {
    let (_, mapped) = address_space()?;
    Some(((address_kept(mapped) + needed) / 1024.0).ceil() as u64)
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

/// The memory the system lets this process have now, `RLIMIT_AS` aside: the least of
/// `MemAvailable` and what its cgroups allow. A pass that maps nothing as it grows (counting
/// a file's values) is held to it; what raising `ulimit -v` would lift is left to the
/// memory guard, which advises the limit.
pub fn physical_limit() -> Option<(f64, String)> {
    let available = mem_available().map(|b| (b, "available memory (MemAvailable)".to_string()));
    [available, cgroup_remaining()]
        .into_iter()
        .flatten()
        .min_by(|a, b| a.0.total_cmp(&b.0))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Sizes below a MiB keep their magnitude (`--max-memory 1K` is not "0 MiB").
    #[test]
    fn small_sizes_are_not_zero() {
        assert_eq!(human(1024.0), "1 KiB");
        assert_eq!(human(100.0), "100 bytes");
        assert_eq!(human(3.0 * 1024.0 * 1024.0), "3 MiB");
    }

    /// What the program keeps under `RLIMIT_AS` does not grow with what is mapped below the
    /// floor (the allocator maps more at start under a higher limit), and grows with the
    /// mapping above it and with the threads.
    #[test]
    fn what_the_program_keeps_follows_its_floor_not_the_mapping_below_it() {
        set_address_floor(PROBE_ADDRESS_FLOOR, 0.0);
        let mib = 1024.0 * 1024.0;
        let extra = ADDRESS_PER_THREAD * worker_threads().saturating_sub(2) as f64;
        assert_eq!(address_kept(135.0 * mib), PROBE_ADDRESS_FLOOR + extra);
        assert_eq!(address_kept(263.0 * mib), PROBE_ADDRESS_FLOOR + extra);
        assert_eq!(
            address_kept(1024.0 * mib),
            1024.0 * mib + ADDRESS_RESERVE + extra
        );
        set_address_floor(0.0, 0.0);
        assert_eq!(
            address_kept(70.0 * mib),
            70.0 * mib + ADDRESS_RESERVE + extra
        );
    }
}
