//! Axis ticks of the figures: where the major (labelled) and minor ticks sit and what the
//! labels read. Three scales: a linear axis (1, 2 or 5 times a power of ten per step), an
//! integer axis for counts such as the depth L or the epoch (integer steps and labels
//! only), and a log axis (plotted as log10 of the value) labelled `10⁵` at every decade in
//! range, with minor ticks at 2..9 times each decade.

/// How an axis maps its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Linear, "nice" decimal steps.
    Linear,
    /// Linear, for counts (depth, epoch): ticks at integers only, labels without decimals.
    Integer,
    /// Logarithmic (base 10); the values must be positive.
    Log,
}

impl Scale {
    /// The plotted coordinate of `v` (log10 on a log axis); `None` where it cannot be
    /// plotted (not finite, or not positive on a log axis).
    pub fn to_plot(self, v: f64) -> Option<f64> {
        match self {
            Scale::Log if v > 0.0 && v.is_finite() => Some(v.log10()),
            Scale::Log => None,
            _ if v.is_finite() => Some(v),
            _ => None,
        }
    }
}

/// The ticks of one axis, in plotted coordinates (log10 of the value on a log axis).
#[derive(Clone, Debug, PartialEq)]
pub struct Ticks {
    /// The axis range.
    pub lo: f64,
    pub hi: f64,
    /// Labelled ticks and their labels (same length).
    pub major: Vec<f64>,
    pub labels: Vec<String>,
    /// Unlabelled minor ticks.
    pub minor: Vec<f64>,
}

impl Ticks {
    /// The label of the major tick at `v` (the plotting library asks by value).
    pub fn label_of(&self, v: f64) -> String {
        let tol = 1e-9 * (self.hi - self.lo).abs().max(1e-300);
        self.major
            .iter()
            .position(|m| (m - v).abs() <= tol)
            .map(|i| self.labels[i].clone())
            .unwrap_or_default()
    }
}

impl Ticks {
    /// These ticks with no two labels overlapping once drawn: `at` is a tick's pixel
    /// position along the axis, `extent` a label's length along it (its width on an x
    /// axis, its height on a y axis), `gap` the least room between two labels. Labels are
    /// kept greedily by rank (a log axis's decades `10ᵏ` first, then its 2 and 5 times a
    /// decade, then the rest; a linear axis's in order); a dropped label's tick stays a
    /// major tick with an empty label. A column figure's log axis over about one decade put
    /// `10³`, `9×10²` and `8×10²` 9 px apart at a 17 px font.
    pub fn without_overlaps(
        &self,
        at: impl Fn(f64) -> f64,
        extent: impl Fn(&str) -> f64,
        gap: f64,
    ) -> Ticks {
        let rank = |l: &str| match l.split_once('×') {
            None => 0,
            Some(("2" | "5", _)) => 1,
            Some(_) => 2,
        };
        let mut order: Vec<usize> = (0..self.major.len()).collect();
        order.sort_by_key(|&i| rank(&self.labels[i]));
        let mut kept: Vec<(f64, f64)> = Vec::new();
        let mut labels = vec![String::new(); self.labels.len()];
        for i in order {
            let (c, half) = (at(self.major[i]), extent(&self.labels[i]) / 2.0);
            let (a, b) = (c - half, c + half);
            if kept.iter().all(|&(ka, kb)| b + gap <= ka || a >= kb + gap) {
                kept.push((a, b));
                labels[i] = self.labels[i].clone();
            }
        }
        Ticks {
            labels,
            ..self.clone()
        }
    }
}

/// At most this many labelled ticks on an axis.
const MAX_LABELS: usize = 12;

/// The ticks of an axis on `scale` holding the data range `lo..=hi` (values, not plotted
/// coordinates; on a log axis both must be positive).
pub fn ticks(scale: Scale, lo: f64, hi: f64) -> Ticks {
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    match scale {
        Scale::Linear => linear(lo, hi),
        Scale::Integer => integer(lo, hi),
        Scale::Log => log(lo, hi),
    }
}

