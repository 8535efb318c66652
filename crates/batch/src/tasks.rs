//! The tasks of a batch: drawn once from the [`TaskMix`] with a seeded RNG,
//! so the same seed always gives the same order, terms and sleeps.

use std::time::Duration;

use iolab_model::batch::TaskMix;
use iolab_model::cpu::leibniz;

use crate::io::{CallFailed, Io};

/// One task: a whole Leibniz series, or one call of a service that sleeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Task {
    /// Compute `terms` terms of the Leibniz series.
    Cpu {
        /// Terms of the series.
        terms: u64,
    },
    /// Wait `dur` (a blocking sleep or a timer, depending on the executor).
    Io {
        /// How long the call takes.
        dur: Duration,
    },
}

/// The task types a result reports, in table order.
pub const TYPES: [&str; 2] = ["cpu", "io"];

impl Task {
    /// Index into [`TYPES`].
    pub fn type_index(self) -> usize {
        match self {
            Task::Cpu { .. } => 0,
            Task::Io { .. } => 1,
        }
    }

    /// Do the task on this thread, blocking it for the whole IO wait (a
    /// sleep, or one call through `io`'s blocking client).
    pub fn run_blocking(self, io: &Io) -> Result<(), CallFailed> {
        match self {
            Task::Cpu { terms } => {
                leibniz(terms);
                Ok(())
            }
            Task::Io { dur } => io.block(dur),
        }
    }
}

/// The tasks of one batch. A batch of identical calls is not materialised,
/// so a million-call batch costs no memory for its task list.
#[derive(Debug, Clone)]
pub enum TaskList {
    /// `n` copies of one task.
    Uniform {
        /// How many.
        n: usize,
        /// The task.
        task: Task,
    },
    /// Tasks drawn one by one.
    Drawn(Vec<Task>),
}

impl TaskList {
    /// Draw the tasks of `mix` with `seed`: types shuffled, terms and sleeps
    /// drawn uniformly from their lists.
    pub fn draw(mix: &TaskMix, seed: u64) -> Self {
        match mix {
            TaskMix::Calls { n, ms } => TaskList::Uniform {
                n: *n as usize,
                task: Task::Io {
                    dur: Duration::from_secs_f64(ms.max(0.0) / 1e3),
                },
            },
            TaskMix::Mixed {
                cpu,
                io,
                cpu_terms,
                io_ms,
            } => {
                let mut rng = SplitMix64(seed);
                let mut is_cpu: Vec<bool> = std::iter::repeat_n(true, *cpu as usize)
                    .chain(std::iter::repeat_n(false, *io as usize))
                    .collect();
                // Fisher-Yates.
                for i in (1..is_cpu.len()).rev() {
                    let j = rng.below(i as u64 + 1) as usize;
                    is_cpu.swap(i, j);
                }
                let tasks = is_cpu
                    .into_iter()
                    .map(|c| {
                        if c {
                            Task::Cpu {
                                terms: pick(&mut rng, cpu_terms).copied().unwrap_or(0),
                            }
                        } else {
                            let ms = pick(&mut rng, io_ms).copied().unwrap_or(0.0);
                            Task::Io {
                                dur: Duration::from_secs_f64(ms.max(0.0) / 1e3),
                            }
                        }
                    })
                    .collect();
                TaskList::Drawn(tasks)
            }
        }
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        match self {
            TaskList::Uniform { n, .. } => *n,
            TaskList::Drawn(v) => v.len(),
        }
    }

    /// True when there are no tasks.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Task `i` (`i < len`).
    pub fn get(&self, i: usize) -> Task {
        match self {
            TaskList::Uniform { task, .. } => *task,
            TaskList::Drawn(v) => v[i],
        }
    }

    /// Which task types occur, as indexes into [`TYPES`].
    pub fn types_present(&self) -> [bool; 2] {
        let mut seen = [false; 2];
        match self {
            TaskList::Uniform { n, task } => seen[task.type_index()] = *n > 0,
            TaskList::Drawn(v) => v.iter().for_each(|t| seen[t.type_index()] = true),
        }
        seen
    }
}

fn pick<'a, T>(rng: &mut SplitMix64, items: &'a [T]) -> Option<&'a T> {
    if items.is_empty() {
        None
    } else {
        Some(&items[rng.below(items.len() as u64) as usize])
    }
}

/// SplitMix64: tiny, seedable and stable across crate versions, so a
/// recorded seed reproduces the same batch forever.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by rejection so there is no modulo bias.
    fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next();
            if x < zone {
                return x % n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e1_draw_is_seeded_and_exact() {
        let a = TaskList::draw(&TaskMix::e1(), 7);
        let b = TaskList::draw(&TaskMix::e1(), 7);
        let c = TaskList::draw(&TaskMix::e1(), 8);
        let (TaskList::Drawn(a), TaskList::Drawn(b), TaskList::Drawn(c)) = (a, b, c) else {
            panic!("mixed draws are materialised");
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 200);
        assert_eq!(
            a.iter().filter(|t| matches!(t, Task::Cpu { .. })).count(),
            100
        );
        for t in &a {
            match t {
                Task::Cpu { terms } => assert!(iolab_model::batch::E1_CPU_TERMS.contains(terms)),
                Task::Io { dur } => {
                    let ms = dur.as_millis();
                    assert!((5000..=7000).contains(&ms) && ms % 500 == 0, "{ms}");
                }
            }
        }
    }

    #[test]
    fn calls_are_uniform() {
        let l = TaskList::draw(
            &TaskMix::Calls {
                n: 1_000_000,
                ms: 1000.0,
            },
            1,
        );
        assert_eq!(l.len(), 1_000_000);
        assert_eq!(
            l.get(999_999),
            Task::Io {
                dur: Duration::from_secs(1)
            }
        );
        assert_eq!(l.types_present(), [false, true]);
    }
}
