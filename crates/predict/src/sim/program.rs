//! A workload compiled for the simulation: a flat tree of nodes whose leaves
//! carry their durations, so the event loop never touches the step AST.

use iolab_model::steps::{BackendKind, Step};

use crate::calibration::{cpu_ns, MC_NS};

/// Marks the root's parent.
pub const NO_PARENT: u32 = u32::MAX;

/// What a node does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// CPU work on one core for `ns`.
    Cpu { ns: u64 },
    /// A backend call lasting `ns`; `pg` calls first need a pooled connection.
    Io { ns: u64, pg: bool },
    /// Children `children[first..first+len]` one after another.
    Seq { first: u32, len: u32 },
    /// The same children all at once.
    Par { first: u32, len: u32 },
}

/// One node of the compiled tree.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    /// What it does.
    pub op: Op,
    /// Its parent's index, or [`NO_PARENT`].
    pub parent: u32,
}

/// A compiled workload; node 0 is the root.
#[derive(Debug, Clone)]
pub struct Program {
    /// Nodes, root first.
    pub nodes: Vec<Node>,
    /// Child lists referenced by `Seq`/`Par`.
    pub children: Vec<u32>,
}

impl Program {
    /// Compile `step`. When `par_concurrent` is false (models whose request
    /// runs on one blocking thread) `par` runs its children in sequence, as a
    /// thread that makes blocking calls must.
    pub fn compile(step: &Step, par_concurrent: bool) -> Program {
        let mut p = Program {
            nodes: Vec::new(),
            children: Vec::new(),
        };
        p.add(step, NO_PARENT, par_concurrent);
        p
    }

    fn add(&mut self, step: &Step, parent: u32, par_concurrent: bool) -> u32 {
        let id = self.nodes.len() as u32;
        let leaf = |op| Node { op, parent };
        match step {
            Step::Cpu { terms } => self.nodes.push(leaf(Op::Cpu { ns: cpu_ns(*terms) })),
            Step::Io(call) => {
                // A keyed call (`mc:KEY`) takes what its transfer takes.
                let ns = call.micros().map_or(MC_NS, |micros| micros * 1_000);
                let pg = call.kind() == BackendKind::Pg;
                self.nodes.push(leaf(Op::Io { ns, pg }));
            }
            Step::Seq(kids) | Step::Par(kids) => {
                self.nodes.push(leaf(Op::Seq { first: 0, len: 0 }));
                let ids: Vec<u32> = kids
                    .iter()
                    .map(|k| self.add(k, id, par_concurrent))
                    .collect();
                let first = self.children.len() as u32;
                let len = ids.len() as u32;
                self.children.extend(ids);
                let concurrent = matches!(step, Step::Par(_)) && par_concurrent;
                self.nodes[id as usize].op = if concurrent {
                    Op::Par { first, len }
                } else {
                    Op::Seq { first, len }
                };
            }
        }
        id
    }

    /// The `i`-th child of a `Seq`/`Par` node starting at `first`.
    pub fn child(&self, first: u32, i: u32) -> u32 {
        self.children[(first + i) as usize]
    }

    /// Time one request takes with no waiting at all, ns.
    pub fn unloaded_ns(&self) -> u64 {
        self.span(0)
    }

    fn span(&self, id: u32) -> u64 {
        match self.nodes[id as usize].op {
            Op::Cpu { ns } | Op::Io { ns, .. } => ns,
            Op::Seq { first, len } => (0..len).map(|i| self.span(self.child(first, i))).sum(),
            Op::Par { first, len } => (0..len)
                .map(|i| self.span(self.child(first, i)))
                .max()
                .unwrap_or(0),
        }
    }

    /// Sum over leaves of (CPU ns, IO ns, pg ns): the work one request puts on
    /// each kind of resource, whatever the overlap.
    pub fn work_ns(&self) -> (u64, u64, u64) {
        let mut w = (0, 0, 0);
        for n in &self.nodes {
            match n.op {
                Op::Cpu { ns } => w.0 += ns,
                Op::Io { ns, pg } => {
                    w.1 += ns;
                    if pg {
                        w.2 += ns;
                    }
                }
                _ => {}
            }
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_is_concurrent_only_where_the_model_allows() {
        let s = iolab_model::steps::parse("par(sleep:200,sleep:500,sleep:300)").unwrap();
        assert_eq!(Program::compile(&s, true).unloaded_ns(), 500_000_000);
        assert_eq!(Program::compile(&s, false).unloaded_ns(), 1_000_000_000);
        let (cpu, io, pg) = Program::compile(&s, true).work_ns();
        assert_eq!((cpu, io, pg), (0, 1_000_000_000, 0));
    }
}
