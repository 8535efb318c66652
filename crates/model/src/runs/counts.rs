//! [`BackendCounts`]: what the real backends counted while a run was
//! measured, keyed by backend kind, and the check that they did the work the
//! target's answers claim ([`RunRecord::backend_shortfall`]).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::runs::RunRecord;
use crate::steps::BackendKind;

/// What the real backends counted while a run was measured (each counter
/// read just before and just after the measured load; the difference).
///
/// Counters are the backends' own (PostgreSQL `pg_stat_statements`,
/// memcached `get_hits`, the delay service's hits: each kind's
/// [`CounterDef`](crate::steps::CounterDef)), so traffic from anything else
/// using the same backend at the same time counts too: the numbers can only
/// be *more* than the target's work, never less. Missing where the run's
/// steps do not use that backend or the counter could not be read.
///
/// In JSON each kind's count is the field its counter names
/// (`"pg_sleep_calls": 12`, `null` when missing), as results have always
/// been written, so saved results keep reading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackendCounts {
    counts: BTreeMap<BackendKind, u64>,
    /// Why a counter is missing, when one could not be read.
    pub error: Option<String>,
}

impl BackendCounts {
    /// No counter read, for `why`.
    pub fn unread(why: String) -> BackendCounts {
        BackendCounts {
            counts: BTreeMap::new(),
            error: Some(why),
        }
    }

    /// What `kind` counted, if it was read.
    pub fn get(&self, kind: BackendKind) -> Option<u64> {
        self.counts.get(&kind).copied()
    }

    /// Record what `kind` counted (`None`: not read).
    pub fn set(&mut self, kind: BackendKind, count: Option<u64>) {
        match count {
            Some(n) => self.counts.insert(kind, n),
            None => self.counts.remove(&kind),
        };
    }

    /// These counts with `kind` at `count`.
    pub fn with(mut self, kind: BackendKind, count: u64) -> BackendCounts {
        self.set(kind, Some(count));
        self
    }

    /// Every kind that keeps a counter, with what it counted.
    pub fn iter(&self) -> impl Iterator<Item = (BackendKind, Option<u64>)> + '_ {
        counted_kinds().map(|k| (k, self.get(k)))
    }

    /// What moved between `before` and `self` (counters only grow; a restart
    /// of a backend in between shows as zero, not as a wrap-around).
    pub fn since(&self, before: &BackendCounts) -> BackendCounts {
        let counts = self
            .counts
            .iter()
            .map(|(k, a)| (*k, before.get(*k).map_or(*a, |b| a.saturating_sub(b))))
            .collect();
        BackendCounts {
            counts,
            error: self.error.clone().or_else(|| before.error.clone()),
        }
    }
}

/// The kinds that keep a counter, in label order.
fn counted_kinds() -> impl Iterator<Item = BackendKind> {
    BackendKind::ALL
        .into_iter()
        .filter(|k| k.def().counter.is_some())
}

fn field(kind: BackendKind) -> &'static str {
    kind.def().counter.map_or("", |c| c.field)
}

impl Serialize for BackendCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (kind, count) in self.iter() {
            map.serialize_entry(field(kind), &count)?;
        }
        if let Some(e) = &self.error {
            map.serialize_entry("error", e)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for BackendCounts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(CountsVisitor)
    }
}

/// The schema says what [`Serialize`] writes: one field per counted kind
/// (from the backend table), a count or `null`, and `error`.
impl schemars::JsonSchema for BackendCounts {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BackendCounts".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut fields = serde_json::Map::new();
        for kind in counted_kinds() {
            let about = kind.def().counter.map_or("", |c| c.source);
            let count = serde_json::json!({
                "type": ["integer", "null"],
                "minimum": 0,
                "description": about,
            });
            fields.insert(field(kind).to_string(), count);
        }
        fields.insert(
            "error".into(),
            serde_json::json!({"type": ["string", "null"]}),
        );
        schemars::json_schema!({"type": "object", "properties": fields})
    }
}

struct CountsVisitor;

impl<'de> Visitor<'de> for CountsVisitor {
    type Value = BackendCounts;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let fields: Vec<&str> = counted_kinds().map(field).collect();
        write!(f, "backend counts ({}, error)", fields.join(", "))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BackendCounts, A::Error> {
        let mut out = BackendCounts::default();
        while let Some(key) = map.next_key::<String>()? {
            if key == "error" {
                out.error = map.next_value()?;
            } else if let Some(kind) = BackendKind::counted_as(&key) {
                out.set(kind, map.next_value()?);
            } else {
                // Unknown fields were always skipped here: keep doing so.
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(out)
    }
}

impl RunRecord {
    /// Where a backend did less work than the target's answers claim: each
    /// 2xx answer of a workload with K `pg` (or `mc`, `http`) leaves means K
    /// finished calls, so `ok x K > counted` is a target that answered
    /// without doing the work. One message per backend short; empty when
    /// nothing is short or nothing was counted.
    pub fn backend_shortfall(&self) -> Vec<String> {
        let (Some(counts), Some(attack), crate::experiment::Work::Http(w)) =
            (&self.backend_counts, &self.attack, &self.spec.work)
        else {
            return Vec::new();
        };
        let calls = w.steps.io_calls();
        let ok = attack.requests.ok;
        let mut out = Vec::new();
        for (kind, counted) in counts.iter() {
            let k = calls.iter().filter(|c| c.kind() == kind).count() as u64;
            let what = kind.def().counter.map_or("", |c| c.counted_by);
            if let (true, Some(c)) = (k > 0, counted) {
                if ok * k > c {
                    out.push(format!(
                        "{kind}: {ok} answers ok x {k} call{} each = {}, but {what} {c}",
                        if k == 1 { "" } else { "s" },
                        ok * k
                    ));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_and_write_the_fields_results_always_had() {
        let old = r#"{"pg_sleep_calls": null, "mc_get_hits": 1000, "http_hits": 3, "later": 1}"#;
        let c: BackendCounts = serde_json::from_str(old).unwrap();
        assert_eq!(
            c,
            BackendCounts::default()
                .with(BackendKind::Mc, 1000)
                .with(BackendKind::Http, 3)
        );
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"http_hits": 3, "pg_sleep_calls": null, "mc_get_hits": 1000})
        );
    }

    #[test]
    fn since_subtracts_what_both_have() {
        let before = BackendCounts::default()
            .with(BackendKind::Pg, 5)
            .with(BackendKind::Mc, 10);
        let after = BackendCounts::default()
            .with(BackendKind::Pg, 8)
            .with(BackendKind::Mc, 3)
            .with(BackendKind::Http, 4);
        let d = after.since(&before);
        assert_eq!(d.get(BackendKind::Pg), Some(3));
        assert_eq!(d.get(BackendKind::Mc), Some(0));
        assert_eq!(d.get(BackendKind::Http), Some(4));
    }
}
