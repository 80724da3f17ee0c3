//! The figures' own tests: files, sizes and layouts, the band of unresolved points, the
//! caption file, texts that never break the SVG, tick labels that never overlap.

use super::*;

fn figure(spread: Option<Spread>) -> Figure {
    Figure {
        title: "κ against depth L".into(),
        x_label: "depth L".into(),
        y_label: "NTK condition number κ".into(),
        x_scale: Scale::Integer,
        y_scale: Scale::Log,
        series: vec![Series {
            label: "relu".into(),
            points: vec![(0.0, 1e8), (1.0, 4e4), (2.0, 1.7e4)],
            spread,
            color: PALETTE[1],
            dash: Dash::DashDot,
            marker: Some(Marker::Diamond),
            unresolved: vec![3.0],
        }],
        note: Some("band: min..max over seeds".into()),
    }
}

#[test]
fn a_figure_is_written_as_png_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let stem = dir.path().join("fig");
    let band = Spread::Band(vec![(9e7, 1.1e8), (3e4, 5e4), (1.5e4, 2e4)]);
    figure(Some(band)).save(&stem).unwrap();
    let png = image_size(&stem.with_extension("png"));
    assert_eq!(png, (1800, 1200));
    let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
    assert!(svg.contains("10⁸") && svg.contains("10⁴"), "decade labels");
    assert!(svg.contains("κ"));
    // The unresolved point at x = 3 widens the x axis to it.
    let labels: Vec<&str> = svg.lines().map(str::trim).collect();
    assert!(
        labels.contains(&"3"),
        "the x axis reaches the unresolved point"
    );
}

/// The PNG, encoded in memory (`png_bytes`) and written as every other file, decodes to the
/// drawn pixels: 8-bit RGB, a white margin, the curve's colour somewhere, and no temporary
/// left beside it.
#[test]
fn the_png_decodes_to_the_drawn_pixels() {
    let dir = tempfile::tempdir().unwrap();
    let stem = dir.path().join("fig");
    figure(None).save(&stem).unwrap();
    let file = std::fs::File::open(stem.with_extension("png")).unwrap();
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((info.width, info.height), (1800, 1200));
    assert_eq!(
        (info.color_type, info.bit_depth),
        (png::ColorType::Rgb, png::BitDepth::Eight)
    );
    assert_eq!(
        &pixels[..3],
        &[255, 255, 255],
        "the corner is the white margin"
    );
    let c = PALETTE[1];
    assert!(
        pixels.chunks(3).any(|p| p == [c.0, c.1, c.2]),
        "the curve's colour is drawn"
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.contains(ntk_files::outset::TMP_TAG)),
        "{names:?}"
    );
}

/// A figure whose every point is unresolved is still drawn (its markers and note).
#[test]
fn only_unresolved_points_still_make_a_figure() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = figure(None);
    f.series[0].points.clear();
    f.series[0].unresolved = vec![1.0, 2.0];
    f.save(&dir.path().join("fig")).unwrap();
}

/// Unresolved points are drawn in a band above the axes, labelled `singular`, and never
/// change the value axis (no headroom for them inside it); no band without them; an
/// empty title draws none.
#[test]
fn unresolved_points_sit_in_a_labelled_band_above_the_axes() {
    let dir = tempfile::tempdir().unwrap();
    let stem = dir.path().join("fig");
    let mut plain = figure(None);
    plain.series[0].unresolved.clear();
    let with = figure(None);
    assert_eq!(
        plain.axes().unwrap().1.hi,
        with.axes().unwrap().1.hi,
        "the value axis is the data's"
    );
    with.save(&stem).unwrap();
    let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
    assert!(svg.contains("\nsingular\n"), "{svg}");
    plain.save(&stem).unwrap();
    let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
    assert!(!svg.contains("\nsingular\n"));
    let mut untitled = figure(None);
    untitled.title = String::new();
    untitled.save(&stem).unwrap();
    assert_eq!(
        super::title_as_asked(Some("{what}, 3 seeds"), || "own".into(), "κ"),
        "κ, 3 seeds"
    );
    assert_eq!(super::title_as_asked(None, || "own".into(), "κ"), "own");
}

