//! The extreme-eigenvalue route (`probe.eigen = "extreme"`) as the probe's command line and
//! config take it; the route itself is tested in ntk-kernel (`tests/kernel/extreme.rs`).

use crate::common::*;

/// `probe.eigen = "extreme"` through the command line: the summary says so, kappa agrees
/// with the full spectrum's run within 1e-8, and eigenvalues.npy holds the two extremes.
#[test]
fn the_probe_takes_kappa_by_the_extreme_route_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let run = |eigen: &str| {
        let text = format!(
            "[data]\ndataset = \"synthetic\"\nn = 120\ninput_dim = 5\n\n[model]\nwidth = 64\n\
             depth = 3\nactivation = \"relu\"\nseed = 1\n\n[probe]\nprecision = \"f64\"\n\
             eigen = \"{eigen}\"\n"
        );
        let cfg = write_file(dir.path(), &format!("{eigen}.toml"), &text);
        let out = dir.path().join(eigen);
        let o = ntk_cli(&cfg, &out);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        let (ev, shape) = ntk_files::npy::read(&out.join("eigenvalues.npy")).unwrap();
        (s, ev, shape)
    };
    let (full, full_ev, full_shape) = run("full");
    let (ext, ext_ev, ext_shape) = run("extreme");
    assert_eq!(full["eigen"], "full");
    assert_eq!(ext["eigen"], "extreme");
    assert_eq!(full_shape, [120]);
    assert_eq!(ext_shape, [2]);
    let rel = |a: &serde_json::Value, b: &serde_json::Value| {
        (a.as_f64().unwrap() / b.as_f64().unwrap() - 1.0).abs()
    };
    assert!(rel(&ext["kappa"], &full["kappa"]) < 1e-8, "{ext} vs {full}");
    assert!((ext_ev[0] / full_ev[0] - 1.0).abs() < 1e-8);
    assert!((ext_ev[1] / full_ev[119] - 1.0).abs() < 1e-8);
    // An unknown choice is refused, naming the key.
    let cfg = write_file(
        dir.path(),
        "bad.toml",
        "[data]\ndataset = \"synthetic\"\nn = 10\ninput_dim = 5\n[model]\nwidth = 8\ndepth = 1\nactivation = \"relu\"\n\
         [probe]\neigen = \"some\"\n",
    );
    let o = ntk_cli(&cfg, dir.path().join("bad"));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("eigen"));
}

/// `probe.eigen` at its default leaves a config's resolved form (and so its fingerprint) as
/// it was before the key existed: results recorded then still match. `extreme` shows.
#[test]
fn the_default_eigen_route_keeps_old_fingerprints() {
    use ntk_probe::config::ProbeConfig;
    use ntk_runs::provenance::flatten_config;
    let text = "[data]\ndataset = \"synthetic\"\nn = 10\ninput_dim = 5\n[model]\nwidth = 8\n\
                depth = 1\nactivation = \"relu\"\n";
    let full = flatten_config(&ProbeConfig::parse(text).unwrap());
    assert!(!full.keys().any(|k| k.contains("eigen")), "{full:?}");
    let explicit =
        flatten_config(&ProbeConfig::parse(&format!("{text}[probe]\neigen = \"full\"\n")).unwrap());
    assert_eq!(full, explicit);
    let extreme = flatten_config(
        &ProbeConfig::parse(&format!("{text}[probe]\neigen = \"extreme\"\n")).unwrap(),
    );
    assert_eq!(
        extreme.get("probe.eigen"),
        Some(&serde_json::json!("extreme"))
    );
}

