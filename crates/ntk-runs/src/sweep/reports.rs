//! The report files (tables, figures) a collect or plot wrote in its directory, recorded by
//! size and SHA-256 in [`RECORD`] there ([`record_reports`]), so that a later collect or plot
//! that no longer writes one of them removes it where it is still as written, and says so
//! ([`say_stale_reports`]); a file at a report's name that the record does not prove the
//! tools' (a user's, one edited since, or one of a collect before the record existed) is
//! said and left as it is (seventy-fourth hostile round, D6: a user's `convergence.csv` was
//! removed; eighty-eighth, D5: a recomputed result set kept the figures and tables of what it
//! no longer had, only said).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::manifest::{self, Files};

/// The record's name in a collected directory (hidden: not a report of its own).
pub const RECORD: &str = ".ntk-reports.json";

/// What the record says it is: this tools' record of report files, of this format.
const OWNER: &str = "ntk report files, format 1";

/// [`RECORD`]'s contents.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    owner: String,
    files: Files,
}

/// The files the record in `out` holds; `Err` where something stands at its name that is not
/// this tools' record (then nothing is removed by it, nor written over it).
fn read(out: &Path) -> Result<Files, String> {
    let path = out.join(RECORD);
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Files::new()),
        Err(e) => return Err(e.to_string()),
        Ok(m) if !m.is_file() => return Err("not a regular file".into()),
        Ok(_) => {}
    }
    let bytes = ntk_files::io::read_limited(&path, 1 << 24).map_err(|e| e.to_string())?;
    match serde_json::from_slice::<Record>(&bytes) {
        Ok(r) if r.owner == OWNER => Ok(r.files),
        _ => Err("not a record of these tools' report files".into()),
    }
}

/// The files the record in `out` holds, none where something stands at its name that is not
/// this tools' record (which proves nothing).
pub(crate) fn recorded(out: &Path) -> Files {
    read(out).unwrap_or_default()
}

/// Records, in `out`'s [`RECORD`], the report files this collect or plot has just written
/// there (`written`: the names it wrote, each a regular file now), beside the earlier
/// record's files that are still as it recorded them. Said, never an error: a record that
/// cannot be written only leaves the next collect unable to prove those files its own.
pub fn record_reports(out: &Path, written: &dyn Fn(&str) -> bool) {
    let earlier = match read(out) {
        Ok(files) => files,
        Err(why) => {
            eprintln!(
                "warning: {}: {why}; left as it is, and the report files written now are not \
                 recorded (a later collect will say, not remove, those it no longer writes)",
                out.join(RECORD).display()
            );
            return;
        }
    };
    let names: Vec<String> = match std::fs::read_dir(out) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => return,
    };
    // The earlier record's files not written now that are still as it recorded them.
    let mut files: Files = earlier
        .iter()
        .filter(|(name, _)| !written(name) && manifest::holds_as_recorded(out, name, &earlier))
        .map(|(name, file)| (name.clone(), file.clone()))
        .collect();
    let now: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| *n != RECORD && written(n))
        .collect();
    match manifest::record(out, &now) {
        Ok(recorded) => files.extend(recorded),
        Err(e) => {
            eprintln!(
                "warning: {}: the report files written now are not recorded ({e})",
                out.display()
            );
            return;
        }
    }
    let record = Record {
        owner: OWNER.into(),
        files,
    };
    let bytes = serde_json::to_vec_pretty(&record).expect("the record serializes");
    if let Err(e) = ntk_files::io::atomic_write(&out.join(RECORD), &bytes) {
        eprintln!(
            "warning: {}: not written ({e}); a later collect will say, not remove, the report \
             files written now where it no longer writes them",
            out.join(RECORD).display()
        );
    }
}

/// How a dry run's line about report files begins ([`foresee_stale_reports`], [`retire`]).
pub const FORESEEN: &str = "reports: ";

/// Whether `line`, one a dry run prints, is about report files ([`FORESEEN`]).
pub fn is_foreseen_report(line: &str) -> bool {
    line.starts_with(FORESEEN)
}

