//! A sweep's lifecycle, written once for both tools: claim the output directory, plan this
//! shard's points, refuse before any work, make what is not done; the dry run that refuses
//! exactly as the run would; `collect --config`'s check. Each tool's part is its
//! [`Sweep`] implementation.

use std::fmt::Display;
use std::path::Path;

use super::{
    Failure, Outcome, Planned, Recompute, Shard, State, Sweep, links_under, make_all, outside,
    plan, point_state, print_plan, refuse_blocked, refuse_foreign, refuse_stale,
    refuse_stale_in_collect, stale_reasons, warn_incomplete,
};
use crate::progress::Reporter;
use ntk_files::lock::SweepClaim;

/// The output directory `out` taken for this shard of a sweep of `points` points (`unit`:
/// "point", "run"): `None`, said on stdout, when the shard owns none of them; else checked
/// writable and claimed for the config of `fingerprint` (read from `config`) as long as the
/// claim lives: writers of another config are refused ([`SweepClaim`]).
pub fn claim(
    out: &Path,
    shard: Shard,
    (points, unit): (usize, &str),
    fingerprint: &str,
    config: &Path,
) -> crate::Result<Option<SweepClaim>> {
    if !(0..points).any(|p| shard.owns(p)) {
        println!(
            "shard {}/{} owns none of the {points} {unit}(s): nothing to do",
            shard.index, shard.count
        );
        return Ok(None);
    }
    let made_out = std::fs::symlink_metadata(out).is_err();
    ntk_files::outset::check_writable(out)?;
    let what = format!("config {}", config.display());
    Ok(Some(SweepClaim::acquire_made(
        out,
        fingerprint,
        &what,
        made_out,
    )?))
}

/// The run: this shard's points planned with their states; refused before any work while a
/// result of another config is in the way (unless `recompute`, which makes it again) or the
/// tool refuses ([`Sweep::refuse`]); then every point not done made, in the tool's order
/// ([`Sweep::order`]). A point that fails is recorded and the others go on
/// ([`Outcome::check`] is the error the sweep ends with).
pub fn execute<S: Sweep>(
    sweep: &mut S,
    points: &[S::Point],
    shard: Shard,
    recompute: bool,
    reporter: &Reporter,
) -> Result<Outcome<S::Made>, S::Error> {
    let (mut planned, recompute) = refused(sweep, points, shard, recompute, false)?;
    // A finished point is not made again, so nothing else cleans what a killed writer left
    // in it (hundred-and-thirty-first hostile round, second review, N1: a killed
    // `ntk-train run`'s `metrics.csv.ntk-tmp-PID` stayed after its `--resume` finished).
    for p in planned.iter().filter(|p| p.state == State::Done) {
        sweep.tidy(&points[p.index]);
    }
    sweep.order(points, &mut planned);
    // Results made again: the report files that show them go first (the closing collect
    // writes them again), so that a run killed before it leaves none reading as these.
    if planned.iter().any(|p| matches!(p.state, State::Stale(_)))
        && let Some(retired) = super::reports::retire(sweep.out(), true)
    {
        eprintln!("note: {retired}");
    }
    let mut outcome = make_all(sweep, points, &planned, reporter)?;
    // Decided at the end, not the start: shards run at once make theirs meanwhile, and the
    // last to end finds none left and collects (sixty-second hostile round, D1: each said
    // the others' points were another config's, which was false by then, and none
    // collected).
    for &index in &recompute.elsewhere {
        if matches!(sweep.state(&points[index])?, State::Stale(_)) {
            outcome.left_to_other_shards += 1;
        }
    }
    if shard.count > 1 {
        for (index, point) in points.iter().enumerate() {
            if !shard.owns(index) && sweep.state(point)? != State::Done {
                outcome.unfinished_elsewhere += 1;
            }
        }
    }
    Ok(outcome)
}

/// `--dry-run`: every point of this shard with its state, what would make them
/// ([`Sweep::computes`]), then the refusals of [`execute`], in the same words; makes
/// nothing. A point the run would make but that the tool foresees failing
/// ([`Sweep::foresee`]) is listed as `fails` with why, and the dry run then ends with an
/// error naming the first (the run would make the others and end with that point's
/// failure). Returns the plan, for refusals the tool adds.
pub fn dry_run<S: Sweep>(
    sweep: &S,
    points: &[S::Point],
    shard: Shard,
    recompute: bool,
) -> Result<Vec<Planned>, S::Error> {
    refused(sweep, points, shard, recompute, true).map(|(planned, _)| planned)
}