/// `1, 2 or 5 x 10^k`, the smallest such step with at most `max` steps over `span`.
fn nice_step(span: f64, max: usize) -> f64 {
    let raw = span / max as f64;
    let e = raw.log10().floor();
    let base = 10f64.powf(e);
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * base)
        .find(|s| span / s <= max as f64 + 1e-9)
        .unwrap_or(10.0 * base)
}

/// Multiples of `step` in `lo..=hi`.
fn multiples(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

fn linear(lo: f64, hi: f64) -> Ticks {
    let (lo, hi) = if hi - lo < 1e-12 * lo.abs().max(1.0) {
        (lo - 0.5 * lo.abs().max(1.0), hi + 0.5 * hi.abs().max(1.0))
    } else {
        (lo, hi)
    };
    let pad = 0.04 * (hi - lo);
    let step = nice_step(hi - lo + 2.0 * pad, 8);
    let minor_step = step
        / if (step / 10f64.powf(step.log10().floor()) - 2.0).abs() < 1e-9 {
            4.0
        } else {
            5.0
        };
    let (lo, hi) = (
        ((lo - pad) / minor_step).floor() * minor_step,
        ((hi + pad) / minor_step).ceil() * minor_step,
    );
    let major = multiples(lo, hi, step);
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let labels = major
        .iter()
        .map(|v| {
            let s = format!("{v:.decimals$}");
            // No "-0".
            if s.trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.')
            {
                s.trim_start_matches('-').to_string()
            } else {
                s
            }
        })
        .collect();
    let minor = multiples(lo, hi, minor_step)
        .into_iter()
        .filter(|v| !major.iter().any(|m| (m - v).abs() < 1e-9 * step))
        .collect();
    Ticks {
        lo,
        hi,
        major,
        labels,
        minor,
    }
}

fn integer(lo: f64, hi: f64) -> Ticks {
    let (lo, hi) = (lo.floor(), hi.ceil());
    let span = (hi - lo).max(1.0);
    let step = nice_step(span, MAX_LABELS).max(1.0).round();
    let major = multiples(lo, hi, step);
    let labels = major.iter().map(|v| format!("{}", *v as i64)).collect();
    // Minor ticks at the integers between labels (or at fifths of a step of 10 or more).
    let minor_step = if step <= 5.0 { 1.0 } else { step / 5.0 };
    let minor = if step > 1.0 {
        multiples(lo, hi, minor_step)
            .into_iter()
            .filter(|v| !major.contains(v))
            .collect()
    } else {
        Vec::new()
    };
    let pad = 0.03 * span.max(step);
    Ticks {
        lo: lo - pad,
        hi: hi + pad,
        major,
        labels,
        minor,
    }
}

/// `n` in superscript digits: `superscript(-3)` is `⁻³`.
pub fn superscript(n: i32) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let digits = n.unsigned_abs().to_string();
    let sign = if n < 0 { "⁻" } else { "" };
    sign.chars()
        .chain(digits.chars().map(|c| DIGITS[c as usize - '0' as usize]))
        .collect()
}

/// The label of `m x 10^e` on a log axis: `10⁵`, or `2×10⁵` off the decades.
pub fn log_label(m: u32, e: i32) -> String {
    if m == 1 {
        format!("10{}", superscript(e))
    } else {
        format!("{m}×10{}", superscript(e))
    }
}

