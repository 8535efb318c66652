//! Preset parsing, sweep expansion and time-scale: no other crate needed.
//! One file a topic; here the helpers and the base preset they vary.

mod batch;
mod embedded;
mod errors;
mod held;
mod load;
mod targets;

use super::*;

fn plan(text: &str) -> ExperimentPlan {
    parse_plan(text, "t.toml", Overrides::default()).unwrap()
}

fn err(text: &str) -> String {
    parse_plan(text, "t.toml", Overrides::default())
        .unwrap_err()
        .0
}

const BASE: &str = r#"
name = "x"
description = "d"

[load]
steps = "sleep:100"
rate = 200
duration = "5s"
timeout = "2s"

[[targets]]
model = "pool"
threads = 20
"#;