/// The report files of `out` as an earlier collect or plot recorded writing them, which a
/// run that makes results again (`--recompute`) retires before its first step: they show
/// the results it replaces, and a run killed before its closing collect left them reading as
/// the directory's (hundred-and-fifty-third hostile round, second review, D1: a killed
/// `run --recompute` left sweep.csv and convergence.csv saying the replaced run had
/// finished). Removed where `remove` and each is this user's as recorded (tables, figures
/// and captions; not a `.json` cache of the config's, as ntk-probe's `theory.json`); the
/// line that says so (`None` where there is none): the run's `note:`, or what a dry run
/// foresees.
pub fn retire(out: &Path, remove: bool) -> Option<String> {
    let recorded = read(out).ok()?;
    let (mut removed, mut left): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    // A cache of the config's own (ntk-probe's `theory.json`) shows no result: kept.
    for name in recorded.keys().filter(|name| !name.ends_with(".json")) {
        let path = out.join(name);
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        let ours = manifest::holds_as_recorded(out, name, &recorded)
            && ntk_files::io::check_target(&path).is_ok()
            && (!remove || std::fs::remove_file(&path).is_ok());
        match ours {
            true => removed.push(name),
            false => left.push(name),
        }
    }
    removed.sort_unstable();
    left.sort_unstable();
    let mut parts = Vec::new();
    if !removed.is_empty() {
        parts.push(format!(
            "{}: {}",
            removed.join(", "),
            if remove {
                "an earlier collect's or plot's files, as it wrote them, of results --recompute \
                 replaces: removed before the first step"
            } else {
                "an earlier collect's or plot's files, as it wrote them, of results --recompute \
                 replaces: the run would remove them before its first step"
            }
        ));
    }
    // Those it cannot prove the tools' as written, or remove, are said, not passed over
    // (hundred-and-fifty-fourth hostile round, N1: an edited sweep.csv stood unsaid).
    if !left.is_empty() {
        parts.push(format!(
            "{}: of an earlier collect's or plot's names, but edited since it wrote them or \
             not this user's to remove: left as they are until the collect at the end (which \
             writes its tables and figures over them)",
            left.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "{}: {}; the collect at the run's or sweep's end writes them again",
            out.display(),
            parts.join("; ")
        )
    })
}

/// What [`say_stale_reports`] does with a stale report file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// As recorded, this user's: removed.
    Removed,
    /// As recorded, but not this user's to remove: left.
    NotOurs,
    /// Not as any collect recorded writing it: left.
    Unproven,
}

impl Fate {
    /// What the files are, as a collect says them and a dry run foresees them.
    fn what(self) -> &'static str {
        match self {
            Fate::Removed => {
                "an earlier collect's or plot's files, as it wrote them (recorded in \
                 .ntk-reports.json)"
            }
            Fate::NotOurs => {
                "an earlier collect's or plot's files as it wrote them, but not this user's to \
                 remove (another user's, or in a directory this user cannot change)"
            }
            Fate::Unproven => {
                "not proven an earlier collect's or plot's as it wrote them (a user's, edited \
                 since, or written before collects recorded their files)"
            }
        }
    }

    /// What the collect did with them, and how loud it says so.
    fn done(self) -> (&'static str, &'static str) {
        match self {
            Fate::Removed => ("note", "removed"),
            Fate::NotOurs | Fate::Unproven => ("warning", "left as they are"),
        }
    }

    /// What the collect that ends a sweep would do with them.
    fn foreseen(self) -> &'static str {
        match self {
            Fate::Removed => "the collect that ends the run or sweep would remove them",
            Fate::NotOurs | Fate::Unproven => {
                "the collect that ends the run or sweep would say and leave them"
            }
        }
    }
}

/// The report files standing in `out` that this collect or plot does not write now: `why`
/// gives, for a file name, the reason it is not written (`None`: written now, or not a
/// report file). Those the record proves the tools' ([`record_reports`]: as a collect or plot
/// wrote them) are removed; the others are left as they are, nothing showing a file at those
/// names to be the tools' and not a user's. Said, one line per reason, the files sorted,
/// saying they show `units` (`runs`, `points`) that are gone. Both tools' collect and plot
/// (eighty-third round, D1; eighty-fourth, D4; eighty-eighth, D5).
pub fn say_stale_reports(out: &Path, units: &str, why: &dyn Fn(&str) -> Option<String>) {
    settle(out, why, &format!(", so these show {units} that are gone"));
}

