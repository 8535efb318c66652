//! Renderers of saved results: table, markdown, json, csv, html with inline SVG.