/// This shard's plan, printed when `print`, refused as [`execute`] refuses; with what
/// `--recompute` makes again.
fn refused<S: Sweep>(
    sweep: &S,
    points: &[S::Point],
    shard: Shard,
    recompute: bool,
    print: bool,
) -> Result<(Vec<Planned>, Recompute), S::Error> {
    let planned = plan(sweep, points, shard)?;
    let mut fails = Vec::new();
    if print {
        // In the order the run makes them, so that the first failure foreseen is the run's
        // first (ninety-third hostile round, N6: the probe makes a family's deepest network
        // first, and the dry run named the shallowest).
        let mut ordered = planned.clone();
        sweep.order(points, &mut ordered);
        let made: Vec<usize> = ordered
            .iter()
            .filter(|p| match p.state {
                State::Done => false,
                State::Stale(_) => recompute,
                _ => true,
            })
            .map(|p| p.index)
            .collect();
        // What the run would foresee takes seconds a point where the tool checks a kernel's
        // range on the host (minutes over a large sweep): its progress on stderr, the plan
        // alone on stdout, and nothing for a dry run done within the log's interval
        // (sixty-eighth hostile round, N3: minutes of silence before the first line).
        let bar = Reporter::beside_results().timed_bar(made.len() as u64, "dry run".into());
        bar.set_message(format!("{}(s) foreseen", S::UNIT));
        for &index in &made {
            if let Some(why) = sweep.foresee(&points[index])? {
                fails.push((index, why));
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        print_plan(sweep, points, &planned, &fails, shard, recompute);
        // Report files retired before the first step (results made again) are not there for
        // the closing collect to speak of: said once, as the run says them.
        let retired = (recompute && !stale_reasons(&planned).is_empty())
            .then(|| super::reports::retire(sweep.out(), false))
            .flatten();
        for line in sweep.foreseen(points, &planned) {
            if retired.is_none() || !super::reports::is_foreseen_report(&line) {
                println!("{line}");
            }
        }
        // What would make the points, where the run gets so far: a run refused for stale
        // points makes none, and "no run to train" before that refusal read as if all were
        // done (ninety-sixth hostile round, N5).
        if recompute || stale_reasons(&planned).is_empty() {
            println!("{}", sweep.computes(&made));
        }
        if let Some(retired) = retired {
            println!("{}{retired}", super::reports::FORESEEN);
        }
    }
    // Nothing is made through a symbolic link under the output directory (seventh hostile
    // round: a run directory or `runs/relu` linked elsewhere was trained there, "8 run(s)
    // trained", and left out of the sweep's own tables, which never follow a link).
    refuse_links(sweep.out())?;
    for p in planned.iter().filter(|p| p.state != State::Done) {
        check_point_dir(sweep.out(), &sweep.dir(&points[p.index]))?;
    }
    // No point is made again over another user's files: its set would replace them
    // (ninety-fifth hostile round, D4: `--recompute`, as the stale point's message advised,
    // replaced root's point). Before the stale points' refusal, whose remedy would not do.
    for p in planned.iter().filter(|p| p.state != State::Done) {
        refuse_others_files(&sweep.dir(&points[p.index]))?;
    }
    // Nor over a file of the user's at a point's name (ninety-ninth hostile round, D2).
    refuse_blocked(&planned, S::UNIT)?;
    // Nothing is made while a result of another config is in the way.
    refuse_stale(&planned, recompute, S::UNIT, print)?;
    // A file at a failure record's name that the tools did not write (fortieth hostile
    // round, D3): not read as a failure, not removed once the point is made; refused.
    for p in planned.iter().filter(|p| p.state != State::Done) {
        Failure::check(&sweep.dir(&points[p.index]))?;
    }
    let recompute = Recompute {
        given: recompute,
        elsewhere: if recompute {
            stale_elsewhere(sweep, points, shard)?
        } else {
            Vec::new()
        },
    };
    sweep.refuse(points, &planned, &recompute)?;
    // The run says, once nothing refuses it, what its collect will take in beside its
    // points, and so does its dry run: before the refusals it said a collect would take in
    // a run the sweep then refused (hundred-and-fifty-second hostile round, D3).
    if let Some(beyond) = super::beyond_points(sweep, points) {
        match print {
            true => println!("beyond: {beyond}"),
            false => eprintln!("note: {beyond}"),
        }
    }
    if let Some((index, why)) = fails.first() {
        let label = sweep.label(&points[*index]);
        return Err(crate::Error::WouldFail {
            count: fails.len(),
            unit: S::UNIT.to_string(),
            first: format!(
                "{}: {why}",
                label.split_whitespace().collect::<Vec<_>>().join(" ")
            ),
        }
        .into());
    }
    Ok((planned, recompute))
}

/// The points of the sweep's other shards whose results are another config's: with
/// `--recompute` their own shards make them again ([`Recompute::elsewhere`]).
fn stale_elsewhere<S: Sweep>(
    sweep: &S,
    points: &[S::Point],
    shard: Shard,
) -> Result<Vec<usize>, S::Error> {
    let mut stale = Vec::new();
    for (index, point) in points.iter().enumerate() {
        if !shard.owns(index) && matches!(sweep.state(point)?, State::Stale(_)) {
            stale.push(index);
        }
    }
    Ok(stale)
}

/// Refuses, before any work, a point whose directory `dir`, or a directory between it and
/// the sweep's `out`, is something other than a directory (a FIFO, a user's file): the point
/// could neither be made nor its failure recorded there (fifty-third hostile round, D2: the
/// dry run passed; the run failed those points with the system's errors and said each
/// failure was recorded in its `failed.json`, where none could be). Absent is fine: the run
/// makes it.
/// Refuses a point directory `dir` holding a regular file of another user (links not
/// followed): making the point again would replace it, where the tools replace only this
/// user's files (`ntk_files::io::check_target`).
fn refuse_others_files(dir: &Path) -> crate::Result<()> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(e.path());
            } else if meta.is_file()
                && let Some((owner, me)) = ntk_files::io::not_ours(&meta)
            {
                return Err(ntk_files::Error::OutputPath {
                    path: e.path(),
                    why: format!(
                        "a file of user {owner}, not this user's ({me}): making its point ({}) \
                         again would replace it; it is that user's to make again, or move the \
                         point out of runs/",
                        dir.display()
                    ),
                }
                .into());
            }
        }
    }
    Ok(())
}

