//! Log-log line plots for benchmark reports, as SVG text or as a PNG picture; both are drawn
//! from one list of marks so that they look alike.

use crate::picture::encode_png;
use font8x8::{UnicodeFonts, BASIC_FONTS, LATIN_FONTS};
use std::fmt::Write as _;

const W: u32 = 860;
const H: u32 = 400;
const PAD: f64 = 60.0;
/// The legend's column, right of the plot area, so that it never hides a line.
const LEGEND_W: f64 = 220.0;
/// The plot area's right edge.
const RIGHT: f64 = W as f64 - LEGEND_W;
/// Series colors (matplotlib's tab10), reused in order when there are more series.
const COLORS: [Rgb; 10] = [
    [0x1f, 0x77, 0xb4],
    [0xd6, 0x27, 0x28],
    [0x2c, 0xa0, 0x2c],
    [0xff, 0x7f, 0x0e],
    [0x94, 0x67, 0xbd],
    [0x8c, 0x56, 0x4b],
    [0xe3, 0x77, 0xc2],
    [0x7f, 0x7f, 0x7f],
    [0xbc, 0xbd, 0x22],
    [0x17, 0xbe, 0xcf],
];
const WHITE: Rgb = [0xff; 3];
const INK: Rgb = [0; 3];
const GRID: Rgb = [0xdd; 3];
const LINE_WIDTH: u32 = 2;
const DOT_RADIUS: f64 = 3.0;
/// More ticks than this on an axis would make the labels collide, so decades are skipped.
const MAX_X_TICKS: i32 = 8;
const MAX_Y_TICKS: i32 = 10;
/// The side of a glyph of `font8x8` at scale 1.
const GLYPH: u32 = 8;
/// Drawn for characters that `font8x8` lacks: an empty box, as fonts usually do.
const MISSING_GLYPH: [u8; 8] = [0x00, 0x7e, 0x42, 0x42, 0x42, 0x42, 0x7e, 0x00];

type Rgb = [u8; 3];
type Point = (f64, f64);

/// One named line of a [`LogPlot`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub name: String,
    /// `(x, y)` in data units, drawn in this order; points that a log axis cannot show
    /// (non-positive, NaN, infinite) are skipped.
    pub points: Vec<(f64, f64)>,
}

/// An 860x400 plot (the legend in a column on the right) with logarithmic axes, sized to the data in whole decades.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogPlot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
}

impl LogPlot {
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        Self {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: Vec::new(),
        }
    }

    /// Adds a series; its color is the next of the palette.
    pub fn series(mut self, name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        self.series.push(Series {
            name: name.into(),
            points,
        });
        self
    }

    /// The plot as a standalone SVG document.
    pub fn svg(&self) -> String {
        let mut s = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
        );
        for mark in marks(self) {
            // Writing to a String cannot fail.
            let _ = match mark {
                Mark::Rect { at, size, color } => write!(
                    s,
                    r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>"#,
                    num(at.0),
                    num(at.1),
                    num(size.0),
                    num(size.1),
                    hex(color)
                ),
                Mark::Line { from, to, color } => write!(
                    s,
                    r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}"/>"#,
                    num(from.0),
                    num(from.1),
                    num(to.0),
                    num(to.1),
                    hex(color)
                ),
                Mark::Polyline { points, color } => {
                    let points: Vec<String> = points
                        .iter()
                        .map(|p| format!("{},{}", num(p.0), num(p.1)))
                        .collect();
                    write!(
                        s,
                        r#"<polyline fill="none" stroke="{}" stroke-width="{LINE_WIDTH}" points="{}"/>"#,
                        hex(color),
                        points.join(" ")
                    )
                }
                Mark::Dot { at, color } => write!(
                    s,
                    r#"<circle cx="{}" cy="{}" r="{DOT_RADIUS}" fill="{}"/>"#,
                    num(at.0),
                    num(at.1),
                    hex(color)
                ),
                Mark::Text(t) => {
                    let (x, y) = (num(t.at.0), num(t.at.1));
                    let anchor = match t.anchor {
                        Anchor::Start => "start",
                        Anchor::Middle => "middle",
                        Anchor::End => "end",
                    };
                    let size = if t.scale > 1 {
                        r#" font-size="16""#
                    } else {
                        ""
                    };
                    let rotate = if t.up {
                        format!(r#" transform="rotate(-90 {x} {y})""#)
                    } else {
                        String::new()
                    };
                    write!(
                        s,
                        r#"<text x="{x}" y="{y}" text-anchor="{anchor}"{size}{rotate}>{}</text>"#,
                        escape(&t.text)
                    )
                }
            };
        }
        s.push_str("</svg>\n");
        s
    }

    /// The plot as an 8-bit RGBA PNG file, for viewers that do not show SVG.
    pub fn png(&self) -> std::io::Result<Vec<u8>> {
        let mut canvas = Canvas::new(W, H);
        for mark in marks(self) {
            match mark {
                Mark::Rect { at, size, color } => canvas.fill_rect(at, size, color),
                Mark::Line { from, to, color } => canvas.line(from, to, 1, color),
                Mark::Polyline { points, color } => {
                    for pair in points.windows(2) {
                        canvas.line(pair[0], pair[1], LINE_WIDTH, color);
                    }
                }
                Mark::Dot { at, color } => canvas.disc(at, DOT_RADIUS, color),
                Mark::Text(t) => canvas.text(&t),
            }
        }
        encode_png(canvas.width, canvas.height, &canvas.rgba())
    }
}

