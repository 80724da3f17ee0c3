//! A plotters backend that writes a one-page PDF: lines, polygons, rectangles and circles
//! as vector paths, text as the outlines of the bundled font's glyphs (filled paths, so no
//! font is embedded and the page looks the same in every viewer), transparency through
//! graphics states, the content stream deflated. No dates or ids: the same figure gives the
//! same bytes.
//!
//! Text is placed as plotters places it on a bitmap (`DrawingBackend::draw_text`'s default:
//! the layout box anchored at `pos`, the baseline at half the font size under its top, the
//! same rotations), so the PDF matches the PNG.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;

use ab_glyph::{Font, FontRef, OutlineCurve, ScaleFont};
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontTransform,
};

/// Why a PDF could not be made.
#[derive(Debug)]
pub struct PdfError(String);

impl std::fmt::Display for PdfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PdfError {}

type Drawn = Result<(), DrawingErrorKind<PdfError>>;

/// A page of `size` layout units, written to `out` as `pt_per_unit` points each.
pub struct PdfBackend<'a> {
    size: (u32, u32),
    pt_per_unit: f64,
    font: FontRef<'static>,
    ops: String,
    /// Opacity (in thousandths) -> graphics-state name.
    alphas: BTreeMap<u32, String>,
    /// Glyph id -> its outline as a form's path (font units, y up) and bounding box: each
    /// glyph is drawn once and placed by a matrix wherever it occurs.
    glyphs: BTreeMap<u16, (String, [f32; 4])>,
    out: &'a mut Vec<u8>,
}

impl<'a> PdfBackend<'a> {
    pub fn new(
        out: &'a mut Vec<u8>,
        size: (u32, u32),
        pt_per_unit: f64,
        font: &'static [u8],
    ) -> Self {
        let font = FontRef::try_from_slice(font).expect("the bundled font is a valid TTF");
        Self {
            size,
            pt_per_unit,
            font,
            ops: String::new(),
            alphas: BTreeMap::new(),
            glyphs: BTreeMap::new(),
            out,
        }
    }

    /// A point of the layout (y down) in the page's units (y up).
    fn at(&self, x: f64, y: f64) -> (f64, f64) {
        (x, f64::from(self.size.1) - y)
    }

    /// Sets the fill or stroke colour and its opacity.
    fn paint(&mut self, c: BackendColor, stroke: bool) {
        let (r, g, b) = c.rgb;
        let op = if stroke { "RG" } else { "rg" };
        let _ = writeln!(
            self.ops,
            "{} {} {} {op}",
            num(f64::from(r) / 255.0),
            num(f64::from(g) / 255.0),
            num(f64::from(b) / 255.0)
        );
        let alpha = (c.alpha.clamp(0.0, 1.0) * 1000.0).round() as u32;
        let n = self.alphas.len();
        let name = self
            .alphas
            .entry(alpha)
            .or_insert_with(|| format!("G{n}"))
            .clone();
        let _ = writeln!(self.ops, "/{name} gs");
    }

    fn move_to(&mut self, (x, y): (f64, f64)) {
        let (x, y) = self.at(x, y);
        let _ = writeln!(self.ops, "{} {} m", num(x), num(y));
    }

    fn line_to(&mut self, (x, y): (f64, f64)) {
        let (x, y) = self.at(x, y);
        let _ = writeln!(self.ops, "{} {} l", num(x), num(y));
    }

    fn curve_to(&mut self, a: (f64, f64), b: (f64, f64), c: (f64, f64)) {
        let (a, b, c) = (self.at(a.0, a.1), self.at(b.0, b.1), self.at(c.0, c.1));
        let _ = writeln!(
            self.ops,
            "{} {} {} {} {} {} c",
            num(a.0),
            num(a.1),
            num(b.0),
            num(b.1),
            num(c.0),
            num(c.1)
        );
    }

    /// The polyline through `points`, closed if `close`, then stroked or filled
    /// ([`Self::finish`]); nothing for no points.
    fn polyline<S: BackendStyle>(
        &mut self,
        points: impl IntoIterator<Item = (f64, f64)>,
        close: bool,
        style: &S,
        fill: bool,
    ) {
        let mut points = points.into_iter();
        let Some(first) = points.next() else {
            return;
        };
        self.move_to(first);
        for p in points {
            self.line_to(p);
        }
        if close {
            self.ops.push_str("h\n");
        }
        self.finish(style, fill);
    }