fn check_point_dir(out: &Path, dir: &Path) -> crate::Result<()> {
    let Ok(below) = dir.strip_prefix(out) else {
        return Ok(());
    };
    let mut path = out.to_path_buf();
    for part in below.components() {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Err(_) => return Ok(()),
            Ok(m) if m.is_dir() => {}
            Ok(m) => {
                let what = if m.is_file() {
                    "a file"
                } else {
                    ntk_files::io::kind_of(m.file_type())
                };
                return Err(ntk_files::Error::OutputPath {
                    path,
                    why: format!(
                        "is {what}, where the sweep makes a point's directory ({}); move it",
                        dir.display()
                    ),
                }
                .into());
            }
        }
    }
    Ok(())
}

/// Refuses a symbolic link anywhere under a sweep's output directory `out` ([`links_under`]:
/// the tools make none), naming the first and its target.
fn refuse_links(out: &Path) -> crate::Result<()> {
    let links = links_under(out);
    match links.first() {
        Some(link) => Err(crate::Error::LinkInSweep {
            target: std::fs::read_link(link).ok(),
            link: link.clone(),
            more: links.len() - 1,
        }),
        None => Ok(()),
    }
}

/// `collect DIR --config FILE`: every result found in the directory was made by the config
/// (its recorded fingerprint: another config's is an error naming the keys that differ)
/// and is one of its points; the points without a result are named on stderr and left to
/// the tables.
pub fn check_collect<S: Sweep>(sweep: &S, points: &[S::Point]) -> Result<(), S::Error> {
    // A point reached through a symbolic link is not read, as `collect` without the config
    // never follows one (hundred-and-thirty-ninth hostile round, second review, N1: read
    // through, it was refused as another config's): it has no result here.
    let links = links_under(sweep.out());
    let mut planned = Vec::new();
    for (index, point) in points.iter().enumerate() {
        let dir = sweep.dir(point);
        let state = match links.iter().find(|l| dir.starts_with(l)) {
            Some(link) => State::Blocked(format!(
                "{}: a symbolic link, never followed",
                link.display()
            )),
            None => point_state(sweep, point)?,
        };
        planned.push(Planned { index, state });
    }
    let found = sweep.found()?;
    let foreign = outside(sweep, points, &found);
    for other in &foreign {
        sweep.check_found(points, other)?;
    }
    refuse_stale_in_collect(&planned)?;
    warn_incomplete(&planned, &|i| sweep.label(&points[i]));
    Ok(refuse_foreign(&foreign)?)
}