/// Whether a log axis can show the point.
fn plottable(p: &Point) -> bool {
    p.0.is_finite() && p.1.is_finite() && p.0 > 0.0 && p.1 > 0.0
}

/// A logarithmic axis from `10^lo` to `10^hi`, ticked every `step` decades.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Axis {
    lo: i32,
    hi: i32,
    step: i32,
}

impl Axis {
    /// The smallest whole-decade range holding every value (which must be finite and
    /// positive), widened so that both ends fall on a tick; 1 to 10 when there are none.
    fn fit(values: impl Iterator<Item = f64>, max_ticks: i32) -> Self {
        let (min, max) = values
            .map(f64::log10)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        // Logarithms of finite positive f64 lie within -324..309, so the casts are exact.
        let (lo, hi) = if min <= max {
            (min.floor() as i32, max.ceil() as i32)
        } else {
            (0, 1)
        };
        let hi = hi.max(lo + 1);
        let step = (hi - lo + max_ticks - 1) / max_ticks;
        let hi = lo + step * ((hi - lo + step - 1) / step);
        Self { lo, hi, step }
    }

    /// Where the value `10^exponent` lies along the axis, from 0 at `lo` to 1 at `hi`.
    fn frac(&self, exponent: f64) -> f64 {
        (exponent - f64::from(self.lo)) / f64::from(self.hi - self.lo)
    }

    /// The exponents of the decades that get a gridline and a label.
    fn ticks(&self) -> impl Iterator<Item = i32> {
        (self.lo..=self.hi).step_by(self.step as usize)
    }
}

/// The mapping from data to pixels (y down, as in both SVG and the PNG).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Layout {
    x: Axis,
    y: Axis,
}

impl Layout {
    fn new(plot: &LogPlot) -> Self {
        let points = || {
            plot.series
                .iter()
                .flat_map(|s| s.points.iter().copied())
                .filter(plottable)
        };
        Self {
            x: Axis::fit(points().map(|p| p.0), MAX_X_TICKS),
            y: Axis::fit(points().map(|p| p.1), MAX_Y_TICKS),
        }
    }

    fn px(&self, x: f64) -> f64 {
        self.x_at(x.log10())
    }

    fn py(&self, y: f64) -> f64 {
        self.y_at(y.log10())
    }

    /// The column of `10^exponent`; exponents, since the top tick may exceed `f64::MAX`.
    fn x_at(&self, exponent: f64) -> f64 {
        PAD + self.x.frac(exponent) * (RIGHT - PAD)
    }

    fn y_at(&self, exponent: f64) -> f64 {
        f64::from(H) - PAD - self.y.frac(exponent) * (f64::from(H) - 2.0 * PAD)
    }
}

/// Text placement along the writing direction relative to its point, as SVG's `text-anchor`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Anchor {
    Start,
    Middle,
    End,
}

