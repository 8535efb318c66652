//! The output formats ([`Format::def`]: names, aliases, what each draws):
//! what `--format` takes and what its help lists.

use std::fmt;
use std::str::FromStr;

use crate::document::DOCUMENTS;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Terminal text (a table, or an attack's summary lines).
    Table,
    /// Markdown table.
    Markdown,
    /// Self-contained HTML with inline SVG charts.
    Html,
    /// Flat JSON, one object per run.
    Json,
    /// Flat CSV, one row per run.
    Csv,
}

/// What one output format is: its names and whether it draws charts.
#[derive(Debug, Clone, Copy)]
pub struct FormatDef {
    /// The name on the command line: `md`.
    pub name: &'static str,
    /// Other names it answers to: `markdown`.
    pub aliases: &'static [&'static str],
    /// It draws charts, so only documents with charts offer it.
    pub charts: bool,
}

impl Format {
    /// Every format, in help order.
    pub const ALL: &'static [Format] = &[
        Format::Table,
        Format::Markdown,
        Format::Html,
        Format::Json,
        Format::Csv,
    ];

    /// Its definition: the one registration of a format.
    pub fn def(self) -> &'static FormatDef {
        match self {
            Format::Table => &FormatDef {
                name: "table",
                aliases: &["text"],
                charts: false,
            },
            Format::Markdown => &FormatDef {
                name: "md",
                aliases: &["markdown"],
                charts: false,
            },
            Format::Html => &FormatDef {
                name: "html",
                aliases: &[],
                charts: true,
            },
            Format::Json => &FormatDef {
                name: "json",
                aliases: &[],
                charts: false,
            },
            Format::Csv => &FormatDef {
                name: "csv",
                aliases: &[],
                charts: false,
            },
        }
    }

    /// The formats of a document without charts, in help order.
    pub fn plain() -> Vec<Format> {
        Self::ALL
            .iter()
            .copied()
            .filter(|f| !f.def().charts)
            .collect()
    }

    /// What a command prints: the document as JSON with `--json`, else text.
    pub fn json_or_text(json: bool) -> Format {
        if json {
            Format::Json
        } else {
            Format::Table
        }
    }

    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        self.def().name
    }

    /// Every name, for messages: `table, md, html, json, csv`.
    pub fn names() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|f| f.as_str()).collect();
        names.join(", ")
    }

    /// `--format`'s help: every format, its aliases, and which documents
    /// offer the ones that draw charts (from the document table).
    pub fn help() -> String {
        let charted: Vec<&str> = DOCUMENTS
            .iter()
            .filter(|d| d.charts)
            .map(|d| d.about)
            .collect();
        let each: Vec<String> = Self::ALL
            .iter()
            .map(|f| {
                let d = f.def();
                let mut s = d.name.to_string();
                if !d.aliases.is_empty() {
                    s += &format!(" (or {})", d.aliases.join(", "));
                }
                if d.charts {
                    s += &format!(" ({} only)", charted.join(", "));
                }
                s
            })
            .collect();
        let each: Vec<&str> = each.iter().map(String::as_str).collect();
        format!("Output format: {}.", iolab_model::steps::listed(&each))
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A format name that is not one of [`Format::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format '{0}' (expected one of: {names})", names = Format::names())]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .iter()
            .copied()
            .find(|f| f.as_str() == s || f.def().aliases.contains(&s))
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_parses_by_its_names_and_the_messages_list_them_all() {
        for &f in Format::ALL {
            assert_eq!(f.as_str().parse::<Format>().unwrap(), f);
            for alias in f.def().aliases {
                assert_eq!(alias.parse::<Format>().unwrap(), f);
            }
            assert!(Format::help().contains(f.as_str()), "{f}");
            assert!(UnknownFormat("x".into()).to_string().contains(f.as_str()));
        }
        for d in DOCUMENTS.iter().filter(|d| d.charts) {
            assert!(Format::help().contains(d.about), "{}", d.schema);
        }
        assert_eq!(
            Format::help(),
            "Output format: table (or text), md (or markdown), html (results folders, capacity searches only), json or csv."
        );
    }
}
