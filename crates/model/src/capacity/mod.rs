//! Capacity under an objective: the `iolab.capacity/1` document that
//! `iolab capacity` prints with `--json` and saves as `capacity.json`
//! (pinned by `schema/capacity.schema.json`).
//!
//! One [`Search`] per target: every step measured (the attack and the
//! target's telemetry, as a run records them), the answer with its bracket,
//! the noise met on the way, the [`Fit`] of the queueing model to the curve,
//! what each concurrency model would do with the fitted service
//! ([`WhatIf`], simulated by `iolab predict`'s engine), and with `--sweep`
//! the Universal Scalability Law fitted to a closed-loop sweep beside it
//! ([`usl::Sweep`]).

mod binding;
mod budget;
mod endpoint_slo;
mod endpoint_split;
mod gate;
pub mod gauges;
mod machine;
mod mix_cpu;
mod repeat;
mod signals;
pub mod slo;
pub mod usl;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::attack::AttackResult;
use crate::telemetry::Telemetry;

pub use binding::{Binding, Confidence, Evidence, Limit, Resource, Source};
pub use budget::{Budget, BudgetError, Windows, MOST_WINDOWS};
pub use endpoint_slo::{
    EndpointObjective, EndpointObserved, EndpointSlo, EndpointSloError, EndpointVerdict, FirstFail,
    Miss,
};
pub use endpoint_split::{EndpointResource, EndpointSplit, EndpointWait, NamedBy};
pub use gate::{Gate, GateCheck};
pub use machine::{LoopDelay, Machine, Neighbours, Second, TargetPauses};
pub use mix_cpu::{EndpointCpu, MixCpu, MixLimit, MixWhatIf};
pub use repeat::Repeat;
pub use signals::{Downstream, HotThread, Signals, ThreadState, Threads};
pub use slo::{Clause, Observed, Slo, SloError, SloVerdict};

/// The schema tag of [`CapacityFile`].
pub const CAPACITY_SCHEMA: &str = "iolab.capacity/1";

/// Which part of the search a step belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchStage {
    /// Doubling (or halving) until a pass and a fail bracket the answer.
    Ramp,
    /// Halving the bracket.
    Bisect,
    /// The answer measured again, to catch a lucky pass.
    Confirm,
}

/// One step: a constant open-loop rate held for a while, and its verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepRecord {
    /// Offered rate, req/s.
    pub rate_rps: f64,
    /// `ramp`, `bisect` or `confirm` (saved as `phase`, the name documents
    /// of `iolab.capacity/1` carry).
    #[serde(rename = "phase")]
    pub stage: Option<SearchStage>,
    /// How long the rate was held, s.
    pub duration_s: f64,
    /// Every clause of the objective held.
    pub passed: bool,
    /// Why it failed, or what it met.
    pub verdict: String,
    /// 2xx in time / planned.
    pub success_ratio: f64,
    /// 2xx per second.
    pub goodput_rps: f64,
    /// Median latency from the intended send, ms.
    pub p50_ms: f64,
    /// 99th percentile latency from the intended send (answered requests), ms.
    pub p99_ms: f64,
    /// Requests outstanding on average (Little's law on the generator's
    /// side: answers per second x mean latency).
    pub in_flight: f64,
    /// CPU the target used during the step, in cores (its process and
    /// every descendant, from `/proc`); `None` without a PID.
    #[serde(default)]
    pub cpu_cores: Option<f64>,
    /// Of `cpu_cores`, what its JIT's compiler threads used (HotSpot's C1
    /// and C2, by name): compiling is a warm-up's cost, in bursts, not a
    /// request's, and a request's cost leaves it out; `None` without
    /// compiler threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler_cores: Option<f64>,
    /// CPU per answered request, ms; `None` without a PID.
    #[serde(default)]
    pub cpu_per_request_ms: Option<f64>,
    /// Busy time of the cores the target was pinned to (the generator kept
    /// off them) during the step, in cores: everyone's user, system,
    /// interrupt and softirq time from `/proc/stat`, so the kernel's work
    /// for the target's packets that its own CPU leaves out too; `None`
    /// when the target was not pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_busy_cores: Option<f64>,
    /// Of `core_busy_cores`, the interrupt and softirq time, in cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_irq_cores: Option<f64>,
    /// Peaks of the target's own Prometheus series during the step.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
    /// The step failed and the generator was late enough to explain it
    /// (the objective holds with every answer forgiven the generator's
    /// largest lateness): the verdict says nothing about the target. A
    /// late generator's pass stands (it only made the target look worse);
    /// its raw flag is `attack.generator.saturated`.
    #[serde(default)]
    pub generator_saturated: bool,
    /// The rate's decision, on the window (this step) that made it: its
    /// windows passed and failed, and how many the budget allowed to fail
    /// (`budget.rs`); `passed` above is this window's own verdict. `None`
    /// on the windows before the decision, and in documents written before
    /// budgets (one step decided alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows: Option<Windows>,
    /// Answers within each latency bound of the objective: what a rate's
    /// windows are judged on together (their requests pooled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub within: Vec<Within>,
    /// A replayed mix judged per endpoint (`--slo 'GET /a:p99<200ms; ...'`):
    /// each judged endpoint against its clauses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<EndpointVerdict>,
    /// What the step saw inside the target and in the kernel (with its PID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signals: Option<Signals>,
    /// The step's full load result.
    pub attack: AttackResult,
    /// The target's telemetry during the step (empty without a PID).
    #[serde(default)]
    pub telemetry: Telemetry,
}

