//! Which host linear algebra runs: chosen once per process, at run time, so that one binary
//! runs the kernels of the CPU it finds and the faer fallback needs no other build.
//!
//! `NTK_BLAS` decides (unset is `auto`):
//! - `auto`: the first OpenBLAS found of (1) the current one `scripts/setup.sh` fetches
//!   (PyPI's `scipy-openblas32`, OpenBLAS 0.3.31 built for every x86 core type and chosen
//!   by CPUID, the library numpy ships) in `$NTK_OPENBLAS_DIR/lib`, default
//!   `~/.cache/ntk-openblas/lib`; (2) `$OPENBLAS_LIB_DIR/libopenblas.so`; (3) the system's
//!   `libopenblas.so.0` (Debian's `libopenblas0`); else faer, pure Rust, about 2x slower
//!   (with the cargo feature `openblas`, no OpenBLAS is an error instead);
//! - `openblas`: as `auto`, but no OpenBLAS is an error;
//! - `faer`: faer (`NTK_OPENBLAS=0`, the older spelling, means the same);
//! - a path: that OpenBLAS library file.

use super::fallback::Faer;
use super::openblas::OpenBlas;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The host linear algebra of this process.
pub enum Library {
    /// An OpenBLAS shared library, loaded.
    OpenBlas(OpenBlas),
    /// faer, and why it runs (asked for, or no OpenBLAS found).
    Faer { why: String },
}

impl Library {
    /// Its routines: the one place that tells the two libraries apart.
    pub(crate) fn routines(&self) -> &dyn super::Routines {
        match self {
            Library::OpenBlas(o) => o,
            Library::Faer { .. } => &Faer,
        }
    }

    /// `openblas` or `faer`.
    pub fn name(&self) -> &'static str {
        match self {
            Library::OpenBlas(_) => "openblas",
            Library::Faer { .. } => "faer",
        }
    }

    /// What results record: `faer`, or OpenBLAS's build and the kernels it chose for this
    /// CPU (which decide the rounding).
    pub fn describe(&self) -> String {
        match self {
            Library::OpenBlas(o) => o.describe(),
            Library::Faer { .. } => "faer".to_string(),
        }
    }

    /// One line for `--version`: the library, where it came from, its kernels.
    pub fn report(&self) -> String {
        match self {
            Library::OpenBlas(o) => format!(
                "{}, {} kernels, from {}",
                o.config,
                o.corename,
                o.path.display()
            ),
            Library::Faer { why } => format!("faer ({why})"),
        }
    }

    /// A warning for a library that runs older kernels than this CPU allows (an OpenBLAS
    /// that does not know the processor falls back to its generic SSE3 ones: 2.2x slower
    /// on an AVX-512 Xeon), `None` when the kernels fit.
    pub fn warning(&self) -> Option<String> {
        let Library::OpenBlas(o) = self else {
            return None;
        };
        (cpu_has_avx2() && pre_avx2(&o.corename)).then(|| {
            format!(
                "{} runs OpenBLAS's {} kernels (no AVX2) on a CPU with AVX2: it does not know \
                 this processor, and its GEMMs run about 2x slower; `bash scripts/setup.sh` \
                 fetches a current OpenBLAS (or set NTK_BLAS to one)",
                o.path.display(),
                o.corename
            )
        })
    }
}

/// The OpenBLAS core types without AVX2 kernels (OpenBLAS's `dynamic.c` names): on a CPU
/// that has AVX2 they mean the library did not recognise it.
const PRE_AVX2: [&str; 16] = [
    "Prescott",
    "Katmai",
    "Coppermine",
    "Northwood",
    "Core2",
    "Penryn",
    "Dunnington",
    "Nehalem",
    "Atom",
    "Sandybridge",
    "Opteron",
    "Opteron(SSE3)",
    "Barcelona",
    "Nano",
    "Bobcat",
    "Bulldozer",
];

/// Whether OpenBLAS's core type `corename` has no AVX2 kernels.
pub fn pre_avx2(corename: &str) -> bool {
    PRE_AVX2
        .iter()
        .any(|c| c.eq_ignore_ascii_case(corename.trim()))
}