/// A line of text whose baseline passes through `at`.
#[derive(Clone, Debug, PartialEq)]
struct Text {
    at: Point,
    text: String,
    /// Glyph pixels per font pixel in the PNG; larger text in the SVG.
    scale: u32,
    anchor: Anchor,
    /// Written bottom to top, as the y label.
    up: bool,
}

/// What a plot is drawn from, in pixels; each renderer draws these in order.
#[derive(Clone, Debug, PartialEq)]
enum Mark {
    Rect {
        at: Point,
        size: Point,
        color: Rgb,
    },
    /// One pixel wide.
    Line {
        from: Point,
        to: Point,
        color: Rgb,
    },
    /// [`LINE_WIDTH`] wide.
    Polyline {
        points: Vec<Point>,
        color: Rgb,
    },
    /// [`DOT_RADIUS`] in radius.
    Dot {
        at: Point,
        color: Rgb,
    },
    /// Black.
    Text(Text),
}

fn label(at: Point, text: impl Into<String>, anchor: Anchor) -> Mark {
    Mark::Text(Text {
        at,
        text: text.into(),
        scale: 1,
        anchor,
        up: false,
    })
}

/// Everything the plot shows, back to front, for either renderer.
fn marks(plot: &LogPlot) -> Vec<Mark> {
    let layout = Layout::new(plot);
    let (w, h) = (f64::from(W), f64::from(H));
    let mut marks = vec![Mark::Rect {
        at: (0.0, 0.0),
        size: (w, h),
        color: WHITE,
    }];
    // The title shrinks rather than being cut off.
    let title_scale = if text_width(&plot.title, 2) <= u64::from(W) - 2 * u64::from(GLYPH) {
        2
    } else {
        1
    };
    marks.push(Mark::Text(Text {
        at: (w / 2.0, 30.0),
        text: plot.title.clone(),
        scale: title_scale,
        anchor: Anchor::Middle,
        up: false,
    }));
    for d in layout.x.ticks() {
        let x = layout.x_at(f64::from(d));
        marks.push(Mark::Line {
            from: (x, PAD),
            to: (x, h - PAD),
            color: GRID,
        });
        marks.push(label((x, h - PAD + 16.0), format!("1e{d}"), Anchor::Middle));
    }
    for d in layout.y.ticks() {
        let y = layout.y_at(f64::from(d));
        marks.push(Mark::Line {
            from: (PAD, y),
            to: (RIGHT, y),
            color: GRID,
        });
        marks.push(label((PAD - 6.0, y + 4.0), format!("1e{d}"), Anchor::End));
    }
    marks.push(label(
        ((PAD + RIGHT) / 2.0, h - 20.0),
        &plot.x_label,
        Anchor::Middle,
    ));
    marks.push(Mark::Text(Text {
        at: (16.0, h / 2.0),
        text: plot.y_label.clone(),
        scale: 1,
        anchor: Anchor::Middle,
        up: true,
    }));
    for (k, series) in plot.series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let points: Vec<Point> = series
            .points
            .iter()
            .filter(|p| plottable(p))
            .map(|p| (layout.px(p.0), layout.py(p.1)))
            .collect();
        marks.push(Mark::Polyline {
            points: points.clone(),
            color,
        });
        marks.extend(points.into_iter().map(|at| Mark::Dot { at, color }));
        let row = PAD + 4.0 + 16.0 * k as f64;
        marks.push(Mark::Rect {
            at: (RIGHT + 14.0, row - 1.5),
            size: (12.0, 3.0),
            color,
        });
        marks.push(label(
            (RIGHT + 32.0, row + 4.0),
            &series.name,
            Anchor::Start,
        ));
    }
    marks
}

/// SVG coordinates with at most one decimal, which is finer than any viewer resolves.
fn num(v: f64) -> String {
    let s = format!("{v:.1}");
    match s.strip_suffix(".0") {
        Some(whole) => whole.to_owned(),
        None => s,
    }
}

fn hex([r, g, b]: Rgb) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Makes user text safe inside SVG elements and attributes.
fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            c => s.push(c),
        }
    }
    s
}

/// Pixels that `text` takes along its direction at `scale`.
fn text_width(text: &str, scale: u32) -> u64 {
    text.chars().count() as u64 * u64::from(GLYPH * scale)
}