/// `probe.eigen = "tiled"`: the whole-set kernel in tiles of its lower triangle gives the
/// full spectrum's lambda_min, lambda_max and kappa to 1e-9 and the same minimum gradient
/// angle, writes no ntk.npy and `[lambda_min, lambda_max]` as eigenvalues.npy; what it does
/// not apply to is refused by name.
#[test]
fn the_tiled_route_gives_the_full_spectrums_extremes() {
    let dir = tempfile::tempdir().unwrap();
    let base = "[data]\ndataset = \"synthetic\"\nn = 300\ninput_dim = 12\n[model]\nwidth = 64\n\
                depth = 3\nactivation = \"gelu\"\noutput_dim = 2\nbias = true\n[probe]\n\
                precision = \"f64\"\n";
    let mut got = Vec::new();
    for eigen in ["full", "tiled"] {
        let cfg = write_file(
            dir.path(),
            &format!("{eigen}.toml"),
            &format!("{base}eigen = \"{eigen}\"\n"),
        );
        let out = dir.path().join(eigen);
        let o = ntk_cli(&cfg, &out);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(s["eigen"], eigen);
        got.push(s);
    }
    for key in ["lambda_min", "lambda_max", "kappa", "min_grad_angle_deg"] {
        let (a, b) = (got[0][key].as_f64().unwrap(), got[1][key].as_f64().unwrap());
        assert!((a / b - 1.0).abs() < 1e-9, "{key}: full {a}, tiled {b}");
    }
    // With --json, stdout is the summary alone: the tiled route's progress lines (its plan,
    // the phases) go to stderr.
    let o = probe()
        .args(["ntk", "--json", "--config"])
        .arg(dir.path().join("tiled.toml"))
        .arg("--out")
        .arg(dir.path().join("tiled_json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    assert_eq!(json["eigen"], "tiled");
    let tiled = dir.path().join("tiled");
    assert!(!tiled.join("ntk.npy").exists());
    let (ev, shape) = ntk_files::npy::read(&tiled.join("eigenvalues.npy")).unwrap();
    assert_eq!(shape, [2]);
    assert_eq!(ev[1], got[1]["lambda_max"].as_f64().unwrap());
    for (extra, words) in [
        (
            "eigen = \"tiled\"\nprotocol = \"blocks\"",
            "whole protocol only",
        ),
        ("eigen = \"tiled\"\npair = [0, 1]", "probe.pair"),
        (
            "eigen = \"tiled\"\noutput = \"full\"",
            "summed over the outputs",
        ),
    ] {
        let cfg = write_file(dir.path(), "bad.toml", &format!("{base}{extra}\n"));
        let o = ntk_cli(&cfg, dir.path().join("bad"));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra}: {err}");
        assert!(
            err.contains("probe.eigen") && err.contains(words),
            "{extra}: {err}"
        );
    }
    let f32 = base.replace("precision = \"f64\"", "precision = \"f32\"");
    let cfg = write_file(dir.path(), "f32.toml", &format!("{f32}eigen = \"tiled\"\n"));
    let o = ntk_cli(&cfg, dir.path().join("f32"));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("computes in f64"));
}

/// A sweep by the tiled route: every point's kappa and minimum angle are the full spectrum's
/// sweep's (1e-9), and the tables say `tiled`.
#[test]
fn a_tiled_sweep_has_the_full_sweeps_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let mut tables = Vec::new();
    for eigen in ["full", "tiled"] {
        let text = format!(
            "[sweep]\ndepths = [1, 3]\nactivations = [\"relu\", \"erf\"]\nseeds = [1]\n\
             protocols = [\"whole\"]\nout = \"unused\"\ntheory = false\n[data]\n\
             dataset = \"synthetic\"\nn = 150\ninput_dim = 6\n[model]\nwidth = 48\n\
             depth = 1\nactivation = \"relu\"\n[probe]\nprecision = \"f64\"\neigen = \"{eigen}\"\n"
        );
        let cfg = write_file(dir.path(), &format!("{eigen}.toml"), &text);
        let out = dir.path().join(eigen);
        let o = probe()
            .args(["sweep", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
        let mut rdr = csv::Reader::from_reader(text.as_bytes());
        let h = rdr.headers().unwrap().clone();
        let col = |name: &str| h.iter().position(|x| x == name).unwrap();
        let rows: Vec<(String, f64, f64)> = rdr
            .records()
            .map(|r| {
                let r = r.unwrap();
                assert_eq!(&r[col("eigen")], eigen);
                (
                    format!("{} {}", &r[col("activation")], &r[col("depth")]),
                    r[col("kappa")].parse().unwrap(),
                    r[col("min_grad_angle_deg")].parse().unwrap(),
                )
            })
            .collect();
        tables.push(rows);
    }
    assert_eq!(tables[0].len(), 4);
    for (a, b) in tables[0].iter().zip(&tables[1]) {
        assert_eq!(a.0, b.0);
        assert!(
            (a.1 / b.1 - 1.0).abs() < 1e-9,
            "{}: kappa {} vs {}",
            a.0,
            a.1,
            b.1
        );
        assert!(
            (a.2 / b.2 - 1.0).abs() < 1e-9,
            "{}: angle {} vs {}",
            a.0,
            a.2,
            b.2
        );
    }
}
