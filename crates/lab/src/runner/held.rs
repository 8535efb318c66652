//! A held run's measured load (`driver = "held"`): WebSockets to the
//! target's `/ws?steps=...`, opened, held and closed by
//! `iolab_loadgen::held::attack` on this thread, kept to the generator's
//! CPUs; its document is the same `iolab.attack/1` with `connections` and
//! `messages` sections. Also the check of such a load before anything
//! starts, as the generator will check it.

use iolab_loadgen::{AttackError, Hooks, RequestRow};
use iolab_model::attack::AttackResult;
use iolab_model::experiment::{HeldLoad, HttpWork};
use iolab_model::limits::{thousands, FD_RESERVE};

use super::Ctx;

/// The plan of `load` against a target at `base`, checked by the generator
/// and against this process's open-files limit (one socket each).
pub fn check_held(w: &HttpWork, load: &HeldLoad) -> Result<(), (&'static str, String)> {
    let plan = load.plan("http://127.0.0.1:1", &w.steps, w.timeout);
    iolab_loadgen::held::validate(&plan).map_err(|e| ("held", e.to_string()))?;
    let need = u64::from(load.connections) + FD_RESERVE;
    let (_, hard) = iolab_loadgen::machine::nofile();
    if hard > 0 && need > hard {
        return Err((
            "held.connections",
            format!(
                "{} WebSockets need {} open files, but this process may open at most {hard} (ulimit -n): raise it (ulimit -n {need}) or hold fewer",
                thousands(u64::from(load.connections)),
                thousands(need)
            ),
        ));
    }
    Ok(())
}

impl Ctx<'_> {
    /// Hold `load`'s WebSockets against the target at `base`; the result,
    /// whether it was cancelled, and no request rows.
    pub(super) fn held_attack(
        &self,
        base: &str,
        w: &HttpWork,
        load: &HeldLoad,
    ) -> Result<(AttackResult, bool, Vec<RequestRow>), AttackError> {
        let plan = load.plan(base, &w.steps, w.timeout);
        let hooks = Hooks {
            cancel: Some(std::sync::Arc::clone(&self.opts.cancel)),
            ..Hooks::default()
        };
        let _kept = crate::environment::keep_to(&self.gen_cpus);
        iolab_loadgen::held::attack(&plan, &hooks)
            .map(|r| (r.result, r.cancelled, Vec::new()))
            .map_err(|e| AttackError::Invalid(e.to_string()))
    }
}