/// The collect that follows a sweep's run in `out`: when points failed (`failed`), its error
/// is a warning on stderr and `None`, since the sweep's own error names the points.
pub fn after_collect<T, E: Display>(
    out: &Path,
    collected: Result<T, E>,
    failed: bool,
) -> Result<Option<T>, E> {
    match collected {
        Err(e) if failed => {
            // Said, not left to be inferred (eighty-sixth hostile round, D2: a recompute that
            // failed at one point left the old config's tables and figures without a word,
            // and `plot` drew them again).
            // A collect that fails part-way (a full disk) has written some files before
            // its error (eighty-seventh hostile round, D4: "an earlier collect's, or none"
            // was said of the tables this one had just written). Where nothing but the runs
            // stands, no table is spoken of (hundred-and-fifteenth hostile round, N3).
            if holds_reports(out) {
                eprintln!(
                    "warning: collect: {e}; the collect did not finish, so the tables and \
                     figures that stand in the sweep's directory are not all of the points as \
                     they are now (some may be this collect's, written before its error, \
                     others an earlier collect's): collect again once the failed points are \
                     made"
                );
            } else {
                eprintln!(
                    "warning: collect: {e}; no table or figure was written: collect once the \
                     failed points are made"
                );
            }
            Ok(None)
        }
        other => other.map(Some),
    }
}

