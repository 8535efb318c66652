//! `--png DIR`: every chart rasterised from its own SVG with resvg, text in
//! the system's fonts (DejaVu Sans where installed).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use iolab_model::runs::RunsFile;
use resvg::{tiny_skia, usvg};

use crate::runs::charts;
use crate::RenderError;

/// Pixels per SVG unit: crisp on high-density screens and in READMEs.
const ZOOM: f32 = 2.0;

fn options() -> usvg::Options<'static> {
    let mut opt = usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_system_fonts();
    db.set_sans_serif_family("DejaVu Sans");
    opt
}

/// Rasterise one SVG document to PNG bytes.
pub fn rasterise(id: &str, svg: &str, opt: &usvg::Options) -> Result<Vec<u8>, RenderError> {
    let err = |reason: String| RenderError::Raster {
        chart: id.to_string(),
        reason,
    };
    // Inline SVG in HTML needs no namespace; a standalone SVG document does.
    let doc = svg.replacen("<svg ", "<svg xmlns=\"http://www.w3.org/2000/svg\" ", 1);
    let tree = usvg::Tree::from_str(&doc, opt).map_err(|e| err(e.to_string()))?;
    let size = tree.size().to_int_size();
    let (w, h) = (
        (size.width() as f32 * ZOOM).ceil() as u32,
        (size.height() as f32 * ZOOM).ceil() as u32,
    );
    let mut pixmap =
        tiny_skia::Pixmap::new(w, h).ok_or_else(|| err(format!("bad size {w}x{h}")))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(ZOOM, ZOOM),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(|e| err(e.to_string()))
}

/// Write every chart as `<dir>/<chart id>.png`.
pub fn render_all(file: &RunsFile, dir: &Path) -> Result<Vec<PathBuf>, RenderError> {
    write_all(charts::charts(file).into_iter().map(|c| (c.id, c.svg)), dir)
}

/// Write each (id, svg) chart as `<dir>/<id>.png`: any document's charts.
/// Ids come from run names made file-name-safe, so two names can give one id
/// (`p_1` and `p-1` are both `p-1`): a later chart whose name is taken gets
/// `-2`, `-3`, ... ([`unique_name`]), so every chart is its own file and the
/// paths returned are the files written.
pub fn write_all(
    charts: impl IntoIterator<Item = (String, String)>,
    dir: &Path,
) -> Result<Vec<PathBuf>, RenderError> {
    std::fs::create_dir_all(dir).map_err(|source| RenderError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let opt = options();
    let mut out = Vec::new();
    let mut taken = HashSet::new();
    for (id, svg) in charts {
        let bytes = rasterise(&id, &svg, &opt)?;
        let path = dir.join(format!("{}.png", unique_name(&id, &mut taken)));
        std::fs::write(&path, bytes).map_err(|source| RenderError::Io {
            path: path.clone(),
            source,
        })?;
        out.push(path);
    }
    Ok(out)
}

/// `id`, or `id-N` with the smallest N from 2 that no earlier chart took;
/// marks the name taken.
fn unique_name(id: &str, taken: &mut HashSet<String>) -> String {
    let name = (1..)
        .map(|n| match n {
            1 => id.to_string(),
            n => format!("{id}-{n}"),
        })
        .find(|name| !taken.contains(name))
        .expect("a finite set leaves a name free");
    taken.insert(name.clone());
    name
}

/// Distinct colours in a PNG: a check that an image is not blank.
pub fn distinct_colours(png: &[u8]) -> Result<usize, RenderError> {
    let pixmap = tiny_skia::Pixmap::decode_png(png).map_err(|e| RenderError::Raster {
        chart: "png".into(),
        reason: e.to_string(),
    })?;
    let set: HashSet<[u8; 4]> = pixmap
        .pixels()
        .iter()
        .map(|p| [p.red(), p.green(), p.blue(), p.alpha()])
        .collect();
    Ok(set.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_taken_get_the_next_free_suffix() {
        let mut taken = HashSet::new();
        let names: Vec<String> = ["a", "a", "a-2", "a", "b"]
            .iter()
            .map(|id| unique_name(id, &mut taken))
            .collect();
        assert_eq!(names, ["a", "a-2", "a-2-2", "a-3", "b"]);
    }
}