/// [`say_stale_reports`] for a plot that draws the figures of `from`'s `units` (`points`,
/// `runs`) into another directory `out`, where the figures that stand are not of `from`
/// (eighty-ninth hostile round, N2: a folder of figures alone was told its points "are
/// gone"). Where `out` is `from` itself, as [`say_stale_reports`].
pub fn say_stale_figures_of(
    out: &Path,
    (units, from): (&str, &Path),
    why: &dyn Fn(&str) -> Option<String>,
) {
    if same_dir(out, from) {
        return say_stale_reports(out, units, why);
    }
    let shows = format!(
        ", so these are not of {}'s {units}, which this plot draws",
        from.display()
    );
    settle(out, why, &shows);
}

/// Refuses, for a plot of `from`'s figures into another directory `out` (`plot --out`),
/// before any drawing, the regular files at the names it writes (`writes`) that the record
/// there ([`RECORD`]) does not prove the tools' as written: a user's own image at a figure's
/// name, or a figure edited since (hundred-and-twenty-fifth hostile round, D2: a user's
/// `train_loss.png` was replaced with "wrote"), and something at the record's name that is
/// not the tools' record. `from` itself is a collected directory whose figures a plot
/// replaces, as documented (a caption the record does not prove is kept there:
/// [`keep_edited_captions`]): nothing is refused there.
pub fn check_proven_figures(
    out: &Path,
    from: &Path,
    writes: &dyn Fn(&str) -> bool,
) -> ntk_files::Result<()> {
    if same_dir(out, from) {
        return Ok(());
    }
    // Something at the record's name that is not the tools' record (a FIFO, a directory, a
    // user's JSON) proves nothing, and the figures written now could not be recorded: a later
    // plot would refuse them as a user's (hundred-and-twenty-sixth hostile round, N1: it was
    // left with no word).
    let record = read(out).map_err(|why| ntk_files::Error::OutputPath {
        path: out.join(RECORD),
        why: format!(
            "{why}: the figures this plot writes could not be recorded there, and a later \
             plot would refuse them as not proven the tools'; move it, or choose another --out"
        ),
    })?;
    let Ok(entries) = std::fs::read_dir(out) else {
        return Ok(());
    };
    let mut unproven: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| writes(name) && !manifest::holds_as_recorded(out, name, &record))
        .collect();
    if unproven.is_empty() {
        return Ok(());
    }
    unproven.sort();
    Err(ntk_files::Error::UnprovenFigures {
        dir: out.to_path_buf(),
        files: unproven,
    })
}

/// Whether `a` and `b` name one directory (links resolved).
pub fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The captions (`STEM.caption.txt`) standing beside the figures this collect or plot drew
/// without one (`uncaptioned`: their stems; a screen figure draws its note under its legend):
/// an earlier column layout's, removed where the record proves them the tools' as written,
/// said and left otherwise, as [`say_stale_reports`] does (eighty-ninth hostile round, D5:
/// the figure's save removed them whatever wrote them).
pub fn settle_captions(out: &Path, uncaptioned: &[String]) {
    let captions: Vec<String> = uncaptioned
        .iter()
        .map(|stem| format!("{stem}.caption.txt"))
        .collect();
    settle(
        out,
        &|name| {
            captions
                .iter()
                .any(|c| c == name)
                .then(|| UNCAPTIONED.to_string())
        },
        "",
    );
}

/// Why a caption beside a figure drawn without one is settled ([`settle_captions`]).
const UNCAPTIONED: &str = "the captions of figures drawn now without one (a screen figure draws its note under its \
     legend)";