/// Answers (any status) within a latency bound, from their intended send.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Within {
    /// The bound, ms (a latency clause's).
    pub below_ms: f64,
    /// Answers within it.
    pub answered: u64,
}

/// Whose CPU time the CPU per request was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CpuSource {
    /// The cores the target was pinned to, from `/proc/stat`: its own time
    /// and the kernel's interrupt and softirq work on them (its loopback
    /// packets), which `/proc/PID/stat` does not charge it.
    Cores,
    /// The target's process tree (`/proc/PID/stat`): the target was not
    /// pinned, or its cores were busy with other work.
    Process,
}

/// How the CPU per request was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CpuMethod {
    /// The slope of CPU against the rate answered, over the passing steps.
    Slope,
    /// The median of CPU over requests (fewer than two rates apart, or a
    /// slope that did not rise).
    Median,
}

impl CpuMethod {
    /// How a sentence says it was read.
    pub fn phrase(self) -> &'static str {
        match self {
            CpuMethod::Slope => "the slope of CPU against rate",
            CpuMethod::Median => {
                "the median over the steps: no rising slope of CPU against rate to read"
            }
        }
    }
}

/// The queueing model read from the curve: the service as a network of
/// resources, named by the one that binds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fit {
    /// Service time unloaded: median latency at the lowest passing rate, ms.
    pub service_ms: f64,
    /// Requests held at once at the knee, by Little's law: capacity x S.
    pub concurrency: f64,
    /// CPU per request, ms; `None` without a PID.
    pub cpu_per_request_ms: Option<f64>,
    /// How it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_method: Option<CpuMethod>,
    /// Whose CPU time it was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_source: Option<CpuSource>,
    /// CPU the service burns whatever the rate (the slope's intercept), cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_idle_cores: Option<f64>,
    /// CPU busy at the capacity, in cores (capacity x CPU per request).
    pub cpu_cores_at_capacity: Option<f64>,
    /// The rate the CPU alone would allow on the host's cores, req/s.
    pub cpu_capacity_rps: Option<f64>,
    /// Cores the host offers the target.
    pub cores: u32,
    /// The resource that binds, with its evidence.
    pub binding: Binding,
    /// The workload predict simulates for it, e.g. `seq(cpu:400000,pg:50,sleep:46)`.
    pub steps: String,
    /// The model and knobs whose hold is the binding one, e.g. `pool(threads=4)`.
    pub model: String,
}

/// One rate of a simulated curve.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WhatIfPoint {
    /// Offered rate, req/s.
    pub rate_rps: f64,
    /// Predicted success ratio.
    pub success_ratio: f64,
    /// Predicted p50, ms.
    pub p50_ms: f64,
    /// Predicted p99, ms.
    pub p99_ms: f64,
}

/// What one concurrency model would do with the fitted service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WhatIf {
    /// Model and knobs, e.g. `loop-async(workers=2)`.
    pub label: String,
    /// The change a team would make, in words (`as fitted` for none).
    #[serde(default)]
    pub change: String,
    /// The model's name.
    pub model: String,
    /// The model the fit says the service behaves like.
    pub fitted: bool,
    /// Its capacity for the fitted workload (closed form), req/s.
    pub capacity_rps: Option<f64>,
    /// The highest simulated rate that meets the objective, req/s (the
    /// search on the simulation, with steps as long as the measured ones).
    #[serde(default)]
    pub slo_capacity_rps: Option<f64>,
    /// Its simulated curve at the measured rates.
    pub points: Vec<WhatIfPoint>,
    /// Why no number is given, and what would settle it: the change
    /// touches a resource no signal named (no capacity is then printed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cannot_say: Option<String>,
}

