//! A point's summary held to the directory it sits in: a sweep names each point's directory
//! by the point ([`super::Point::dir`]: `runs/[n<N>/][width<W>/]<activation>/depth<NN>/
//! seed<S>/<protocol>/`), so a summary that records another point is not its directory's.
//! Either it was copied there from that point (the files beside it are not the ones it
//! records), or the point's whole directory was renamed (they are). Before this, a summary
//! copied from another point blamed the intact `eigenvalues.npy` beside it
//! (hundred-and-forty-eighth hostile round, D2), and a swapped pair of point directories was
//! taken by `collect` and called "made by a different config" by the plans (the
//! hundred-and-forty-ninth, N9). Paths not of that form (a merged experiment's own
//! directories) are not held to it.

use std::path::Path;

use ntk_model::ActivationKind;

use crate::config::Protocol;
use crate::run::Summary;

/// How a sweep names a point's directory, said with each refusal.
const NAMING: &str = "a sweep names each point's directory by its setting, activation, depth, \
                      seed and protocol";

/// Why the set of the summary at `path` is not read: it lies inside another set's
/// directory (one holding a `summary.json`), at any depth below it up to `root` (the sweep's
/// `runs/`; not the nearest directory of that name: a `runs/` inside a set's directory
/// hid it, hundred-and-fifty-fifth hostile round, second review, N1); `None` where it does
/// not.
pub(crate) fn nested(path: &Path, root: &Path) -> Option<String> {
    let dir = path.parent()?;
    let outer = dir
        .ancestors()
        .skip(1)
        .take_while(|a| *a != root && a.starts_with(root))
        .find(|a| std::fs::symlink_metadata(a.join("summary.json")).is_ok())?;
    Some(format!(
        "{}: a point's set inside the set directory {}: each point has a directory of its \
         own, so neither is read as it is; move it out (to the place its summary.json \
         records, or out of runs/)",
        dir.display(),
        outer.display()
    ))
}

/// Why the summary `s` at `path` is not its directory's: each level of the path that names
/// the point otherwise than `s` records it, and which of the two causes the files beside it
/// show. `None` where they agree, or where the path is not of a point's form.
pub(crate) fn misplaced(s: &Summary, path: &Path) -> Option<String> {
    // An edited summary is named as edited by the checks that hold it to its checksum.
    if !ntk_runs::provenance::SelfChecksum::sealed(s) {
        return None;
    }
    let named = NamedPoint::of(path)?;
    let recorded_activation = s.activation.split('(').next().unwrap_or(&s.activation);
    let mut differs = Vec::new();
    if named.activation.name() != recorded_activation {
        differs.push(format!(
            "activation {} where its directory says {}",
            recorded_activation,
            named.activation.name()
        ));
    }
    if named.depth != s.depth {
        differs.push(format!(
            "depth {} where its directory says depth{:02}",
            s.depth, named.depth
        ));
    }
    if named.seed != s.seed {
        differs.push(format!(
            "seed {} where its directory says seed{}",
            s.seed, named.seed
        ));
    }
    if named.protocol != s.protocol {
        differs.push(format!(
            "protocol {} where its directory says {}",
            s.protocol, named.protocol
        ));
    }
    if let Some(n) = named.n.filter(|n| *n != s.n) {
        differs.push(format!("n {} where its directory says n{n}", s.n));
    }
    if let Some(w) = named.width.filter(|w| *w != s.width) {
        differs.push(format!(
            "width {} where its directory says width{w}",
            s.width
        ));
    }
    if differs.is_empty() {
        return None;
    }
    let dir = path.parent()?;
    let files_are_its = s.files.as_ref().is_some_and(|files| {
        ntk_runs::manifest::verify(
            dir,
            files,
            <Summary as ntk_runs::sweep::Recorded>::SET_FILES,
            path,
        )
        .is_ok()
    });
    let cause = if files_are_its {
        format!(
            "the point's directory was renamed (its files with it), or copied; {}",
            move_back(s, &named, dir)
        )
    } else {
        format!(
            "summary.json was copied from that point (the files beside it are not the ones it \
             records); put the point's own summary back, or {}",
            super::REDO
        )
    };
    Some(format!(
        "{}: records another point ({}; {NAMING}): {cause}",
        path.display(),
        differs.join(", ")
    ))
}

/// Why the summary `s` at `path`, outside every point's directory, is a point of `points`
/// (the config's) under another directory's name: its recorded config is that point's. Moved
/// there (a point's set set aside under `runs/`, or a `whole/` renamed), it is kept where it
/// belongs; where the point's own set is there too, one is a copy of the other. Said before
/// any work by the run and its dry run alike, and by `collect --config` (hundred-and-fiftieth
/// hostile round, D3: the dry run planned the point `new` with rc 0, the run computed it and
/// then refused the two at its collect; D2: `collect --config` called it no point of the
/// config). `None` where it records no point of `points`.
pub(super) fn elsewhere(
    sweep: &super::ProbeSweep,
    points: &[super::Point],
    path: &Path,
    s: &Summary,
) -> Option<String> {
    let recorded = s.provenance.as_ref()?;
    let (point, protocol) = points.iter().find_map(|p| {
        sweep
            .provenances(p)
            .into_iter()
            .find(|(_, prov)| prov.fingerprint == recorded.fingerprint)
            .map(|(protocol, _)| (p, protocol))
    })?;
    let to = point.dir(sweep.out).join(protocol.name());
    let label = format!(
        "{} depth {} seed {}",
        point.activation.name(),
        point.depth,
        point.seed
    );
    Some(
        if std::fs::symlink_metadata(to.join("summary.json")).is_ok() {
            format!(
                "{}: records the point {label} ({protocol}) of this config, whose set {} holds too: \
             one is a copy of the other, which a merge would count twice; remove the copy",
                path.display(),
                to.display()
            )
        } else {
            // Its place's parent gone too (a renamed depth or seed level): said, so that a
            // literal `mv` does not fail (hundred-and-fifty-first hostile round, N1).
            let parent = match to.parent().is_some_and(Path::is_dir) {
                true => "",
                false => " (its parent directory is not there: create it first)",
            };
            format!(
                "{}: records the point {label} ({protocol}) of this config, under another \
                 directory's name: move its directory to {}{parent} and the sweep keeps it, \
                 instead of computing it again",
                path.display(),
                to.display()
            )
        },
    )
}