#[test]
fn a_spread_of_the_wrong_length_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bad = figure(Some(Spread::Bars(vec![(1.0, 2.0)])));
    let e = bad.save(&dir.path().join("fig")).unwrap_err().to_string();
    assert!(e.contains("1 spreads for 3 points"), "{e}");
}

/// The column layout: half the canvas, the legend under the axes (rows of entries), a
/// title too wide for one line on two, a y label taller than the axes on lines side by
/// side, and the note in a caption file beside the figure instead of on the page.
#[test]
fn a_column_figure_has_its_size_and_wraps_what_is_too_wide() {
    let dir = tempfile::tempdir().unwrap();
    let stem = dir.path().join("fig");
    let mut f = figure(None);
    f.title = "MNIST, all 60,000 training images: the NTK's condition number".into();
    f.y_label = "training loss (cross-entropy, log scale), mean over the seeds".into();
    f.note = Some("mean over 5 seeds; band: min..max over seeds; open: singular".into());
    f.save_as(&stem, Layout::Column).unwrap();
    // 340 units for the title and axes, the legend's row (one entry) added below; the
    // PNG at twice the size.
    let (w, h) = image_size(&stem.with_extension("png"));
    assert_eq!(w, 1020);
    assert!(h > 2 * 340 && h < 2 * 400, "{h}");
    let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
    assert!(svg.contains("width=\"510\""));
    // Neither the title nor the y label is drawn whole on one line.
    assert!(!svg.contains(&f.title), "the title is wrapped");
    assert!(svg.contains("MNIST,"));
    assert!(!svg.contains(&f.y_label), "the y label is wrapped");
    assert!(svg.contains("\ntraining loss"), "its first line is drawn");
    // The note is the caption's, after the title; the page does not hold it.
    assert!(!svg.contains("mean over 5 seeds"));
    let caption = std::fs::read_to_string(dir.path().join("fig.caption.txt")).unwrap();
    assert_eq!(
        caption,
        format!("{}\n\n{}\n", f.title, f.note.as_deref().unwrap())
    );
    // Every text's em is at least 8 pt once the 510 units are a column's 244.8 pt.
    for size in svg.split("font-size=\"").skip(1) {
        let em: f64 = size[..size.find('"').unwrap()].parse().unwrap();
        assert!(
            em * layout::COLUMN_WIDTH_PT / 510.0 >= 8.0,
            "font-size {em}"
        );
    }
    // Drawn again for a screen, the figure carries its note; the caption is left as it is,
    // for the tools' collect and plot to settle by their record (eighty-ninth hostile round,
    // D5: it was removed whatever wrote it), and so is anything else at its name.
    let caption = dir.path().join("fig.caption.txt");
    std::fs::write(&caption, "a user's caption\n").unwrap();
    f.save_as(&stem, Layout::Screen).unwrap();
    let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
    assert!(svg.contains("mean over 5 seeds"));
    assert_eq!(
        std::fs::read_to_string(&caption).unwrap(),
        "a user's caption\n"
    );
    std::fs::remove_file(&caption).unwrap();
    std::fs::create_dir(&caption).unwrap();
    f.save_as(&stem, Layout::Screen).unwrap();
    assert!(caption.is_dir());
    // A column's caption is not written through a directory at its name.
    assert!(f.save_as(&stem, Layout::Column).is_err());
    assert!(caption.is_dir());
}

#[test]
fn control_characters_in_texts_never_reach_the_svg() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = figure(None);
    f.title = "a\u{1}b<c&d\u{1b}[31m\tq\u{7f}".into();
    f.x_label = "x\u{0}".into();
    f.series[0].label = "s\u{8}".into();
    f.note = Some("one\u{c}\ntwo".into());
    for layout in [Layout::Screen, Layout::Column] {
        f.save_as(&dir.path().join("f"), layout).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("f.svg")).unwrap();
        let bad: Vec<char> = svg
            .chars()
            .filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
            .collect();
        assert!(bad.is_empty(), "{bad:?}");
        assert!(svg.contains("&lt;c&amp;d"), "the markup stays escaped");
    }
}

