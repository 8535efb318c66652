//! A type's JSON schema as schemars derives it, and a document's with its
//! `schema` tag pinned: what each entry of the documents' table
//! (`crate::document::DOCUMENTS`) points at, and what [`super`] writes.

use schemars::JsonSchema;
use serde_json::{json, Value};

/// `T`'s schema with its `schema` field pinned to `tag`, so a document of
/// another kind (or version) does not pass.
pub fn tagged<T: JsonSchema>(tag: &'static str) -> Value {
    let mut schema = untagged::<T>();
    schema["properties"]["schema"] = json!({
        "const": tag,
        "description": "The document's kind and version.",
    });
    schema
}

/// `T`'s schema as schemars derives it from the type and its serde attributes.
pub fn untagged<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).expect("a schema is JSON")
}