/// Whether this CPU has AVX2 (and FMA), the instructions of OpenBLAS's Haswell kernels.
pub fn cpu_has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// What `NTK_BLAS` (and the older `NTK_OPENBLAS=0`) asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// The first OpenBLAS found, else faer (`required`: else an error).
    Auto { required: bool },
    /// faer.
    Faer,
    /// This OpenBLAS library file.
    Path(PathBuf),
}

impl Request {
    /// Reads `NTK_BLAS` and `NTK_OPENBLAS`; an unknown word is an error naming the variable.
    pub fn from_env() -> Result<Self, crate::Error> {
        let blas = std::env::var("NTK_BLAS").ok();
        let old = std::env::var("NTK_OPENBLAS").ok();
        Self::parse(blas.as_deref(), old.as_deref())
    }

    fn parse(blas: Option<&str>, old: Option<&str>) -> Result<Self, crate::Error> {
        let required = cfg!(feature = "openblas");
        let bad = |value: &str, why: &str| crate::Error::BlasChoice {
            message: format!("{value:?}: {why}"),
        };
        match (blas.map(str::trim), old.map(str::trim)) {
            (Some(b), Some("0")) if !b.is_empty() && b != "faer" => Err(bad(
                b,
                "NTK_OPENBLAS=0 also asks for faer; unset one of the two",
            )),
            (None | Some(""), Some("0")) | (Some("faer"), _) => Ok(Request::Faer),
            (None | Some("") | Some("auto"), _) => Ok(Request::Auto { required }),
            (Some("openblas"), _) => Ok(Request::Auto { required: true }),
            (Some(p), _) if p.contains('/') || p.contains(".so") || p.contains(".dylib") => {
                Ok(Request::Path(PathBuf::from(p)))
            }
            (Some(other), _) => Err(bad(
                other,
                "expected auto, openblas, faer or the path of an OpenBLAS library",
            )),
        }
    }
}

/// Where `auto` looks, in order, with the home directory `home`.
pub fn candidates(home: Option<&Path>) -> Vec<PathBuf> {
    let mut list = Vec::new();
    let fetched = std::env::var_os("NTK_OPENBLAS_DIR")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".cache/ntk-openblas")));
    if let Some(dir) = fetched {
        list.push(dir.join("lib/libscipy_openblas.so"));
    }
    if let Some(dir) = std::env::var_os("OPENBLAS_LIB_DIR") {
        list.push(PathBuf::from(dir).join("libopenblas.so"));
    }
    // Looked up by the dynamic loader (its cache and LD_LIBRARY_PATH).
    list.push(PathBuf::from("libopenblas.so.0"));
    list.push(PathBuf::from("libopenblas.so"));
    list.push(PathBuf::from(
        "/opt/homebrew/opt/openblas/lib/libopenblas.dylib",
    ));
    list
}

/// Chooses and loads the library `request` asks for.
pub fn choose(request: &Request) -> Result<Library, crate::Error> {
    match request {
        Request::Faer => Ok(Library::Faer {
            why: "asked for by NTK_BLAS=faer".into(),
        }),
        Request::Path(p) => {
            OpenBlas::load(p)
                .map(Library::OpenBlas)
                .map_err(|why| crate::Error::BlasChoice {
                    message: format!("NTK_BLAS={}: cannot load it: {why}", p.display()),
                })
        }
        Request::Auto { required } => {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            let mut tried = Vec::new();
            for path in candidates(home.as_deref()) {
                let is_file_name = path.components().count() == 1;
                if !is_file_name && !path.exists() {
                    continue;
                }
                match OpenBlas::load(&path) {
                    Ok(o) => return Ok(Library::OpenBlas(o)),
                    Err(why) if is_file_name => tried.push(format!("{}: {why}", path.display())),
                    Err(why) => {
                        return Err(crate::Error::BlasChoice {
                            message: format!(
                                "{} exists but cannot be loaded: {why}",
                                path.display()
                            ),
                        });
                    }
                }
            }
            let why = "no OpenBLAS found; `bash scripts/setup.sh` fetches one";
            if *required {
                Err(crate::Error::BlasChoice {
                    message: format!(
                        "{why} (NTK_BLAS=openblas or the cargo feature `openblas` require one)"
                    ),
                })
            } else {
                Ok(Library::Faer { why: why.into() })
            }
        }
    }
}

