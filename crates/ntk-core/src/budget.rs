//! Memory budget: the work of a probe or a training run is estimated before anything is
//! allocated, and refused with a message naming the value, the estimate and the memory
//! available, instead of an allocation abort or the OOM killer.
//!
//! The available memory is `MemAvailable` of `/proc/meminfo`; `--max-memory SIZE` (or
//! `NTK_MAX_MEMORY`) replaces it for users who know better (swap, another machine's size).
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

/// The memory the work may use: `cli` (`--max-memory`), else `NTK_MAX_MEMORY`, else
/// `MemAvailable`; `None` when nothing says (no check then).
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
    Ok(mem_available().map(|b| (b, "available memory (MemAvailable)".to_string())))
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
        Err(crate::Error::Memory {
            culprit: culprit.to_string(),
            needed: total,
            detail,
            source_name: source,
            limit,
        })
    }
}

/// `1.5 GiB`, `300 MiB`, `2.3e6 GiB`.
pub fn human(bytes: f64) -> String {
    if bytes >= 1e6 * GIB {
        format!("{:.1e} GiB", bytes / GIB)
    } else if bytes >= GIB {
        format!("{:.1} GiB", bytes / GIB)
    } else {
        format!("{:.0} MiB", bytes / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