/// The value of attribute `name` in an SVG element's tag.
fn attr(tag: &str, name: &str) -> Option<String> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[at..].split('"').next().map(str::to_string)
}

/// Attribute `name` of an SVG tag as a number.
fn num(tag: &str, name: &str) -> Option<f64> {
    attr(tag, name).and_then(|v| v.parse::<f64>().ok())
}

/// The tick labels of an SVG: every `<text>` at the tick font size (plotters writes a
/// pixel size `px` as `px / 1.24`), as (text, left, top, width, height) boxes in SVG
/// units, the width estimated at 0.62 em a character (DejaVu Sans's digits are 0.64 em,
/// its superscripts and `×` narrower).
fn tick_label_boxes(svg: &str, tick_px: f64) -> Vec<(String, f64, f64, f64, f64)> {
    let mut boxes = Vec::new();
    for part in svg.split("<text").skip(1) {
        let (tag, rest) = part.split_once('>').unwrap();
        let text = rest.split("</text>").next().unwrap().trim().to_string();
        let Some(em) = num(tag, "font-size") else {
            continue;
        };
        if (em * 1.24 - tick_px).abs() > 0.05 || text.is_empty() || tag.contains("rotate") {
            continue;
        }
        let (x, y) = (num(tag, "x").unwrap(), num(tag, "y").unwrap());
        let w = 0.62 * em * text.chars().count() as f64;
        let left = match attr(tag, "text-anchor").as_deref() {
            Some("end") => x - w,
            Some("middle") => x - w / 2.0,
            _ => x,
        };
        // `dy="0.76em"`: y is the top; `0.5ex`: the middle; `-0.5ex`: the bottom.
        let top = match attr(tag, "dy").as_deref() {
            Some("0.76em") => y,
            Some("-0.5ex") => y - em,
            _ => y - 0.5 * em,
        };
        boxes.push((text, left, top, w, em));
    }
    boxes
}

/// Issue 45, D5: no two tick labels overlap in any layout, on the drawn SVG's text
/// positions: log axes over about one decade (a column figure drew `10³`, `9×10²` and
/// `8×10²` 9 px apart at a 17 px font), over two decades, and a linear axis.
#[test]
fn no_two_tick_labels_overlap_in_any_layout() {
    let dir = tempfile::tempdir().unwrap();
    for (name, ys, y_scale, xs, x_scale) in [
        (
            "one decade",
            [780.0, 1050.0],
            Scale::Log,
            [1.0, 20.0],
            Scale::Integer,
        ),
        (
            "two decades",
            [30.0, 2500.0],
            Scale::Log,
            [0.5, 7e4],
            Scale::Log,
        ),
        (
            "linear",
            [0.0, 1.0],
            Scale::Linear,
            [800.0, 1100.0],
            Scale::Log,
        ),
    ] {
        for layout in [Layout::Screen, Layout::Column] {
            let mut f = figure(None);
            f.series[0].points = vec![(xs[0], ys[0]), (xs[1], ys[1])];
            f.series[0].unresolved.clear();
            (f.x_scale, f.y_scale) = (x_scale, y_scale);
            let stem = dir.path().join("ticks");
            f.save_as(&stem, layout).unwrap();
            let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
            let size = Metrics::of(layout).tick;
            let boxes = tick_label_boxes(&svg, size);
            assert!(boxes.len() >= 4, "{name} {layout:?}: {boxes:?}");
            for (i, a) in boxes.iter().enumerate() {
                for b in &boxes[i + 1..] {
                    let apart = a.1 + a.3 <= b.1
                        || b.1 + b.3 <= a.1
                        || a.2 + a.4 <= b.2
                        || b.2 + b.4 <= a.2;
                    assert!(apart, "{name} {layout:?}: {a:?} overlaps {b:?}");
                }
            }
        }
    }
}