/// What a dry run foresees of the captions the collect that ends its sweep settles
/// ([`settle_captions`]: it draws every figure for a screen, without a caption): for each
/// `STEM.caption.txt` in `out` whose figure it draws (`draws`: a stem), a `reports:` line,
/// as [`foresee_stale_reports`] says the figures it no longer draws
/// (hundred-and-twenty-ninth hostile round, D3: the run removed or left them, the dry run
/// said nothing).
pub fn foresee_captions(out: &Path, draws: &dyn Fn(&str) -> bool) -> Vec<String> {
    let why = |name: &str| {
        name.strip_suffix(".caption.txt")
            .filter(|stem| draws(stem))
            .map(|_| UNCAPTIONED.to_string())
    };
    fates(out, &why, false)
        .into_iter()
        .map(|((why, fate), group)| {
            format!(
                "reports: {}: {}: {why}; {}: {}",
                out.display(),
                group.join(", "),
                fate.what(),
                fate.foreseen()
            )
        })
        .collect()
}

/// The stems among `captioned` (the figures this collect or plot draws with a caption, in a
/// column layout) whose caption (`STEM.caption.txt`) stands in `out` as a regular file that
/// the record ([`RECORD`]) does not prove the tools' as written: a user's, or one edited for
/// a paper since. Said, and kept: the caller draws those figures anew without writing their
/// captions, and records none of them (hundred-and-twenty-sixth hostile round, D2: a column
/// collect or plot of a directory itself replaced an edited caption with no word, where the
/// screen layout kept it).
pub fn keep_edited_captions(out: &Path, captioned: &[String]) -> Vec<String> {
    let recorded = read(out).unwrap_or_default();
    let mut kept: Vec<String> = captioned
        .iter()
        .filter(|stem| {
            let name = format!("{stem}.caption.txt");
            std::fs::symlink_metadata(out.join(&name)).is_ok_and(|m| m.is_file())
                && !manifest::holds_as_recorded(out, &name, &recorded)
        })
        .cloned()
        .collect();
    kept.sort();
    if !kept.is_empty() {
        let names: Vec<String> = kept.iter().map(|s| format!("{s}.caption.txt")).collect();
        // One caption or several, said as such (hundred-and-twenty-seventh hostile round,
        // N5: "their figures" for one).
        let (its, them) = if kept.len() == 1 {
            ("its figure is", "it")
        } else {
            ("their figures are", "them")
        };
        eprintln!(
            "warning: {}: {}: {}: kept; {its} drawn anew without writing {them} \
             (move {them} away to have the caption{} written)",
            out.display(),
            names.join(", "),
            Fate::Unproven.what(),
            if kept.len() == 1 { "" } else { "s" }
        );
    }
    kept
}

/// The stale report files of `out` (`why` gives a name's reason), grouped by reason and
/// fate, the names sorted; each removed where `remove` and its fate is [`Fate::Removed`].
fn fates(
    out: &Path,
    why: &dyn Fn(&str) -> Option<String>,
    remove: bool,
) -> Vec<((String, Fate), Vec<String>)> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    let mut stale: Vec<(String, String)> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != RECORD)
        .filter_map(|name| why(&name).map(|w| (name, w)))
        .collect();
    stale.sort();
    let recorded = read(out).unwrap_or_default();
    // (reason, fate) -> names
    let mut groups: Vec<((String, Fate), Vec<String>)> = Vec::new();
    for (name, why) in stale {
        let path = out.join(&name);
        // Removed only as the tools would replace it: this user's file (eighty-ninth hostile
        // round, D8: another user's figure was removed, where writing it is refused).
        let fate = if !manifest::holds_as_recorded(out, &name, &recorded) {
            Fate::Unproven
        } else if ntk_files::io::check_target(&path).is_err() {
            Fate::NotOurs
        } else if !remove || std::fs::remove_file(&path).is_ok() {
            Fate::Removed
        } else {
            Fate::NotOurs
        };
        let key = (why, fate);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, group)) => group.push(name),
            None => groups.push((key, vec![name])),
        }
    }
    groups
}

