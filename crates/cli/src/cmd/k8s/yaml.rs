//! YAML for the manifests [`super`] writes: block style, every string in
//! double quotes (JSON's escaping is valid YAML), so no scalar can be read
//! back as another type. Hand-written because it is 50 lines for the subset
//! we emit, and serde_yaml is no longer maintained.

use serde_json::Value;

/// `docs` as one multi-document YAML stream.
pub fn documents(docs: &[Value]) -> String {
    let mut out = String::new();
    for (i, d) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        block(d, 0, &mut out);
    }
    out
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Object(o) if o.is_empty() => "{}".into(),
        other => other.to_string(),
    }
}

fn nested(v: &Value) -> bool {
    matches!(v, Value::Array(a) if !a.is_empty()) || matches!(v, Value::Object(o) if !o.is_empty())
}

/// The entries of a mapping or sequence at `indent`, one per line.
fn block(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                if nested(v) {
                    out.push_str(&format!("{pad}{k}:\n"));
                    block(v, indent + 2, out);
                } else {
                    out.push_str(&format!("{pad}{k}: {}\n", scalar(v)));
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                if nested(item) {
                    // The first line of the item follows the dash.
                    let mut inner = String::new();
                    block(item, indent + 2, &mut inner);
                    out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
                } else {
                    out.push_str(&format!("{pad}- {}\n", scalar(item)));
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn block_style_with_quoted_strings() {
        let y = documents(&[
            json!({"a": 1, "b": {"c": "yes", "d": []}, "e": [{"f": "x", "g": [1, 2]}, "h"]}),
            json!({"k": "a \"q\"\nb"}),
        ]);
        assert_eq!(
            y,
            "a: 1\nb:\n  c: \"yes\"\n  d: []\ne:\n  - f: \"x\"\n    g:\n      - 1\n      - 2\n  - \"h\"\n---\nk: \"a \\\"q\\\"\\nb\"\n"
        );
    }
}