#[test]
fn wrap_breaks_at_spaces_and_keeps_long_words_whole() {
    let fits = |t: &str| t.len() <= 10;
    assert_eq!(wrap("ab cd ef gh ij", fits), ["ab cd ef", "gh ij"]);
    assert_eq!(wrap("abcdefghijklm xy", fits), ["abcdefghijklm", "xy"]);
    assert_eq!(wrap("short", fits), ["short"]);
}

/// Width and height from a PNG's IHDR chunk.
fn image_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

/// What one side of a legend sample shows outside its marker's white rim: the visible
/// lengths of its dashes, from the rim outward, and its dots.
#[derive(Debug, PartialEq)]
struct SampleSide {
    dashes: Vec<i64>,
    dots: usize,
}

/// The legend sample of the series drawn in `colour` in an SVG: its horizontal strokes and
/// dots (the curves in the axes climb) and the white rim of the marker on it, as the two
/// sides outside the rim (left, right).
fn legend_sample_sides(svg: &str, colour: &str) -> (SampleSide, SampleSide) {
    let tags = |name: &str| -> Vec<&str> {
        svg.split(&format!("<{name}"))
            .skip(1)
            .map(|p| p.split_once("/>").unwrap().0)
            .collect()
    };
    let mut strokes = Vec::new();
    for tag in tags("polyline") {
        if attr(tag, "stroke").as_deref() != Some(colour) {
            continue;
        }
        let pts: Vec<(f64, f64)> = attr(tag, "points")
            .unwrap()
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        if pts.iter().all(|p| p.1 == pts[0].1) {
            strokes.push((pts[0].1, pts[0].0, pts[pts.len() - 1].0));
        }
    }
    let y = strokes[0].0;
    assert!(
        strokes.iter().all(|s| s.0 == y),
        "one legend row: {strokes:?}"
    );
    let (lo, hi) = strokes.iter().fold((f64::MAX, f64::MIN), |(lo, hi), s| {
        (lo.min(s.1.min(s.2)), hi.max(s.1.max(s.2)))
    });
    let circles: Vec<(f64, f64, f64, String)> = tags("circle")
        .into_iter()
        .filter_map(|t| Some((num(t, "cx")?, num(t, "cy")?, num(t, "r")?, attr(t, "fill")?)))
        .filter(|c| c.1 == y && c.0 > lo && c.0 < hi)
        .collect();
    let rim = circles
        .iter()
        .find(|c| c.3 == "#FFFFFF")
        .expect("a marker on the sample");
    let (r0, r1) = (rim.0 - rim.2, rim.0 + rim.2);
    let side = |left: bool| {
        let mut dashes: Vec<(f64, i64)> = strokes
            .iter()
            .map(|s| (s.1.min(s.2), s.1.max(s.2)))
            .map(|(a, b)| if left { (a, b.min(r0)) } else { (a.max(r1), b) })
            .filter(|(a, b)| b - a >= 1.0)
            .map(|(a, b)| (if left { -b } else { a }, (b - a).round() as i64))
            .collect();
        dashes.sort_by(|p, q| p.0.total_cmp(&q.0));
        let dots = circles
            .iter()
            .filter(|c| c.3 == colour && c.2 < rim.2 - 1.0)
            .filter(|c| if left { c.0 < r0 } else { c.0 > r1 })
            .count();
        SampleSide {
            dashes: dashes.into_iter().map(|d| d.1).collect(),
            dots,
        }
    };
    (side(true), side(false))
}