static LIBRARY: OnceLock<Result<Library, crate::Error>> = OnceLock::new();

/// Chooses the host linear algebra for this process (once; later calls return the first
/// answer). The binaries call it first thing and exit with code 2 on an error; a warning
/// (an OpenBLAS older than the CPU) is printed once, to stderr.
pub fn load() -> Result<&'static Library, &'static crate::Error> {
    LIBRARY
        .get_or_init(|| {
            let library = Request::from_env().and_then(|r| choose(&r));
            if let Some(w) = library.as_ref().ok().and_then(Library::warning) {
                eprintln!("warning: {w}");
            }
            library
        })
        .as_ref()
}

/// The host linear algebra of this process ([`load`]); an invalid `NTK_BLAS` panics with the
/// error (the binaries have checked it at start-up).
pub fn library() -> &'static Library {
    load().unwrap_or_else(|e| panic!("the host linear algebra: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_words_mean_what_the_docs_say() {
        let auto = Request::Auto {
            required: cfg!(feature = "openblas"),
        };
        assert_eq!(Request::parse(None, None).unwrap(), auto);
        assert_eq!(Request::parse(Some("auto"), None).unwrap(), auto);
        assert_eq!(Request::parse(Some(""), Some("1")).unwrap(), auto);
        assert_eq!(Request::parse(None, Some("0")).unwrap(), Request::Faer);
        assert_eq!(Request::parse(Some("faer"), None).unwrap(), Request::Faer);
        assert_eq!(
            Request::parse(Some("faer"), Some("0")).unwrap(),
            Request::Faer
        );
        assert_eq!(
            Request::parse(Some("openblas"), None).unwrap(),
            Request::Auto { required: true }
        );
        assert_eq!(
            Request::parse(Some("/opt/lib/libopenblas.so"), None).unwrap(),
            Request::Path("/opt/lib/libopenblas.so".into())
        );
        let e = Request::parse(Some("mkl"), None).unwrap_err().to_string();
        assert!(e.contains("NTK_BLAS") && e.contains("\"mkl\""), "{e}");
        let e = Request::parse(Some("openblas"), Some("0"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("NTK_OPENBLAS=0"), "{e}");
    }

    #[test]
    fn a_library_that_is_not_there_is_an_error_naming_it() {
        let e = choose(&Request::Path("/nonexistent/libopenblas.so".into()))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("/nonexistent/libopenblas.so"), "{e}");
    }

    #[test]
    fn the_fetched_library_is_looked_for_first() {
        let c = candidates(Some(Path::new("/home/u")));
        if std::env::var_os("NTK_OPENBLAS_DIR").is_none() {
            assert_eq!(
                c[0],
                Path::new("/home/u/.cache/ntk-openblas/lib/libscipy_openblas.so")
            );
        }
        assert!(c.contains(&PathBuf::from("libopenblas.so.0")));
    }

    #[test]
    fn generic_kernels_are_told_from_current_ones() {
        assert!(pre_avx2("Prescott") && pre_avx2("sandybridge"));
        assert!(!pre_avx2("Haswell") && !pre_avx2("SkylakeX") && !pre_avx2("Zen"));
        assert!(!pre_avx2("SapphireRapids") && !pre_avx2("Cooperlake"));
    }

    /// The library this process runs: on a CPU with AVX2, an OpenBLAS must run AVX2 kernels
    /// or better (an OpenBLAS that does not know the CPU runs generic ones). With
    /// `NTK_TEST_REQUIRE_OPENBLAS=1` (CI sets it), faer here is a failure too.
    #[test]
    fn the_blas_runs_the_kernels_this_cpu_allows() {
        let library = library();
        eprintln!("host linear algebra: {}", library.report());
        if std::env::var("NTK_TEST_REQUIRE_OPENBLAS").is_ok_and(|v| v == "1")
            && !matches!(Request::from_env(), Ok(Request::Faer))
        {
            assert_eq!(library.name(), "openblas", "{}", library.report());
        }
        if let Library::OpenBlas(o) = library {
            assert!(
                !(cpu_has_avx2() && pre_avx2(&o.corename)),
                "{}",
                library.warning().unwrap_or_default()
            );
        }
    }
}