fn glyph(c: char) -> [u8; 8] {
    BASIC_FONTS
        .get(c)
        .or_else(|| LATIN_FONTS.get(c))
        .unwrap_or(MISSING_GLYPH)
}

/// An RGB raster that clips whatever is drawn on it to its bounds.
struct Canvas {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Canvas {
    fn new(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            rgb: vec![0xff; width as usize * height as usize * 3],
        }
    }

    fn rgba(&self) -> Vec<u8> {
        self.rgb
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 0xff])
            .collect()
    }

    /// Fills pixel columns `x0..x1` of rows `y0..y1`, clipped.
    fn fill(&mut self, (x0, x1): (i64, i64), (y0, y1): (i64, i64), color: Rgb) {
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        let (x0, x1) = (x0.clamp(0, w), x1.clamp(0, w));
        for y in y0.clamp(0, h)..y1.clamp(0, h) {
            for x in x0..x1 {
                let i = (y * w + x) as usize * 3;
                self.rgb[i..i + 3].copy_from_slice(&color);
            }
        }
    }

    /// Fills the pixels whose centers lie in the rectangle, as an SVG `<rect>` covers them.
    fn fill_rect(&mut self, at: Point, size: Point, color: Rgb) {
        // Float to int casts saturate and take NaN to 0, so any input stays in range.
        let edge = |v: f64| (v - 0.5).ceil() as i64;
        self.fill(
            (edge(at.0), edge(at.0 + size.0)),
            (edge(at.1), edge(at.1 + size.1)),
            color,
        );
    }

    /// Fills the pixels whose centers lie within `radius` of `center`.
    fn disc(&mut self, center: Point, radius: f64, color: Rgb) {
        let (cx, cy) = center;
        if !(cx.is_finite() && cy.is_finite() && radius.is_finite()) {
            return;
        }
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        let span = |c: f64, max: i64| {
            (
                ((c - radius).floor() as i64).clamp(0, max),
                ((c + radius).ceil() as i64).clamp(0, max),
            )
        };
        let ((x0, x1), (y0, y1)) = (span(cx, w), span(cy, h));
        for y in y0..y1 {
            for x in x0..x1 {
                let (dx, dy) = (x as f64 + 0.5 - cx, y as f64 + 0.5 - cy);
                if dx * dx + dy * dy <= radius * radius {
                    self.fill((x, x + 1), (y, y + 1), color);
                }
            }
        }
    }

    /// A line `width` pixels thick without anti-aliasing: Bresenham's line, stamped with a
    /// disc. Even widths are centered on the pixel corner nearest to the line, odd ones on the
    /// pixel it crosses, so that a 2 px line at y = 100 covers rows 99 and 100 as in SVG.
    fn line(&mut self, from: Point, to: Point, width: u32, color: Rgb) {
        let margin = f64::from(width);
        let Some((from, to)) = clip(
            from,
            to,
            (-margin, -margin),
            (
                f64::from(self.width) + margin,
                f64::from(self.height) + margin,
            ),
        ) else {
            return;
        };
        let even = width.is_multiple_of(2);
        let pixel = |v: f64| if even { v.round() } else { v.floor() } as i64;
        let (w, half) = (i64::from(width), f64::from(width) / 2.0);
        let (first, last) = (-w / 2, (w - 1) / 2);
        let offset = if even { 0.5 } else { 0.0 };
        let stamp: Vec<(i64, i64)> = (first..=last)
            .flat_map(|dy| (first..=last).map(move |dx| (dx, dy)))
            .filter(|&(dx, dy)| {
                let (fx, fy) = (dx as f64 + offset, dy as f64 + offset);
                fx * fx + fy * fy <= half * half
            })
            .collect();
        let (mut x, mut y) = (pixel(from.0), pixel(from.1));
        let (x1, y1) = (pixel(to.0), pixel(to.1));
        let (dx, dy) = ((x1 - x).abs(), -(y1 - y).abs());
        let (sx, sy) = ((x1 - x).signum(), (y1 - y).signum());
        let mut err = dx + dy;
        loop {
            for &(ox, oy) in &stamp {
                self.fill((x + ox, x + ox + 1), (y + oy, y + oy + 1), color);
            }
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Draws `t` in black with the 8x8 font, the glyphs' row 7 (descenders) just below the
    /// baseline.
    fn text(&mut self, t: &Text) {
        let (x, y) = (t.at.0.round() as i64, t.at.1.round() as i64);
        let s = i64::from(t.scale.max(1));
        let advance = i64::from(GLYPH) * s;
        let width = text_width(&t.text, t.scale.max(1)) as i64;
        let start = match t.anchor {
            Anchor::Start => 0,
            Anchor::Middle => -width / 2,
            Anchor::End => -width,
        };
        // The canvas along the writing direction, so that long text costs only what shows.
        let (first, end) = if t.up {
            (y - i64::from(self.height), y)
        } else {
            (-x, i64::from(self.width) - x)
        };
        for (i, c) in t.text.chars().enumerate() {
            let along = start + i as i64 * advance;
            if along + advance <= first {
                continue;
            }
            if along >= end {
                break;
            }
            for (gy, bits) in glyph(c).into_iter().enumerate() {
                for gx in 0..GLYPH as i64 {
                    if bits >> gx & 1 == 0 {
                        continue;
                    }
                    // (lx, ly): the font pixel's corner relative to the anchor, baseline up.
                    let (lx, ly) = (along + gx * s, (gy as i64 - 7) * s);
                    let (px, py) = if t.up {
                        (x + ly, y - lx - s)
                    } else {
                        (x + lx, y + ly)
                    };
                    self.fill((px, px + s), (py, py + s), INK);
                }
            }
        }
    }
}

/// The part of the segment inside the box `lo..hi` (Liang-Barsky), so that huge coordinates
/// cost no time; `None` when it misses the box or is not finite.
fn clip(a: Point, b: Point, lo: Point, hi: Point) -> Option<(Point, Point)> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - lo.0),
        (dx, hi.0 - a.0),
        (-dy, a.1 - lo.1),
        (dy, hi.1 - a.1),
    ] {
        if !(p.is_finite() && q.is_finite()) {
            return None;
        }
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    (t0 <= t1).then_some({
        (
            (a.0 + t0 * dx, a.1 + t0 * dy),
            (a.0 + t1 * dx, a.1 + t1 * dy),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::picture::decode_png;

    fn sample() -> LogPlot {
        LogPlot::new("Crowd evaluate", "instances", "ms per frame")
            .series("GPU", vec![(1e3, 0.05), (1e4, 0.2), (1e5, 1.5)])
            .series("CPU twin", vec![(1e3, 0.4), (1e4, 4.0), (1e5, 40.0)])
    }

    fn pixel(rgba: &[u8], x: usize, y: usize) -> Rgb {
        let i = (y * W as usize + x) * 4;
        [rgba[i], rgba[i + 1], rgba[i + 2]]
    }

    fn decode(plot: &LogPlot) -> Vec<u8> {
        let (w, h, rgba) = decode_png(&plot.png().unwrap()).unwrap();
        assert_eq!((w, h), (W, H));
        rgba
    }

    #[test]
    fn png_has_the_plot_size_on_white() {
        let rgba = decode(&sample());
        assert_eq!(pixel(&rgba, 0, 0), WHITE);
        assert_eq!(pixel(&rgba, W as usize - 1, H as usize - 1), WHITE);
    }

    #[test]
    fn points_are_drawn_where_the_layout_maps_them() {
        let plot = sample();
        let layout = Layout::new(&plot);
        let rgba = decode(&plot);
        for (k, (x, y)) in [(1, (1e4, 4.0)), (0, (1e5, 1.5))] {
            let (px, py) = (layout.px(x), layout.py(y));
            assert_eq!(
                pixel(&rgba, px as usize, py as usize),
                COLORS[k],
                "series {k}"
            );
        }
    }

    #[test]
    fn axes_span_whole_decades_of_the_data() {
        let layout = Layout::new(&sample());
        assert_eq!((layout.x.lo, layout.x.hi), (3, 5));
        assert_eq!((layout.y.lo, layout.y.hi), (-2, 2));
        assert_eq!(layout.px(1e3), PAD);
        assert_eq!(layout.py(1e-2), f64::from(H) - PAD);
        let empty = Layout::new(&LogPlot::default());
        assert_eq!(
            (empty.x.lo, empty.x.hi, empty.y.lo, empty.y.hi),
            (0, 1, 0, 1)
        );
    }

    #[test]
    fn wide_ranges_skip_decades_to_keep_labels_apart() {
        let plot = LogPlot::default().series("", vec![(1e-300, 1e-300), (1e300, 1e300)]);
        let layout = Layout::new(&plot);
        assert!(layout.x.ticks().count() <= MAX_X_TICKS as usize + 1);
        assert!(layout.y.ticks().count() <= MAX_Y_TICKS as usize + 1);
        assert_eq!(layout.x.ticks().last(), Some(layout.x.hi));
    }

    #[test]
    fn title_is_drawn_in_the_top_band() {
        let inked = |plot: &LogPlot| {
            let rgba = decode(plot);
            (0..PAD as usize - 10)
                .flat_map(|y| (0..W as usize).map(move |x| (x, y)))
                .filter(|&(x, y)| pixel(&rgba, x, y) != WHITE)
                .count()
        };
        assert!(inked(&sample()) > 100);
        let untitled = LogPlot {
            title: String::new(),
            ..sample()
        };
        assert_eq!(inked(&untitled), 0);
    }

    #[test]
    fn svg_has_a_polyline_per_series_and_escapes_text() {
        let svg = sample().series("a<b & c>", vec![]).svg();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<polyline").count(), 3);
        assert_eq!(svg.matches("<circle").count(), 6);
        assert!(svg.contains("a&lt;b &amp; c&gt;"));
        assert!(!svg.contains("a<b"));
        assert!(svg.contains(">1e4</text>") && svg.contains(">1e-1</text>"));
    }

    #[test]
    fn hostile_input_does_not_panic() {
        let mut plot = LogPlot::new("x".repeat(10_000), "é µ ☃ \n\t", "<&>")
            .series(
                "nan",
                vec![(f64::NAN, 1.0), (1.0, f64::NAN), (f64::INFINITY, 1.0)],
            )
            .series("empty", vec![])
            .series("non-positive", vec![(0.0, 1.0), (-1.0, 2.0), (1.0, -0.0)])
            .series(
                "extremes",
                vec![
                    (f64::MAX, f64::MIN_POSITIVE),
                    (5e-324, f64::MAX),
                    (1.0, 1.0),
                ],
            );
        for k in 0..10 {
            plot = plot.series(format!("s{k}"), vec![(1.0 + k as f64, 2.0)]);
        }
        let svg = plot.svg();
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        decode(&plot);
        decode(&LogPlot::default().series("only bad", vec![(f64::NAN, -1.0)]));
    }

    #[test]
    fn canvas_clips_and_ignores_non_finite_shapes() {
        let mut canvas = Canvas::new(4, 3);
        canvas.line((-1e300, -1e300), (1e300, 1e300), 3, INK);
        canvas.line((f64::NAN, 0.0), (1.0, 1.0), 2, INK);
        canvas.disc((f64::INFINITY, 1.0), 1e9, INK);
        canvas.disc((2.0, 1.5), 1e300, GRID);
        canvas.fill_rect((f64::NEG_INFINITY, 0.0), (f64::INFINITY, f64::NAN), INK);
        assert_eq!(canvas.rgb.len(), 4 * 3 * 3);
        assert!(canvas.rgb.chunks(3).all(|p| p == GRID));
    }

    #[test]
    fn text_anchors_and_baseline_match_svg() {
        let mut canvas = Canvas::new(40, 20);
        let at = (20.0, 10.0);
        canvas.text(&Text {
            at,
            text: "H".into(),
            scale: 1,
            anchor: Anchor::End,
            up: false,
        });
        let inked: Vec<(usize, usize)> = (0..20)
            .flat_map(|y| (0..40).map(move |x| (x, y)))
            .filter(|&(x, y)| canvas.rgb[(y * 40 + x) * 3] == 0)
            .collect();
        // 'H' fills columns 0..=1 and 4..=5 of its 8, rows 0..=6: above the baseline, left of
        // the anchor.
        assert!(inked
            .iter()
            .all(|&(x, y)| (12..20).contains(&x) && (3..10).contains(&y)));
        assert!(inked.contains(&(12, 3)) && inked.contains(&(17, 9)));
    }
}