    /// Strokes (`width` units, round caps and joins) or fills the path just built.
    fn finish<S: BackendStyle>(&mut self, style: &S, fill: bool) {
        if fill {
            self.paint(style.color(), false);
            self.ops.push_str("f\n");
        } else {
            self.paint(style.color(), true);
            let _ = writeln!(
                self.ops,
                "{} w 1 J 1 j S",
                num(f64::from(style.stroke_width()))
            );
        }
    }

    /// The whole file: catalog, page tree, the page with its graphics states, the
    /// deflated content stream, the cross-reference table.
    fn file(&self) -> std::io::Result<Vec<u8>> {
        let (w, h) = (f64::from(self.size.0), f64::from(self.size.1));
        let k = self.pt_per_unit;
        let content = format!("{} 0 0 {} 0 0 cm\n{}", num(k), num(k), self.ops);
        let states: String = self
            .alphas
            .iter()
            .map(|(a, name)| {
                let a = num(f64::from(*a) / 1000.0);
                format!("/{name} << /CA {a} /ca {a} >> ")
            })
            .collect();
        let forms: String = self
            .glyphs
            .keys()
            .enumerate()
            .map(|(i, id)| format!("/g{id} {} 0 R ", 5 + i))
            .collect();
        let mut objects: Vec<Vec<u8>> = vec![
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {} {}] /Resources << /ExtGState << {states}>> /XObject << {forms}>> >> /Contents 4 0 R >>",
                num(w * k),
                num(h * k)
            )
            .into_bytes(),
            deflated("", content.as_bytes())?,
        ];
        for (path, [x0, y0, x1, y1]) in self.glyphs.values() {
            let head = format!(
                "/Type /XObject /Subtype /Form /BBox [{} {} {} {}] ",
                x0.floor(),
                y0.floor(),
                x1.ceil(),
                y1.ceil()
            );
            objects.push(deflated(&head, path.as_bytes())?);
        }
        let mut file = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
        let mut offsets = Vec::new();
        for (i, body) in objects.iter().enumerate() {
            offsets.push(file.len());
            file.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
            file.extend_from_slice(body);
            file.extend_from_slice(b"\nendobj\n");
        }
        let xref = file.len();
        let mut table = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
        for o in offsets {
            let _ = writeln!(table, "{o:010} 00000 n ");
        }
        let _ = write!(
            table,
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        );
        file.extend_from_slice(table.as_bytes());
        Ok(file)
    }
}

/// A stream object: `dict` (the entries besides its length and filter), then `data`
/// deflated.
fn deflated(dict: &str, data: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(data)?;
    let stream = z.finish()?;
    Ok([
        format!(
            "<< {dict}/Length {} /Filter /FlateDecode >>\nstream\n",
            stream.len()
        )
        .into_bytes(),
        stream,
        b"\nendstream".to_vec(),
    ]
    .concat())
}

/// A glyph's outline as a filled path in font units (y up), its contours closed.
fn glyph_path(outline: &ab_glyph::Outline) -> String {
    let mut ops = String::new();
    let mut end: Option<ab_glyph::Point> = None;
    let p = |q: ab_glyph::Point| format!("{} {}", num(f64::from(q.x)), num(f64::from(q.y)));
    for curve in &outline.curves {
        let start = match curve {
            OutlineCurve::Line(a, _)
            | OutlineCurve::Quad(a, _, _)
            | OutlineCurve::Cubic(a, _, _, _) => *a,
        };
        if end != Some(start) {
            if end.is_some() {
                ops.push_str("h\n");
            }
            let _ = writeln!(ops, "{} m", p(start));
        }
        end = Some(match curve {
            OutlineCurve::Line(_, b) => {
                let _ = writeln!(ops, "{} l", p(*b));
                *b
            }
            OutlineCurve::Quad(a, b, c) => {
                // The quadratic as a cubic: handles 2/3 of the way to the control.
                let h = |from: ab_glyph::Point| ab_glyph::Point {
                    x: from.x + 2.0 / 3.0 * (b.x - from.x),
                    y: from.y + 2.0 / 3.0 * (b.y - from.y),
                };
                let _ = writeln!(ops, "{} {} {} c", p(h(*a)), p(h(*c)), p(*c));
                *c
            }
            OutlineCurve::Cubic(_, b, c, d) => {
                let _ = writeln!(ops, "{} {} {} c", p(*b), p(*c), p(*d));
                *d
            }
        });
    }
    ops.push_str("h\nf\n");
    ops
}