/// A noisy verdict: a pass above a fail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Noise {
    /// The rate that passed.
    pub passed_rps: f64,
    /// The lower (or equal) rate that failed.
    pub failed_rps: f64,
}

/// Where the capacity lies, as far as the search can tell: the bracket
/// (the highest rate held, the lowest failed) widened by what its
/// decisions were unsure of (`iolab_capacity::interval`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Interval {
    /// The lowest rate the capacity may be, req/s.
    pub low_rps: f64,
    /// The highest rate it may be, req/s.
    pub high_rps: f64,
}

/// The search of one target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Search {
    /// The target's name (a preset's label or model, or `url`).
    pub name: String,
    /// What was sent to: a URL, and the request if not a plain GET.
    pub target: String,
    /// Notes on the target (e.g. "foreign target: contract check skipped").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The rule each step's length followed, in words.
    pub step_rule: String,
    /// Every step, in the order measured.
    pub steps: Vec<StepRecord>,
    /// The highest rate that met the objective, req/s (`None`: none did).
    pub capacity_rps: Option<f64>,
    /// Where the capacity lies (`None` without both a rate held and one
    /// failed above it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// The lowest rate that failed above it, req/s (`None`: none failed up to the cap).
    pub failed_rps: Option<f64>,
    /// (failed - capacity) / capacity, %.
    pub bracket_width_pct: Option<f64>,
    /// How the search ended, in words.
    pub outcome: String,
    /// Passes above fails met on the way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noise: Vec<Noise>,
    /// The machine's own noise through the search (the CPU's speed, steal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<Machine>,
    /// The queueing model read from the curve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<Fit>,
    /// Each model's simulated curve for the fitted service.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub what_if: Vec<WhatIf>,
    /// Wall time of the search, s (the sweep's is its own).
    pub elapsed_s: f64,
    /// The closed-loop sweep and its USL fit (`--sweep N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<usl::Sweep>,
    /// A mix judged per endpoint: the endpoint that failed its clauses
    /// first (at the lowest failing rate, the largest miss).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fails_first: Option<FirstFail>,
    /// A replayed mix: where each endpoint waited at the knee.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_split: Option<EndpointSplit>,
    /// A replayed mix: each endpoint's CPU per request from the unloaded
    /// probe before the search, and the CPU's bound on the mix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix_cpu: Option<MixCpu>,
    /// A replayed mix with its CPU measured: what each what-if's change
    /// buys the mix, the CPU's bound beside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix_what_if: Vec<MixWhatIf>,
}

/// The `iolab.capacity/1` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CapacityFile {
    /// Always [`CAPACITY_SCHEMA`].
    pub schema: String,
    /// `capacity` (a URL) or the preset's name.
    pub name: String,
    /// The objective.
    pub slo: Slo,
    /// The answer when one target was searched (each search has its own).
    pub capacity_rps: Option<f64>,
    /// Where it lies, when one target was searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// One search per target.
    pub searches: Vec<Search>,
    /// Start, RFC 3339 UTC.
    pub started_utc: String,
    /// The answers against a baseline's (`--baseline`, `--max-drop`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Gate>,
    /// `--repeat N`: the N searches of one target together (then
    /// `capacity_rps` is their median and `interval` theirs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Repeat>,
    /// The objective as written per endpoint of a replayed mix (`slo` is
    /// then its envelope: every clause, for the step length and timeout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_slo: Option<EndpointSlo>,
}

impl CapacityFile {
    /// Wrap searches; `capacity_rps` is the single search's answer.
    pub fn new(name: &str, slo: Slo, searches: Vec<Search>, started_utc: String) -> CapacityFile {
        CapacityFile {
            schema: CAPACITY_SCHEMA.to_string(),
            name: name.to_string(),
            slo,
            capacity_rps: match searches.as_slice() {
                [one] => one.capacity_rps,
                _ => None,
            },
            interval: match searches.as_slice() {
                [one] => one.interval,
                _ => None,
            },
            searches,
            started_utc,
            gate: None,
            endpoint_slo: None,
            repeat: None,
        }
    }

    /// Searches of one target run `--repeat` times: the answer is their
    /// median, where it lies their interval over every run.
    pub fn repeated(
        name: &str,
        slo: Slo,
        searches: Vec<Search>,
        started_utc: String,
    ) -> CapacityFile {
        let r = Repeat::of(&searches);
        CapacityFile {
            capacity_rps: r.median_rps,
            interval: r.interval,
            repeat: Some(r),
            ..CapacityFile::new(name, slo, searches, started_utc)
        }
    }
}
