//! A repetition of a foreign target's run: start it (or take the running
//! service at its URL), skip the verify gate (it does not speak the target
//! contract; the report says so), warm up, measure with `/proc` telemetry
//! when its PID is known, stop what was started.

use iolab_model::experiment::{HttpWork, RunSpec};
use iolab_model::request::ForeignSpec;
use iolab_model::runs::Outcome;

use super::http::Rep;
use super::load::{attack_plan, warmup_driver};
use super::Ctx;
use crate::progress::Stage;
use crate::targets::{foreign, StartOptions};
use iolab_telemetry as telemetry;

impl Ctx<'_> {
    pub(super) fn foreign_rep(&self, spec: &RunSpec, w: &HttpWork, f: &ForeignSpec) -> Rep {
        let mut rep = Rep::new();
        self.observer.stage(spec, Stage::Starting);
        let opts = StartOptions {
            backends: self.backends.clone(),
            cpus: self.target_cpus.clone(),
            separate_metrics: false,
        };
        let started = foreign::start(
            spec,
            f,
            w.command.as_deref(),
            &opts,
            self.opts.start_timeout,
            &self.opts.cancel,
        );
        let mut running = match started {
            Ok(r) => r,
            Err(e) => return rep.start_failed(e.0, self.opts.cancelled()),
        };
        // A sample of the run before is not this one's.
        let _ = self.telemetry.take();
        let sampler = running.pid.map(|pid| {
            let (metrics_url, series) = running.metrics(f).unzip();
            telemetry::Sampler::start_with(telemetry::Sources {
                pid,
                metrics_url,
                series: series.unwrap_or_default(),
                tap: Some(self.telemetry.clone()),
                ..telemetry::Sources::default()
            })
        });
        if let Some(driver) = warmup_driver(&w.driver, self.plan.warmup, self.plan.warmup_requests)
        {
            if !self.opts.cancelled() {
                self.observer.stage(spec, Stage::WarmingUp);
                let plan = attack_plan(&running.base, w, driver, &self.gen_cpus);
                let _ = self.attack(spec, Stage::WarmingUp, &plan);
            }
        }
        let mut zero = telemetry::unix_ms();
        if self.opts.cancelled() {
            rep.outcome = Outcome::Interrupted;
        } else {
            self.observer.stage(spec, Stage::Measuring);
            let plan = attack_plan(&running.base, w, w.driver.clone(), &self.gen_cpus);
            let measured = self.attack(spec, Stage::Measuring, &plan);
            zero = rep.keep_measured(measured, zero);
        }
        if let Some(s) = sampler {
            rep.telemetry = s.finish(zero);
        }
        if let Some(target) = running.target.as_mut() {
            if let Some(d) = target.exit_detail() {
                rep.outcome = Outcome::TargetDied { detail: d };
            }
            self.stop(spec, target);
        }
        rep
    }
}
