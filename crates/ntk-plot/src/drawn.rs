//! A command's figures saved into one directory, and what it wrote there: each figure's
//! PNG, SVG and PDF, its caption where it wrote one, and the captions standing there that it
//! kept (a user's, or one edited for a paper). Both tools' collect and plot save their
//! figures through [`save_all`] and record and list what [`Drawn`] says they wrote.

use std::path::{Path, PathBuf};

use ntk_files::shown::Shown;

use crate::{Figure, Layout};

/// What [`save_all`] drew: each figure's stem (a path), the names of those it drew without a
/// caption ([`Figure::writes_caption`]), and of those whose caption standing there it kept,
/// not written.
#[derive(Debug)]
pub struct Drawn {
    pub stems: Vec<PathBuf>,
    pub uncaptioned: Vec<String>,
    pub kept: Vec<String>,
}

impl Drawn {
    /// Whether `name` is a file this drawing wrote: a figure's PNG, SVG or PDF, or its
    /// caption where it wrote one.
    pub fn wrote(&self, name: &str) -> bool {
        self.stems.iter().any(|stem| {
            stem.file_name().is_some_and(|s| {
                let s = s.to_string_lossy().into_owned();
                crate::is_figure_file(name, &s)
                    && (!name.ends_with(".caption.txt") || self.captioned(&s))
            })
        })
    }

    /// Whether this drawing wrote the caption of the figure `stem` (a name).
    fn captioned(&self, stem: &str) -> bool {
        !self.uncaptioned.iter().chain(&self.kept).any(|s| s == stem)
    }

    /// The files written, each figure's PNG, SVG and PDF, then its caption where written.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for stem in &self.stems {
            let name = stem_name(stem);
            let with = |ext: &str| stem.with_file_name(format!("{name}.{ext}"));
            files.extend(["png", "svg", "pdf"].map(with));
            if self.captioned(&name) {
                files.push(with("caption.txt"));
            }
        }
        files
    }

    /// The files written, one line per figure as its stem's path with the extensions
    /// written (`DIR/kappa_vs_depth_whole.{png,svg,pdf,caption.txt}`): the captions named
    /// where written (hundred-and-twenty-sixth hostile round, N2).
    pub fn shown(&self) -> Vec<String> {
        self.stems
            .iter()
            .map(|stem| {
                let caption = match self.captioned(&stem_name(stem)) {
                    true => ",caption.txt",
                    false => "",
                };
                format!("{}.{{png,svg,pdf{caption}}}", stem.shown())
            })
            .collect()
    }
}

/// The name of the figure at `stem`.
fn stem_name(stem: &Path) -> String {
    stem.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The stems of `figures` (by name) that write a caption in `layout`: those whose caption a
/// command asks its record about before it saves them.
pub fn captioned<S: AsRef<str>>(figures: &[(S, Figure)], layout: Layout) -> Vec<String> {
    figures
        .iter()
        .filter(|(_, f)| f.writes_caption(layout))
        .map(|(stem, _)| stem.as_ref().to_string())
        .collect()
}

/// Writes `figures` (by stem name) into `out` in `layout`, each by [`Figure::save_as`] but
/// those named in `kept`, whose caption standing there is kept
/// ([`Figure::save_keeping_caption`]); says what it drew.
pub fn save_all<S: AsRef<str>>(
    out: &Path,
    figures: &[(S, Figure)],
    layout: Layout,
    kept: Vec<String>,
) -> ntk_files::Result<Drawn> {
    let mut stems = Vec::new();
    for (name, fig) in figures {
        let stem = out.join(name.as_ref());
        match kept.iter().any(|k| k == name.as_ref()) {
            true => fig.save_keeping_caption(&stem, layout)?,
            false => fig.save_as(&stem, layout)?,
        }
        stems.push(stem);
    }
    let uncaptioned = figures
        .iter()
        .filter(|(_, f)| !f.writes_caption(layout))
        .map(|(stem, _)| stem.as_ref().to_string())
        .collect();
    Ok(Drawn {
        stems,
        uncaptioned,
        kept,
    })
}