/// Whether the sweep's directory `out` holds anything beside its `runs/` and the tools'
/// hidden files (tables, figures, a user's files): a directory that cannot be read counts
/// as holding them.
fn holds_reports(out: &Path) -> bool {
    match std::fs::read_dir(out) {
        Err(_) => true,
        Ok(entries) => entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name != "runs" && !name.starts_with('.')
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::path::PathBuf;

    use super::*;
    use crate::sweep::State;

    /// A sweep of numbered points whose states are given; it records what it makes.
    struct Toy {
        out: PathBuf,
        states: Vec<State>,
        made: RefCell<Vec<usize>>,
        /// Refuse every plan (the tool's own refusal).
        refuse: bool,
        /// Results found in the directory.
        found: Vec<PathBuf>,
        /// The points it foresees failing, and those it was asked about.
        fails: Vec<usize>,
        asked: RefCell<Vec<usize>>,
        /// Points another shard makes while this one makes its first.
        others_make: Vec<usize>,
    }

    impl Toy {
        fn new(states: Vec<State>) -> Self {
            Self {
                out: PathBuf::from("/nonexistent/out"),
                states,
                made: RefCell::new(Vec::new()),
                refuse: false,
                found: Vec::new(),
                fails: Vec::new(),
                asked: RefCell::new(Vec::new()),
                others_make: Vec::new(),
            }
        }
    }

    impl Sweep for Toy {
        type Point = usize;
        type Made = usize;
        type Error = crate::Error;
        const UNIT: &'static str = "point";
        fn label(&self, p: &usize) -> String {
            format!("p{p}")
        }
        fn state(&self, p: &usize) -> crate::Result<State> {
            Ok(self.states[*p].clone())
        }
        fn clear(&self, _: &usize) -> crate::Result<()> {
            Ok(())
        }
        fn make(&mut self, p: &usize) -> crate::Result<usize> {
            self.made.borrow_mut().push(*p);
            for i in std::mem::take(&mut self.others_make)
                .into_iter()
                .chain([*p])
            {
                self.states[i] = State::Done;
            }
            Ok(*p)
        }
        fn dir(&self, p: &usize) -> PathBuf {
            self.out.join(format!("p{p}"))
        }
        fn record_failure(&self, _: &usize, _: &crate::Error) -> crate::Result<()> {
            Ok(())
        }
        fn busy(_: &crate::Error) -> bool {
            false
        }
        fn out(&self) -> &Path {
            &self.out
        }
        fn computes(&self, _: &[usize]) -> String {
            "toy".into()
        }
        fn refuse(&self, _: &[usize], _: &[Planned], _: &Recompute) -> crate::Result<()> {
            if self.refuse {
                Err(crate::Error::Shard {
                    value: "refused".into(),
                    why: "refused".into(),
                })
            } else {
                Ok(())
            }
        }
        fn order(&self, _: &[usize], planned: &mut [Planned]) {
            planned.reverse();
        }
        fn foresee(&self, p: &usize) -> crate::Result<Option<String>> {
            self.asked.borrow_mut().push(*p);
            Ok(self.fails.contains(p).then(|| format!("p{p} overflows")))
        }
        fn found(&self) -> crate::Result<Vec<PathBuf>> {
            Ok(self.found.clone())
        }
    }

    const POINTS: [usize; 4] = [0, 1, 2, 3];

    #[test]
    fn the_run_makes_what_is_not_done_in_the_tools_order_and_only_its_shard() {
        let mut toy = Toy::new(vec![State::New, State::Done, State::New, State::Partial]);
        let o = execute(&mut toy, &POINTS, Shard::all(), false, &Reporter::silent()).unwrap();
        assert_eq!(*toy.made.borrow(), vec![3, 2, 0]);
        assert_eq!((o.made.len(), o.skipped), (3, 1));
        assert!(o.check().is_ok());

        let mut toy = Toy::new(vec![State::New; 4]);
        let shard = Shard::parse("1/2").unwrap();
        execute(&mut toy, &POINTS, shard, false, &Reporter::silent()).unwrap();
        assert_eq!(*toy.made.borrow(), vec![3, 1]);
    }

    /// Seventh hostile round: a symbolic link under the output directory (a run directory,
    /// or `runs/relu`, linked elsewhere) was written through and left out of the sweep's own
    /// tables. The run and its dry run refuse it before any work, naming the link and its
    /// target; the points' links at any depth, dot-names (the tools' own) aside.
    #[cfg(unix)]
    #[test]
    fn a_link_under_the_output_directory_stops_the_run_and_its_dry_run() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(out.join("runs/a")).unwrap();
        std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
        let mut toy = Toy::new(vec![State::New; 2]);
        toy.out = out.clone();
        std::os::unix::fs::symlink(dir.path().join(".hidden"), out.join(".ntk-x")).unwrap();
        execute(
            &mut toy,
            &POINTS[..2],
            Shard::all(),
            false,
            &Reporter::silent(),
        )
        .unwrap();
        toy.made.borrow_mut().clear();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), out.join("runs/a/p1")).unwrap();
        let e = execute(
            &mut toy,
            &POINTS[..2],
            Shard::all(),
            false,
            &Reporter::silent(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("runs/a/p1: a symbolic link to"), "{e}");
        assert!(e.contains("elsewhere"), "{e}");
        assert!(toy.made.borrow().is_empty(), "nothing made");
        let dry = dry_run(&toy, &POINTS[..2], Shard::all(), true).unwrap_err();
        assert_eq!(dry.to_string(), e, "the dry run refuses in the run's words");
    }

    #[test]
    fn stale_results_and_the_tools_refusal_stop_the_run_and_its_dry_run_before_any_work() {
        let states = vec![
            State::New,
            State::Stale("made by config B".into()),
            State::New,
        ];
        let mut toy = Toy::new(states.clone());
        let e = execute(
            &mut toy,
            &POINTS[..3],
            Shard::all(),
            false,
            &Reporter::silent(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("made by config B"), "{e}");
        assert!(toy.made.borrow().is_empty(), "nothing made");
        let dry = dry_run(&toy, &POINTS[..3], Shard::all(), false).unwrap_err();
        assert_eq!(dry.to_string(), e, "the dry run refuses in the run's words");

        // --recompute makes the stale point again.
        execute(
            &mut toy,
            &POINTS[..3],
            Shard::all(),
            true,
            &Reporter::silent(),
        )
        .unwrap();
        assert_eq!(*toy.made.borrow(), vec![2, 1, 0]);

        let mut toy = Toy::new(vec![State::New; 2]);
        toy.refuse = true;
        assert!(
            execute(
                &mut toy,
                &POINTS[..2],
                Shard::all(),
                false,
                &Reporter::silent()
            )
            .is_err()
        );
        assert!(dry_run(&toy, &POINTS[..2], Shard::all(), false).is_err());
        assert!(toy.made.borrow().is_empty());
    }

    /// A dry run asks the tool about every point the run would make (not a done one, a
    /// stale one only with --recompute) and ends with an error naming the first it foresees
    /// failing, after the refusals the run makes; the run itself does not ask.
    #[test]
    fn a_dry_run_says_which_points_would_fail_and_ends_with_an_error() {
        let mut toy = Toy::new(vec![State::New, State::Done, State::New, State::Partial]);
        toy.fails = vec![1, 3, 0];
        let e = dry_run(&toy, &POINTS, Shard::all(), false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "2 point(s) would fail when made (the run would make the others and end with their \
             failures); first: p3: p3 overflows"
        );
        // In the run's order (the toy's is reversed): its first failure is the dry run's
        // first (ninety-third hostile round, N6).
        assert_eq!(*toy.asked.borrow(), vec![3, 2, 0]);
        toy.asked.borrow_mut().clear();
        execute(&mut toy, &POINTS, Shard::all(), false, &Reporter::silent()).unwrap();
        assert!(toy.asked.borrow().is_empty(), "the run does not ask");

        let mut toy = Toy::new(vec![State::Stale("made by config B".into()), State::New]);
        toy.fails = vec![0];
        let e = dry_run(&toy, &POINTS[..2], Shard::all(), false).unwrap_err();
        assert!(e.to_string().contains("made by config B"), "{e}");
        assert_eq!(*toy.asked.borrow(), vec![1]);
        let e = dry_run(&toy, &POINTS[..2], Shard::all(), true).unwrap_err();
        assert!(e.to_string().ends_with("first: p0: p0 overflows"), "{e}");
        toy.fails.clear();
        assert!(dry_run(&toy, &POINTS[..2], Shard::all(), true).is_ok());
    }

    #[test]
    fn collect_refuses_another_configs_results_and_results_no_point_owns() {
        let mut toy = Toy::new(vec![State::Done, State::New]);
        toy.found = vec![toy.out.join("p0/summary.json")];
        check_collect(&toy, &POINTS[..2]).unwrap();
        toy.found.push(toy.out.join("elsewhere/summary.json"));
        let e = check_collect(&toy, &POINTS[..2]).unwrap_err().to_string();
        assert!(
            e.contains("elsewhere") && e.contains("not a point of this config"),
            "{e}"
        );

        let toy = Toy::new(vec![State::Stale("made by config B".into()), State::Done]);
        let e = check_collect(&toy, &POINTS[..2]).unwrap_err().to_string();
        assert!(e.contains("made by config B"), "{e}");
    }

    /// Sixty-second hostile round, D1: whether the other shards' points are still another
    /// config's is decided when the shard ends: those another shard made meanwhile do not
    /// count, so the last shard to end collects.
    #[test]
    fn the_other_shards_stale_points_are_counted_at_the_end() {
        let stale = || State::Stale("another config".into());
        let shard = Shard::parse("0/2").unwrap();
        for (others_make, left) in [(vec![], 2), (vec![1], 1), (vec![1, 3], 0)] {
            let mut toy = Toy::new(vec![stale(), stale(), stale(), stale()]);
            toy.others_make = others_make;
            let outcome =
                execute(&mut toy, &POINTS[..4], shard, true, &Reporter::silent()).unwrap();
            assert_eq!(outcome.left_to_other_shards, left);
            assert_eq!(*toy.made.borrow(), [2, 0]);
        }
    }

    #[test]
    fn a_shard_that_owns_no_point_claims_nothing() {
        let shard = Shard::parse("3/4").unwrap();
        let out = Path::new("/nonexistent/out");
        assert!(
            claim(out, shard, (3, "run"), "f", Path::new("c.toml"))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_collect_after_failed_points_is_a_warning() {
        let failed: Result<u8, String> = Err("no runs".into());
        let out = Path::new("/nonexistent/out");
        assert_eq!(after_collect(out, failed.clone(), true), Ok(None));
        assert_eq!(
            after_collect(out, failed, false),
            Err("no runs".to_string())
        );
        assert_eq!(after_collect(out, Ok::<u8, String>(7), false), Ok(Some(7)));
    }

    /// The hundred-and-fifteenth hostile round, N3: a new sweep's directory whose only point
    /// failed holds its `runs/` and the tools' hidden files, no table of an earlier collect.
    #[test]
    fn only_runs_and_hidden_files_are_no_reports() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("runs")).unwrap();
        std::fs::write(dir.path().join(".ntk-writers"), "").unwrap();
        assert!(!holds_reports(dir.path()));
        std::fs::write(dir.path().join("summary.csv"), "").unwrap();
        assert!(holds_reports(dir.path()));
    }
}