/// The remedy for a renamed point whose set is in `dir` (named `named`, recording `s`): move
/// it back where its point's set goes, said where the setting's levels agree, and where
/// another set is there now, to move that one aside first (as ntk-train says it: the
/// hundred-and-forty-eighth hostile round, N6).
fn move_back(s: &Summary, named: &NamedPoint, dir: &Path) -> String {
    let setting = dir.ancestors().nth(4);
    let agree = named.n.is_none_or(|n| n == s.n) && named.width.is_none_or(|w| w == s.width);
    let kind = ActivationKind::parse(s.activation.split('(').next().unwrap_or_default());
    let (Some(setting), true, Some(kind)) = (setting, agree, kind) else {
        return "move it back".to_string();
    };
    let to = setting
        .join(kind.name())
        .join(format!("depth{:02}", s.depth))
        .join(format!("seed{}", s.seed))
        .join(s.protocol.name());
    // The same set at its place: this one is a copy, not a renamed point (hundred-and-
    // fiftieth hostile round, second review, N1: the intact original was to be moved aside).
    if ntk_runs::manifest::same_summary(dir, &to) {
        return format!(
            "it is a copy of {} (the same summary.json): remove this copy, or {}",
            to.display(),
            super::REDO
        );
    }
    if std::fs::symlink_metadata(&to).is_ok() {
        format!(
            "its set belongs in {}, which another set holds now: move that one out of runs/ \
             first (a set left under runs/ is read as a point), then move this one back",
            to.display()
        )
    } else if to.parent().is_some_and(|p| !p.is_dir()) {
        // A renamed level above the set (`depth01` itself): its place's parent is gone
        // (hundred-and-fiftieth hostile round, N5: a literal `mv` into it failed).
        format!(
            "move it back: its set belongs in {} (its parent directory is not there: move the \
             renamed directory above it back, or create the parent first)",
            to.display()
        )
    } else {
        format!("move it back: its set belongs in {}", to.display())
    }
}

/// The point a summary's path names, where each level is of the form [`super::Point::dir`]
/// writes.
struct NamedPoint {
    activation: ActivationKind,
    depth: usize,
    seed: u64,
    protocol: Protocol,
    /// `n<N>` and `width<W>` above the activation, below `runs/` (swept settings only).
    n: Option<usize>,
    width: Option<usize>,
}

impl NamedPoint {
    fn of(path: &Path) -> Option<Self> {
        let mut levels = path.parent()?.ancestors();
        let mut name = || levels.next()?.file_name()?.to_str();
        let protocol = ntk_names::parse::<Protocol>(name()?)?;
        let seed = numbered(name()?, "seed", |v| format!("seed{v}"))?;
        let depth = numbered(name()?, "depth", |v| format!("depth{v:02}"))?;
        let activation = ActivationKind::parse(name()?)?;
        let (mut n, mut width) = (None, None);
        // Only under a sweep's `runs/`: a single run's output set is named by the user.
        loop {
            let level = name()?;
            if level == "runs" {
                break;
            }
            if let Some(v) = numbered(level, "width", |v| format!("width{v}")) {
                width = width.or(Some(v as usize));
            } else if let Some(v) = numbered(level, "n", |v| format!("n{v}")) {
                n = n.or(Some(v as usize));
            }
        }
        Some(Self {
            activation,
            depth: depth as usize,
            seed,
            protocol,
            n,
            width,
        })
    }
}

/// The number of a level named `<prefix><number>`, where `form` writes it back as it is
/// (`depth01`, not `depth1` or `depth+1`).
fn numbered(level: &str, prefix: &str, form: impl Fn(u64) -> String) -> Option<u64> {
    let value: u64 = level.strip_prefix(prefix)?.parse().ok()?;
    (form(value) == level).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The levels a sweep writes are read back; other names are not a point's form.
    #[test]
    fn a_points_path_is_read_back_and_others_are_not() {
        let p = NamedPoint::of(Path::new(
            "out/runs/n30/width32/relu/depth02/seed7/whole/summary.json",
        ))
        .unwrap();
        assert_eq!(
            (p.activation, p.depth, p.seed, p.protocol, p.n, p.width),
            (
                ActivationKind::Relu,
                2,
                7,
                Protocol::Whole,
                Some(30),
                Some(32)
            )
        );
        for other in [
            "out/runs/relu/depth2/seed7/whole/summary.json",
            "out/runs/relu/depth02/seed07/whole/summary.json",
            "out/runs/relu/depth02/seed7/other/summary.json",
            "out/runs/nope/depth02/seed7/whole/summary.json",
            "out/runs/mine/summary.json",
            "out/relu/depth02/seed7/whole/summary.json",
        ] {
            assert!(NamedPoint::of(Path::new(other)).is_none(), "{other}");
        }
    }
}
