//! Which real backends an experiment needs: the `pg`, `mc` and `http` calls
//! in the parsed steps of every HTTP run, and the backend of batch runs whose
//! IO tasks make real calls (`[batch] backend`).

use std::collections::BTreeSet;

use iolab_model::experiment::{ExperimentPlan, Work};
use iolab_model::steps::{BackendKind, IoCall, Step};

/// The backends a plan (or one run) calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Needs {
    /// `pg:MS` steps.
    pub pg: bool,
    /// `http:MS` steps.
    pub http: bool,
    /// Keys of `mc:KEY` steps (empty = no memcached needed).
    pub mc_keys: BTreeSet<String>,
}

impl Needs {
    /// What every HTTP run of the plan calls.
    pub fn of_plan(plan: &ExperimentPlan) -> Needs {
        let mut n = Needs::default();
        for spec in &plan.runs {
            match &spec.work {
                Work::Http(w) => n.add(&w.steps),
                Work::Batch(b) => match b.io_backend {
                    BackendKind::Pg => n.pg = true,
                    BackendKind::Http => n.http = true,
                    BackendKind::Sleep | BackendKind::Mc => {}
                },
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
            match call {
                IoCall::Pg { .. } => self.pg = true,
                IoCall::Http { .. } => self.http = true,
                IoCall::Mc { key } => {
                    self.mc_keys.insert(key.clone());
                }
                IoCall::Sleep { .. } => {}
            }
        }
    }

    /// memcached is needed.
    pub fn mc(&self) -> bool {
        !self.mc_keys.is_empty()
    }

    /// Nothing but the embedded timer.
    pub fn is_empty(&self) -> bool {
        !self.pg && !self.http && !self.mc()
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
        assert!(n.pg && n.http && n.mc());
        assert_eq!(n.mc_keys.iter().collect::<Vec<_>>(), ["b", "test"]);
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
        assert!(n.pg && n.http && n.mc_keys.contains("test"));
    }
}
