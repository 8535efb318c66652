//! Sweep axes and their cartesian product: each combination is one run,
//! named by the coordinates that vary. Points stay typed (a model, a
//! workload, a duration) from the preset file to the run: only
//! `coordinates` and run names write them out, and nothing parses them back.

use std::time::Duration;

use iolab_model::batch::WorkerKind;
use iolab_model::{ModelKind, Step};
use serde_json::Value;

use super::file::ConnectionKind;

/// One value of an axis, as the run uses it.
#[derive(Debug, Clone, PartialEq)]
pub enum Point {
    /// A concurrency model.
    Model(ModelKind),
    /// A workload (unscaled).
    Steps(Step),
    /// A number: a rate, a service time (ms).
    Number(f64),
    /// A whole number: clients, requests, calls, workers, a knob's value.
    Count(u64),
    /// A duration (unscaled), written as text: `5s`.
    Duration(Duration),
    /// How requests use connections.
    Connections(ConnectionKind),
    /// A master/worker run's worker.
    Worker(WorkerKind),
    /// A runtime option, on or off.
    Flag(bool),
}

impl Point {
    /// As stored in `coordinates`.
    pub fn value(&self) -> Value {
        match self {
            Point::Number(v) if v.fract() == 0.0 && v.abs() < 1e15 => Value::from(*v as i64),
            Point::Number(v) => serde_json::Number::from_f64(*v).map_or(Value::Null, Value::Number),
            Point::Count(n) => Value::from(*n),
            Point::Flag(b) => Value::Bool(*b),
            other => Value::String(other.label()),
        }
    }

    /// As written in the run name, e.g. `200` or `sleep:100`.
    pub fn label(&self) -> String {
        match self {
            Point::Model(m) => m.as_str().to_string(),
            Point::Steps(s) => s.to_string(),
            Point::Number(v) => number_label(*v),
            Point::Count(n) => n.to_string(),
            Point::Duration(d) => iolab_model::format_duration(*d),
            Point::Connections(ConnectionKind::KeepAlive) => "keep-alive".into(),
            Point::Connections(ConnectionKind::NewPerRequest) => "new-per-request".into(),
            Point::Worker(w) => worker_name(*w).into(),
            Point::Flag(b) => b.to_string(),
        }
    }
}

/// A worker's name in presets and run names.
fn worker_name(k: WorkerKind) -> &'static str {
    match k {
        WorkerKind::Blocking => "blocking",
        WorkerKind::SharedPool => "shared-pool",
        WorkerKind::Timer => "timer",
    }
}

/// `200` for 200.0, `12.5` for 12.5.
pub fn number_label(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A named list of values; one value is a fixed setting, more are a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Field name, e.g. `rate`.
    pub name: String,
    /// Values in the order written.
    pub points: Vec<Point>,
}

impl Axis {
    /// Build an axis.
    pub fn new(name: impl Into<String>, points: Vec<Point>) -> Axis {
        Axis {
            name: name.into(),
            points,
        }
    }

    /// More than one value?
    pub fn sweeps(&self) -> bool {
        self.points.len() > 1
    }
}

/// Every combination of the axes' value indices, the last axis varying
/// fastest (so `model` first and `rate` last gives model-major order).
pub fn product(axes: &[Axis]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for axis in axes {
        let mut next = Vec::with_capacity(out.len() * axis.points.len());
        for prefix in &out {
            for i in 0..axis.points.len() {
                let mut c = prefix.clone();
                c.push(i);
                next.push(c);
            }
        }
        out = next;
    }
    out
}

/// Number of combinations, saturating (checked before expanding).
pub fn count(axes: &[Axis]) -> usize {
    axes.iter()
        .fold(1usize, |n, a| n.saturating_mul(a.points.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_is_cartesian_last_fastest() {
        let axes = vec![
            Axis::new(
                "model",
                vec![
                    Point::Model(ModelKind::Pool),
                    Point::Model(ModelKind::Sequential),
                ],
            ),
            Axis::new(
                "rate",
                vec![Point::Number(1.0), Point::Number(2.5), Point::Number(4.0)],
            ),
        ];
        let p = product(&axes);
        assert_eq!(p.len(), 6);
        assert_eq!(count(&axes), 6);
        assert_eq!(p[0], vec![0, 0]);
        assert_eq!(p[1], vec![0, 1]);
        assert_eq!(p[3], vec![1, 0]);
        assert_eq!(axes[1].points[1].label(), "2.5");
        assert_eq!(axes[1].points[0].label(), "1");
        assert_eq!(axes[1].points[0].value(), serde_json::json!(1));
        assert_eq!(axes[1].points[1].value(), serde_json::json!(2.5));
        assert_eq!(axes[0].points[0].value(), serde_json::json!("pool"));
        assert!(product(&[]).len() == 1);
    }
}