fn log(lo: f64, hi: f64) -> Ticks {
    // 2% of a decade of room at each end, then out to the nearest minor tick.
    let (l, h) = (lo.log10() - 0.02, hi.log10() + 0.02);
    let (l, h) = if h - l < 0.1 {
        (l - 0.05, h + 0.05)
    } else {
        (l, h)
    };
    let snap_down = |x: f64| {
        let e = x.floor();
        let m = 10f64.powf(x - e).floor().clamp(1.0, 9.0);
        e + m.log10()
    };
    let snap_up = |x: f64| {
        let e = x.floor();
        let m = 10f64.powf(x - e).ceil();
        e + m.log10()
    };
    let (l, h) = (snap_down(l), snap_up(h));
    // Every m x 10^e in range.
    let mut all: Vec<(u32, i32, f64)> = Vec::new();
    for e in (l.floor() as i32)..=(h.ceil() as i32) {
        for m in 1..=9u32 {
            let v = e as f64 + f64::from(m).log10();
            if v >= l - 1e-9 && v <= h + 1e-9 {
                all.push((m, e, v));
            }
        }
    }
    let decades = all.iter().filter(|t| t.0 == 1).count();
    let one_two_five = all.iter().filter(|t| matches!(t.0, 1 | 2 | 5)).count();
    // Three or more decades: label every one of them. Fewer: label the 1-2-5 ticks too
    // (or every tick, within one decade), so that no axis has fewer than two labels.
    let labelled = |t: &(u32, i32, f64)| -> bool {
        if decades >= 3 || (decades == 2 && one_two_five > MAX_LABELS) {
            return t.0 == 1;
        }
        let all_few = decades <= 1 && all.len() <= MAX_LABELS - 2;
        all_few || matches!(t.0, 1 | 2 | 5)
    };
    let major: Vec<f64> = all.iter().filter(|t| labelled(t)).map(|t| t.2).collect();
    let labels = all
        .iter()
        .filter(|t| labelled(t))
        .map(|t| log_label(t.0, t.1))
        .collect();
    let minor = all.iter().filter(|t| !labelled(t)).map(|t| t.2).collect();
    Ticks {
        lo: l,
        hi: h,
        major,
        labels,
        minor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_labels_are_powers_of_ten_in_superscript() {
        assert_eq!(log_label(1, 5), "10⁵");
        assert_eq!(log_label(1, -12), "10⁻¹²");
        assert_eq!(log_label(1, 0), "10⁰");
        assert_eq!(log_label(2, 4), "2×10⁴");
        assert_eq!(superscript(1234567890), "¹²³⁴⁵⁶⁷⁸⁹⁰");
    }

    #[test]
    fn a_log_axis_over_decades_labels_every_decade_with_minor_ticks_between() {
        // The MNIST blocks figure: kappa from 2.7e3 to 1.0e9.
        let t = ticks(Scale::Log, 2.7e3, 1.02e9);
        assert_eq!(
            t.labels,
            ["10⁴", "10⁵", "10⁶", "10⁷", "10⁸", "10⁹"].map(String::from)
        );
        assert!(t.lo <= 2.7e3f64.log10() && t.hi >= 1.02e9f64.log10());
        // No decade in range without its label; 8 minor ticks in each full decade.
        for e in (t.lo.ceil() as i32)..=(t.hi.floor() as i32) {
            assert!(t.label_of(f64::from(e)).starts_with("10"), "decade {e}");
        }
        let in_decade_5 = t.minor.iter().filter(|&&v| (5.0..6.0).contains(&v)).count();
        assert_eq!(in_decade_5, 8);
        // Labels are exactly at the decades.
        for (m, l) in t.major.iter().zip(&t.labels) {
            assert_eq!(m.fract(), 0.0, "{l}");
        }
    }

    #[test]
    fn a_log_axis_over_two_decades_labels_one_two_five() {
        // The training loss of Fig. 3: 0.045 to 3.5.
        let t = ticks(Scale::Log, 0.045, 3.5);
        for l in ["5×10⁻²", "10⁻¹", "2×10⁻¹", "5×10⁻¹", "10⁰", "2×10⁰"] {
            assert!(t.labels.contains(&l.to_string()), "{l} in {:?}", t.labels);
        }
        assert!(!t.labels.contains(&"3×10⁻¹".to_string()));
        assert!(t.minor.contains(&0.3f64.log10()));
    }

    #[test]
    fn labels_that_would_overlap_are_dropped_decades_last() {
        let t = ticks(Scale::Log, 700.0, 1100.0);
        // 40 px per tenth of a decade, labels 17 px high with 3 px between.
        let shown = t.without_overlaps(|v| 400.0 * v, |_| 17.0, 3.0);
        let kept: Vec<f64> = t
            .major
            .iter()
            .zip(&shown.labels)
            .filter(|(_, l)| !l.is_empty())
            .map(|(m, _)| 400.0 * m)
            .collect();
        assert!(kept.len() >= 2, "{:?}", shown.labels);
        for (i, a) in kept.iter().enumerate() {
            for b in &kept[i + 1..] {
                assert!((a - b).abs() >= 20.0, "{:?}", shown.labels);
            }
        }
        assert!(
            shown.labels.contains(&"10³".to_string()),
            "{:?}",
            shown.labels
        );
        assert_eq!(shown.major, t.major, "the ticks stay");
        // Room enough: every label stays.
        assert_eq!(
            t.without_overlaps(|v| 1e4 * v, |_| 17.0, 3.0).labels,
            t.labels
        );
    }

    #[test]
    fn a_log_axis_within_a_decade_labels_its_mantissas() {
        let t = ticks(Scale::Log, 1.5e4, 3.2e4);
        assert!(t.labels.contains(&"2×10⁴".to_string()), "{:?}", t.labels);
        assert!(t.labels.contains(&"3×10⁴".to_string()), "{:?}", t.labels);
        assert!(t.labels.len() >= 2);
        assert!(t.lo <= 1.5e4f64.log10() && t.hi >= 3.2e4f64.log10());
    }

    #[test]
    fn integer_axis_ticks_are_whole_numbers() {
        for (lo, hi) in [
            (0.0, 10.0),
            (1.0, 20.0),
            (1.0, 100.0),
            (0.0, 1.0),
            (3.0, 3.0),
        ] {
            let t = ticks(Scale::Integer, lo, hi);
            assert!(!t.major.is_empty());
            assert!(t.major.len() <= MAX_LABELS + 1, "{:?}", t.major);
            for (m, l) in t.major.iter().zip(&t.labels) {
                assert_eq!(m.fract(), 0.0, "{lo}..{hi}: {m}");
                assert!(l.chars().all(|c| c.is_ascii_digit() || c == '-'), "{l}");
            }
            for m in &t.minor {
                assert_eq!(m.fract(), 0.0, "{lo}..{hi}: minor {m}");
            }
            assert!(t.lo < lo && t.hi > hi);
        }
        // Depth 0..10: every depth labelled.
        let t = ticks(Scale::Integer, 0.0, 10.0);
        assert_eq!(
            t.labels,
            (0..=10).map(|d| d.to_string()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn linear_ticks_are_nice_and_cover_the_data() {
        let t = ticks(Scale::Linear, 3.1, 27.8);
        assert!(t.lo <= 3.1 && t.hi >= 27.8);
        assert_eq!(t.labels.first().map(String::as_str), Some("5"));
        assert!(t.labels.iter().all(|l| !l.contains('.')), "{:?}", t.labels);
        let t = ticks(Scale::Linear, 0.80, 0.87);
        assert!(
            t.labels.iter().all(|l| l.starts_with("0.")),
            "{:?}",
            t.labels
        );
        assert!(t.major.len() >= 3 && t.major.len() <= 10);
        let t = ticks(Scale::Linear, -0.5, 0.5);
        assert!(t.labels.contains(&"0.0".to_string()), "{:?}", t.labels);
    }

    #[test]
    fn a_single_value_gets_a_range() {
        let t = ticks(Scale::Linear, 2.0, 2.0);
        assert!(t.lo < 2.0 && t.hi > 2.0 && !t.major.is_empty());
        let t = ticks(Scale::Log, 5e3, 5e3);
        assert!(t.lo < 5e3f64.log10() && t.hi > 5e3f64.log10() && t.major.len() >= 2);
    }
}
