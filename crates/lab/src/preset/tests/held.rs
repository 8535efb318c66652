//! `driver = "held"` and `[held]`: WebSockets held instead of requests,
//! swept by `connections`, scaled like the rest; and what is refused.

use std::time::Duration;

use iolab_model::experiment::Work;

use super::*;

const HELD: &str = r#"
name = "h"
description = "d"

[load]
steps = "cpu:100"
driver = "held"
timeout = "2s"

[held]
connections = [100, 400]
open_rate = 200
hold = "10s"
message_rate = 2
source_addrs = ["127.0.0.1", "127.0.0.2"]

[[targets]]
model = "loop-async"
"#;

#[test]
fn held_connections_sweep_and_scale() {
    let p = parse_plan(
        HELD,
        "t.toml",
        Overrides {
            scale: Some(0.5),
            reps: None,
        },
    )
    .unwrap();
    let names: Vec<&str> = p.runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["loop-async-held=100", "loop-async-held=400"]);
    let Work::Http(w) = &p.runs[1].work else {
        panic!()
    };
    let h = w.held.as_ref().expect("a held load");
    // Connections stay; durations halve and rates double.
    assert_eq!(h.connections, 400);
    assert_eq!((h.open_rate, h.message_rate), (400.0, 4.0));
    assert_eq!(h.hold, Duration::from_secs(5));
    assert_eq!(h.source_addrs.len(), 2);
    // The driver is the open loop of connection opens: 400 at 400/s.
    assert_eq!(w.driver.peak_rate(), Some(400.0));
    assert_eq!(w.driver.duration(), Some(Duration::from_secs(1)));
    let plan = h.plan("http://127.0.0.1:9", &w.steps, w.timeout);
    assert_eq!(plan.target, "ws://127.0.0.1:9/ws?steps=cpu:50");
}

#[test]
fn a_held_load_refuses_what_does_not_apply() {
    let e = err(&HELD.replace("driver = \"held\"\n", ""));
    assert!(
        e.contains("field 'held'") && e.contains("driver = \"held\""),
        "{e}"
    );
    let e = err(&HELD.replace("timeout = \"2s\"", "timeout = \"2s\"\nrate = 5"));
    assert!(e.contains("field 'load.rate'"), "{e}");
    let e = err(&HELD.replace("\"127.0.0.2\"", "\"10.0.0.2\""));
    assert!(e.contains("--source-addrs 10.0.0.2 cannot reach"), "{e}");
    let e = err(&HELD.replace("message_rate = 2", "message_rate = -1"));
    assert!(e.contains("field 'held.message_rate'"), "{e}");
}
