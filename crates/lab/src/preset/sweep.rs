//! Sweep axes and their cartesian product: each combination is one run,
//! named by the coordinates that vary.

use serde_json::Value;

/// One value of an axis: what goes into `coordinates` and into the run name.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// As stored in `coordinates`.
    pub value: Value,
    /// As written in the run name, e.g. `200` or `sleep:100`.
    pub label: String,
}

impl Point {
    /// A numeric point, labelled without a needless `.0`.
    pub fn number(v: f64) -> Point {
        Point {
            value: if v.fract() == 0.0 && v.abs() < 1e15 {
                Value::from(v as i64)
            } else {
                serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
            },
            label: number_label(v),
        }
    }

    /// A whole-number point.
    pub fn count(v: u64) -> Point {
        Point {
            value: Value::from(v),
            label: v.to_string(),
        }
    }

    /// A text point.
    pub fn text(s: impl Into<String>) -> Point {
        let s = s.into();
        Point {
            value: Value::String(s.clone()),
            label: s,
        }
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
            Axis::new("model", vec![Point::text("a"), Point::text("b")]),
            Axis::new(
                "rate",
                vec![Point::number(1.0), Point::number(2.5), Point::number(4.0)],
            ),
        ];
        let p = product(&axes);
        assert_eq!(p.len(), 6);
        assert_eq!(count(&axes), 6);
        assert_eq!(p[0], vec![0, 0]);
        assert_eq!(p[1], vec![0, 1]);
        assert_eq!(p[3], vec![1, 0]);
        assert_eq!(axes[1].points[1].label, "2.5");
        assert_eq!(axes[1].points[0].label, "1");
        assert!(product(&[]).len() == 1);
    }
}