/// Round 71, D1: every measured style reads as itself in the legend, its marker in the
/// middle, in both layouts: a solid line runs through; on each side of the marker's rim
/// every other style shows a whole dash, a gap and the next dash, and its dots (a long
/// dash's one gap sat under the marker of a 56-unit sample, which read as solid); and the
/// five samples differ.
#[test]
fn legend_samples_show_their_pattern_around_the_marker() {
    let dir = tempfile::tempdir().unwrap();
    for layout in [Layout::Screen, Layout::Column] {
        let series = MEASURED
            .iter()
            .enumerate()
            .map(|(i, &dash)| Series {
                label: format!("width={}", 8 << i),
                points: vec![(0.0, 1.0), (1.0, 1e3), (2.0, 1e6)],
                spread: None,
                color: PALETTE[i],
                dash,
                marker: Some(Marker::Circle),
                unresolved: Vec::new(),
            })
            .collect();
        let fig = Figure {
            series,
            note: None,
            ..figure(None)
        };
        let stem = dir.path().join(format!("{layout:?}"));
        fig.save_as(&stem, layout).unwrap();
        let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
        let mut seen = Vec::new();
        for (i, dash) in MEASURED.into_iter().enumerate() {
            let c = PALETTE[i];
            let colour = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
            let (left, right) = legend_sample_sides(&svg, &colour);
            let what = format!("{layout:?} {dash:?}: {left:?} {right:?}");
            if dash == Dash::Solid {
                assert!(left.dashes.len() == 1 && right.dashes.len() == 1, "{what}");
                continue;
            }
            let dots = match dash {
                Dash::DashDot => 1,
                Dash::DashDotDot => 2,
                _ => 0,
            };
            for side in [&left, &right] {
                assert!(side.dashes.len() >= 2, "a gap between two dashes: {what}");
                assert!(side.dots >= dots, "{what}");
                let long = side.dashes.iter().any(|&d| d >= 21);
                assert_eq!(long, dash == Dash::LongDash, "{what}");
            }
            seen.push(right);
        }
        for (i, a) in seen.iter().enumerate() {
            assert!(seen[i + 1..].iter().all(|b| b != a), "{layout:?}: {seen:?}");
        }
    }
}

/// A figure whose every point is not finite (a run diverged in its first epoch), or not
/// positive on a log scale, has nothing to draw, which its callers ask before they save it
/// (hundred-and-fourteenth hostile round, N8).
#[test]
fn a_figure_without_a_finite_point_is_not_drawable() {
    assert!(figure(None).is_drawable());
    let mut nan = figure(None);
    nan.series[0].points = vec![(1.0, f64::NAN), (2.0, f64::INFINITY)];
    nan.series[0].unresolved.clear();
    assert!(!nan.is_drawable());
    let mut zero = figure(None);
    zero.series[0].points = vec![(1.0, 0.0), (2.0, -1.0)];
    zero.series[0].unresolved.clear();
    assert!(!zero.is_drawable());
    let dir = tempfile::tempdir().unwrap();
    let e = nan.save(&dir.path().join("fig")).unwrap_err().to_string();
    assert!(e.contains("nothing to plot"), "{e}");
}

/// [`save_all`] in a column: a figure with a note writes its caption, one without does not,
/// and one whose caption is kept leaves the caption standing there as it was; [`Drawn`] says
/// exactly the files written, in its list, its lines and its test by name.
#[test]
fn save_all_writes_and_says_exactly_the_files_it_drew() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let mut plain = figure(None);
    plain.note = None;
    let figures = [("a", figure(None)), ("b", plain), ("c", figure(None))];
    assert_eq!(captioned(&figures, Layout::Column), ["a", "c"]);
    assert!(captioned(&figures, Layout::Screen).is_empty());
    std::fs::write(out.join("c.caption.txt"), "my words").unwrap();
    let drawn = save_all(out, &figures, Layout::Column, vec!["c".into()]).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("c.caption.txt")).unwrap(),
        "my words"
    );
    let mut on_disk: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "c.caption.txt")
        .collect();
    on_disk.sort();
    let mut files: Vec<String> = drawn
        .files()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, on_disk);
    assert!(drawn.wrote("a.caption.txt") && drawn.wrote("b.pdf"));
    assert!(!drawn.wrote("b.caption.txt") && !drawn.wrote("c.caption.txt"));
    let shown = drawn.shown();
    assert!(
        shown[0].ends_with("a.{png,svg,pdf,caption.txt}"),
        "{shown:?}"
    );
    assert!(shown[1].ends_with("b.{png,svg,pdf}"), "{shown:?}");
    assert!(shown[2].ends_with("c.{png,svg,pdf}"), "{shown:?}");
}
