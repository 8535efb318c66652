//! Batch presets: task mixes, masters and workers, published numbers.

use iolab_model::batch::{TaskMix, WorkerKind};
use iolab_model::experiment::Work;

use super::*;

#[test]
fn batch_presets_and_published_numbers() {
    let text = r#"
name = "e3"
description = "futures"
kind = "batch"
[batch]
tasks = "calls"
n = [10, 100]
ms = 1000
[[targets]]
model = "pool"
threads = 8
[[targets]]
model = "sequential"
[published]
sequential_ms = 100122
pool8_ms = 13057
"#;
    let p = parse_plan(
        text,
        "t",
        Overrides {
            scale: Some(0.01),
            reps: None,
        },
    )
    .unwrap();
    assert_eq!(p.runs.len(), 4);
    assert_eq!(p.runs[0].name, "pool-n=10");
    let Work::Batch(b) = &p.runs[1].work else {
        panic!()
    };
    assert_eq!(b.tasks, TaskMix::Calls { n: 100, ms: 10.0 });
    assert!(b.master.is_none());
    assert_eq!(p.published.as_ref().unwrap()["pool8_ms"], 13057);

    let text = r#"
name = "e1"
description = "master/worker"
kind = "batch"
[batch]
tasks = "mixed"
cpu = 2
io = 2
cpu_terms = [1000, 2000]
io_ms = [50.0]
workers = [4, 8]
worker = ["blocking", "shared-pool"]
shared_pool = 3
seed = 7
[[targets]]
model = "pool"
"#;
    let p = plan(text);
    assert_eq!(p.runs.len(), 4);
    assert_eq!(p.runs[3].name, "pool-workers=8-worker=shared-pool");
    let Work::Batch(b) = &p.runs[3].work else {
        panic!()
    };
    let m = b.master.as_ref().unwrap();
    assert_eq!(
        (m.workers, m.worker, m.shared_pool),
        (8, WorkerKind::SharedPool, Some(3))
    );
    assert_eq!(b.seed, 7);
}

#[test]
fn a_batch_targets_workers_knob_is_not_a_master() {
    let p = load_plan("e3-futures", None).unwrap();
    let run = p
        .runs
        .iter()
        .find(|r| r.name == "scheduled-n=100")
        .expect("scheduled-n=100");
    let Work::Batch(b) = &run.work else {
        panic!("batch run")
    };
    assert!(b.master.is_none(), "{b:?}");
    assert_eq!(run.params.workers, Some(8));
    let e1 = load_plan("e1-actors", None).unwrap();
    let Work::Batch(b) = &e1.runs[0].work else {
        panic!("batch run")
    };
    assert_eq!(b.master.as_ref().map(|m| m.workers), Some(4));
}