/// What a dry run foresees of the collect that ends its sweep (this run's, or under
/// `--shard` the last shard's to finish: ninetieth hostile round, D6) (eighty-ninth hostile
/// round, D2: a dry run named none of the report files its run then removed): one line per
/// reason and
/// fate, as [`say_stale_reports`] will say them, of the files standing in `out` that the
/// collect will not write (`why`, from the config the run makes: a name's reason, `None` for
/// one it may write or that is not a report file).
pub fn foresee_stale_reports(
    out: &Path,
    units: &str,
    why: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    fates(out, why, false)
        .into_iter()
        .map(|((why, fate), group)| {
            format!(
                "{FORESEEN}{}: {}: {why}, so these would show {units} that are gone; {}: {}",
                out.display(),
                group.join(", "),
                fate.what(),
                fate.foreseen()
            )
        })
        .collect()
}

/// [`say_stale_reports`] whose reasons (`why`) say in full why each file is not written
/// now: a collect that holds configurations out of its figures while runs are waited for
/// says so, not that their runs are gone (hundred-and-fortieth hostile round, D2).
pub fn say_stale_reports_as(out: &Path, why: &dyn Fn(&str) -> Option<String>) {
    settle(out, why, "");
}

/// [`say_stale_reports`] with `gone` after each reason.
fn settle(out: &Path, why: &dyn Fn(&str) -> Option<String>, gone: &str) {
    for ((why, fate), group) in fates(out, why, true) {
        let (level, done) = fate.done();
        eprintln!(
            "{level}: {}: {}: {why}{gone}; {}: {done}",
            out.display(),
            group.join(", "),
            fate.what()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded file no longer written is removed; one edited since, one the record never
    /// held (a user's), and one written now stay; a record that is not the tools' is left,
    /// and proves nothing.
    #[test]
    fn only_files_as_a_collect_recorded_them_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        for name in ["a.csv", "b.png", "c.svg", "d.pdf"] {
            std::fs::write(out.join(name), name).unwrap();
        }
        record_reports(out, &|n: &str| n != "d.pdf");
        std::fs::write(out.join("b.png"), "edited").unwrap();
        let stale = |n: &str| (n != "a.csv").then(|| "not drawn now".to_string());
        // A dry run foresees it, removing nothing (eighty-ninth hostile round, D2).
        let foreseen = foresee_stale_reports(out, "points", &stale);
        assert_eq!(foreseen.len(), 2, "{foreseen:?}");
        let line = |names: &str| foreseen.iter().find(|l| l.contains(names)).unwrap();
        assert!(line(": c.svg: not drawn now").contains("would remove them"));
        assert!(line(": b.png, d.pdf: not drawn now").contains("say and leave"));
        assert!(out.join("c.svg").exists(), "a dry run removes nothing");
        say_stale_reports(out, "points", &stale);
        assert!(out.join("a.csv").exists(), "written now");
        assert!(out.join("b.png").exists(), "edited since");
        assert!(!out.join("c.svg").exists(), "as recorded: removed");
        assert!(out.join("d.pdf").exists(), "never recorded");
        // The next record drops what is gone or changed.
        record_reports(out, &|n: &str| n == "a.csv");
        let files = read(out).unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), ["a.csv"]);
        // Eighty-ninth hostile round, D8: as recorded but another user's (as root, a file
        // given to nobody stands for one): left, as a write there would be refused.
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            std::fs::write(out.join("e.png"), "e").unwrap();
            record_reports(out, &|n: &str| n == "a.csv" || n == "e.png");
            std::os::unix::fs::chown(out.join("e.png"), Some(65534), Some(65534)).unwrap();
            say_stale_reports(out, "points", &|n: &str| {
                (n == "e.png").then(|| "not drawn now".to_string())
            });
            assert!(out.join("e.png").exists(), "another user's: left");
        }
        // Not the tools' record: left as it is, removes nothing.
        std::fs::write(out.join(RECORD), "{}").unwrap();
        record_reports(out, &|_| true);
        assert_eq!(std::fs::read_to_string(out.join(RECORD)).unwrap(), "{}");
        say_stale_reports(out, "points", &|_| Some("not drawn now".into()));
        for name in ["a.csv", "b.png", "d.pdf"] {
            assert!(out.join(name).exists(), "{name}");
        }
    }
}
