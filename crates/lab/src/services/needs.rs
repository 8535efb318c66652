//! Which real backends an experiment needs: the backends of the io calls in
//! the parsed steps of every HTTP run, and the backend of batch runs whose IO
//! tasks make real calls (`[batch] backend`), with the keys the steps read
//! (`mc:KEY`: so they can be filled).

use std::collections::{BTreeMap, BTreeSet};

use iolab_model::experiment::{ExperimentPlan, Work};
use iolab_model::steps::{BackendKind, Step};

/// The real backends a plan (or one run) calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Needs {
    kinds: BTreeSet<BackendKind>,
    /// The keys keyed steps read (`mc:KEY`), by kind.
    keys: BTreeMap<BackendKind, BTreeSet<String>>,
}

impl Needs {
    /// What every run of the plan calls.
    pub fn of_plan(plan: &ExperimentPlan) -> Needs {
        let mut n = Needs::default();
        for spec in &plan.runs {
            match &spec.work {
                Work::Http(w) => n.add(&w.steps),
                Work::Batch(b) => n.insert(b.io_backend),
            }
        }
        n
    }

    /// What one workload calls.
    pub fn of_steps(steps: &Step) -> Needs {
        let mut n = Needs::default();
        n.add(steps);
        n
    }

    fn add(&mut self, steps: &Step) {
        for call in steps.io_calls() {
            self.insert(call.kind());
            if let Some(key) = call.key() {
                let keys = self.keys.entry(call.kind()).or_default();
                keys.insert(key.to_string());
            }
        }
    }

    fn insert(&mut self, kind: BackendKind) {
        if !kind.is_sleep() {
            self.kinds.insert(kind);
        }
    }

    /// The real backends needed, in label order.
    pub fn kinds(&self) -> impl Iterator<Item = BackendKind> + '_ {
        self.kinds.iter().copied()
    }

    /// Is `kind` needed?
    pub fn has(&self, kind: BackendKind) -> bool {
        self.kinds.contains(&kind)
    }

    /// The keys the steps read from `kind`, in order.
    pub fn keys(&self, kind: BackendKind) -> Vec<String> {
        self.keys
            .get(&kind)
            .map_or_else(Vec::new, |k| k.iter().cloned().collect())
    }

    /// Nothing but the embedded timer.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_every_leaf_of_seq_and_par() {
        let s =
            iolab_model::steps::parse("seq(pg:200,par(http:500,mc:test,mc:b),sleep:1)").unwrap();
        let n = Needs::of_steps(&s);
        let kinds: Vec<BackendKind> = n.kinds().collect();
        assert_eq!(kinds, [BackendKind::Http, BackendKind::Pg, BackendKind::Mc]);
        assert_eq!(n.keys(BackendKind::Mc), ["b", "test"]);
        let s = iolab_model::steps::parse("par(sleep:100,cpu:1000)").unwrap();
        assert!(Needs::of_steps(&s).is_empty());
    }

    #[test]
    fn the_showdown_needs_nothing_and_e5_real_needs_all_three() {
        let p = crate::preset::load_plan("showdown", None).unwrap();
        assert!(Needs::of_plan(&p).is_empty());
        let e5 = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../presets/e5-fanout-real.toml"
        );
        let p = crate::preset::load_plan(e5, None).unwrap();
        let n = Needs::of_plan(&p);
        assert!(
            n.has(BackendKind::Pg)
                && n.has(BackendKind::Http)
                && n.keys(BackendKind::Mc).contains(&"test".to_string())
        );
    }
}
