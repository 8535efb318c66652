//! What a search saw, said when the search's own words would mislead
//! (issue 49 findings 17 and 18): a target dead from the start printed
//! "0s" percentiles per step and exited 0; one that died mid-search got
//! "capacity 100/s" and a binding "with medium confidence"; one failing
//! half its requests at every rate got "capacity 1.6/s" from a one-request
//! step, blamed on its event loop. A search is reviewed once its steps are
//! in: the outcome then says what was seen, and neither a capacity nor a
//! fit is claimed from a target that was not there or failed throughout.

use iolab_model::capacity::{Search, StepRecord};

/// Fewest requests a step must plan for its pass to count as evidence
/// that the target works: one lucky answer is not a capacity.
pub const MIN_EVIDENCE: u64 = 20;
/// Below this share of successes at every rate, down to the lowest, the
/// target fails requests whatever the load: said so, not "no rate met".
const MOSTLY_FAILING: f64 = 0.95;

/// The step's target was not there: nothing answered, and every request
/// failed to connect or was cut off (refused, reset, another connect
/// failure). Every request timing out is an overloaded target's failure,
/// not this.
pub fn unanswered(step: &StepRecord) -> bool {
    let (r, e) = (&step.attack.requests, &step.attack.errors);
    r.sent > 0 && r.answered() == 0 && e.refused + e.reset + e.connect_other == e.total()
}

/// Every step of the search was answered by nothing.
pub fn never_answered(search: &Search) -> bool {
    !search.steps.is_empty() && search.steps.iter().all(unanswered)
}

/// The step's errors, most first: `1200 refused, 3 reset`.
fn errors(step: &StepRecord) -> String {
    let mut classes: Vec<(&str, u64)> = step
        .attack
        .errors
        .classes()
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
    classes.sort_by_key(|c| std::cmp::Reverse(c.1));
    let named: Vec<String> = classes.iter().map(|(c, n)| format!("{n} {c}")).collect();
    match named.is_empty() {
        true => "no answer".into(),
        false => named.join(", "),
    }
}

/// Say what was seen in `search`'s outcome, and withdraw the capacity and
/// the fit where the steps do not support them.
pub fn review(search: &mut Search) {
    if never_answered(search) {
        let first = &search.steps[0];
        search.outcome = format!(
            "the target answered no request at any rate ({} at {:.0} req/s): is it running and listening at {}?",
            errors(first),
            first.rate_rps,
            iolab_model::text::printable(&search.target)
        );
        withdraw(search);
        return;
    }
    if let Some(i) = search.steps.iter().rposition(|s| !unanswered(s)) {
        if let Some(dead) = search.steps.get(i + 1) {
            search.outcome = format!(
                "the target stopped answering at {:.0} req/s ({}): it died or closed its port mid-search; the steps before it are data, no capacity or binding is read from them",
                dead.rate_rps,
                errors(dead)
            );
            withdraw(search);
            return;
        }
    }
    fails_everywhere(search);
}

/// A target whose every step with enough requests to tell failed, and
/// whose passes came only from steps too short to count.
fn fails_everywhere(search: &mut Search) {
    let telling: Vec<&StepRecord> = search
        .steps
        .iter()
        .filter(|s| s.attack.requests.planned >= MIN_EVIDENCE)
        .collect();
    if telling.is_empty() || telling.iter().any(|s| s.passed) {
        return;
    }
    let best = telling
        .iter()
        .map(|s| s.success_ratio)
        .fold(0.0_f64, f64::max);
    // Failing on latency alone at every rate is "no rate met the
    // objective"; failing requests at the lowest rate too is the target's.
    if best >= MOSTLY_FAILING {
        return;
    }
    let lowest = telling
        .iter()
        .map(|s| s.rate_rps)
        .fold(f64::INFINITY, f64::min);
    search.outcome = format!(
        "the target fails at every rate: at best {:.0}% of requests succeeded, down to {lowest:.1} req/s{}",
        best * 100.0,
        match search.capacity_rps.is_some() {
            true => format!("; the passes were steps of under {MIN_EVIDENCE} requests, too short to tell"),
            false => String::new(),
        }
    );
    withdraw(search);
}

fn withdraw(search: &mut Search) {
    search.capacity_rps = None;
    search.failed_rps = None;
    search.bracket_width_pct = None;
    search.fit = None;
    search.what_if.clear();
}