/// A glyph's bounding box in font units.
fn bounds(outline: &ab_glyph::Outline) -> [f32; 4] {
    let b = outline.bounds;
    [b.min.x, b.min.y, b.max.x, b.max.y]
}

/// A matrix entry: six decimals (a glyph's scale is about 0.01 units per font unit).
fn num6(v: f64) -> String {
    decimals(v, 6)
}

/// A number as PDF writes it: at most three decimals, no trailing zeros.
fn num(v: f64) -> String {
    decimals(v, 3)
}

/// `v` with at most `places` decimals, no trailing zeros, no `-0`.
fn decimals(v: f64, places: usize) -> String {
    let s = format!("{v:.places$}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

fn pt(c: BackendCoord) -> (f64, f64) {
    (f64::from(c.0), f64::from(c.1))
}

impl DrawingBackend for PdfBackend<'_> {
    type ErrorType = PdfError;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(&mut self) -> Drawn {
        Ok(())
    }

    fn present(&mut self) -> Drawn {
        let file = self
            .file()
            .map_err(|e| DrawingErrorKind::DrawingError(PdfError(e.to_string())))?;
        *self.out = file;
        Ok(())
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Drawn {
        let (x, y) = pt(point);
        let square = [(x, y), (x + 1.0, y), (x + 1.0, y + 1.0), (x, y + 1.0)];
        self.polyline(square, true, &color, true);
        Ok(())
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Drawn {
        self.draw_path([from, to], style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Drawn {
        let (a, b) = (pt(upper_left), pt(bottom_right));
        self.polyline([a, (b.0, a.1), b, (a.0, b.1)], true, style, fill);
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn {
        self.polyline(path.into_iter().map(pt), false, style, false);
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Drawn {
        // Four cubic arcs (the usual 0.5523 handle length).
        let (cx, cy) = pt(center);
        let r = f64::from(radius);
        let k = 0.552_284_75 * r;
        self.move_to((cx + r, cy));
        self.curve_to((cx + r, cy + k), (cx + k, cy + r), (cx, cy + r));
        self.curve_to((cx - k, cy + r), (cx - r, cy + k), (cx - r, cy));
        self.curve_to((cx - r, cy - k), (cx - k, cy - r), (cx, cy - r));
        self.curve_to((cx + k, cy - r), (cx + r, cy - k), (cx + r, cy));
        self.ops.push_str("h\n");
        self.finish(style, fill);
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Drawn {
        self.polyline(vert.into_iter().map(pt), true, style, true);
        Ok(())
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Drawn {
        let color = style.color();
        if color.alpha == 0.0 || text.is_empty() {
            return Ok(());
        }
        let size = style.size();
        let ((x0, y0), (x1, y1)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (f64::from(x1 - x0), f64::from(y1 - y0));
        let dx = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Right => -width,
            HPos::Center => -(width / 2.0).trunc(),
        } - f64::from(x0);
        let dy = match style.anchor().v_pos {
            VPos::Top => 0.0,
            VPos::Center => -(height / 2.0).trunc(),
            VPos::Bottom => -height,
        } - f64::from(y0);
        let transform = style.transform();
        let place = |(x, y): (f64, f64)| -> (f64, f64) {
            let (x, y) = (x + dx, y + dy);
            let (x, y) = match transform {
                FontTransform::None => (x, y),
                FontTransform::Rotate90 => (-y, x),
                FontTransform::Rotate180 => (-x, -y),
                FontTransform::Rotate270 => (y, -x),
            };
            (f64::from(pos.0) + x, f64::from(pos.1) + y)
        };
        let font = self.font.clone();
        let scaled = font.as_scaled(size as f32);
        let unit = f64::from(scaled.scale_factor().vertical);
        let baseline = size / 2.0;
        let mut shift = 0.0f64;
        let mut prev = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = prev {
                shift += f64::from(scaled.kern(p, id));
            }
            prev = Some(id);
            if let Some(outline) = font.outline(id) {
                self.glyphs
                    .entry(id.0)
                    .or_insert_with(|| (glyph_path(&outline), bounds(&outline)));
                // The form's font units (y up) to this page: where the glyph's origin, its
                // unit x and its unit y land.
                let map = |u: f64, v: f64| {
                    let (x, y) = place((shift + u * unit, baseline - v * unit));
                    self.at(x, y)
                };
                let (o, ex, ey) = (map(0.0, 0.0), map(1.0, 0.0), map(0.0, 1.0));
                self.paint(color, false);
                let _ = writeln!(
                    self.ops,
                    "q {} {} {} {} {} {} cm /g{} Do Q",
                    num6(ex.0 - o.0),
                    num6(ex.1 - o.1),
                    num6(ey.0 - o.0),
                    num6(ey.1 - o.1),
                    num(o.0),
                    num(o.1),
                    id.0
                );
            }
            shift += f64::from(scaled.h_advance(id));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Vec<u8> {
        let mut bytes = Vec::new();
        {
            crate::register_font();
            let root =
                PdfBackend::new(&mut bytes, (200, 100), 0.5, crate::FONT).into_drawing_area();
            root.fill(&WHITE).unwrap();
            root.draw(&PathElement::new(
                vec![(10, 90), (190, 10)],
                Color::stroke_width(&RED.mix(0.5), 2),
            ))
            .unwrap();
            root.draw(&Circle::new((100, 50), 5, BLUE.filled()))
                .unwrap();
            let style = ("sans-serif", 20).into_font().into_text_style(&root);
            root.draw(&Text::new("κ 10⁵ κ", (20, 20), style.clone()))
                .unwrap();
            let rotated = style.transform(FontTransform::Rotate270);
            root.draw(&Text::new("depth", (10, 80), rotated)).unwrap();
            root.present().unwrap();
        }
        bytes
    }

    /// Every object sits where the cross-reference table says, the page has the layout's
    /// size in points, and each glyph is one form drawn wherever it occurs.
    #[test]
    fn a_page_is_a_well_formed_pdf() {
        let b = page();
        // Offsets are bytes: binary stream bytes become one char each (Latin-1).
        let text: Vec<char> = b.iter().map(|&c| char::from(c)).collect();
        let at = |i: usize, s: &str| text[i..].iter().take(s.len()).copied().eq(s.chars());
        let find = |s: &str| (0..text.len()).rev().find(|&i| at(i, s)).unwrap();
        let whole: String = text.iter().collect();
        assert!(b.starts_with(b"%PDF-1.4\n") && b.ends_with(b"%%EOF\n"));
        let start = find("startxref\n") + "startxref\n".len();
        let xref: usize = whole[whole.len() - (text.len() - start)..]
            .lines()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(at(xref, "xref\n"));
        let table: String = text[xref..].iter().collect();
        let entries: Vec<&str> = table
            .lines()
            .skip(3)
            .take_while(|l| l.ends_with(" n "))
            .collect();
        assert!(entries.len() > 4);
        for (i, e) in entries.iter().enumerate() {
            let offset: usize = e[..10].parse().unwrap();
            assert!(
                at(offset, &format!("{} 0 obj\n", i + 1)),
                "object {}",
                i + 1
            );
        }
        assert!(
            whole.contains("/MediaBox [0 0 100 50]"),
            "200 x 100 units at 0.5 pt"
        );
        // "κ 10⁵ κ" and "depth": the two κ share one form; 9 distinct glyphs with an outline
        // (the space has none).
        let forms = whole.matches("/Subtype /Form").count();
        assert_eq!(forms, 9, "{forms} glyph forms");
        let i = b.windows(7).position(|w| w == b"stream\n").unwrap() + 7;
        let mut content = String::new();
        std::io::Read::read_to_string(&mut flate2::read::ZlibDecoder::new(&b[i..]), &mut content)
            .unwrap();
        assert_eq!(
            content.matches(" Do Q").count(),
            10,
            "one placement per glyph drawn"
        );
        assert!(
            content.contains("/G1 gs"),
            "the half-transparent line has its own state"
        );
    }

    #[test]
    fn the_same_figure_gives_the_same_bytes() {
        assert_eq!(page(), page());
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(-0.0001), "0");
        assert_eq!(num(2.5), "2.5");
        assert_eq!(num(1.23456), "1.235");
        assert_eq!(num6(0.0048828125), "0.004883");
    }
}
