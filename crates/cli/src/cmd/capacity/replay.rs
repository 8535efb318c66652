//! `iolab capacity --replay FILE --base URL`: each step of the search sends
//! the recorded mix in its shares (attack's replay flags and loader,
//! `crate::cmd::attack::replay`), and `--slo` may be written per endpoint
//! (`'GET /orders/{id}:p99<200ms; *:success>=99.9%'`, an
//! [`EndpointSlo`]), each endpoint named checked against the recording.

use iolab_capacity::mix::MixBench;
use iolab_capacity::{self as capacity, Options, Probe, Progress};
use iolab_model::capacity::{EndpointSlo, Search, Slo};
use iolab_model::request::RequestSet;

use super::{Args, DEFAULT_SLO};
use crate::cmd::attack::replay::recording;
use crate::CliError;

/// The recorded mix a search sends.
pub struct Mix {
    /// `--base` and `/`: what the search's record names.
    pub url: String,
    /// The recorded requests in their shares, each with its endpoint.
    pub request: RequestSet,
    /// What the recording left out, in lines.
    pub notes: Vec<String>,
    /// `METHOD /template` of each endpoint.
    pub names: Vec<String>,
}

/// The mix `--replay FILE --base URL` ask for, if any.
pub fn plan(args: &Args) -> Result<Option<Mix>, CliError> {
    if args.replay.replay.is_none() {
        return Ok(None);
    }
    refuse_other_flags(args)?;
    let Some(rec) = recording(&args.replay)? else {
        return Ok(None);
    };
    let (list, of) = rec.weighted();
    let (url, request) = rec.requests(&args.request, list, of)?;
    Ok(Some(Mix {
        url,
        request,
        names: rec.endpoint_names(),
        notes: rec.notes,
    }))
}

/// `--slo`: the plain form (every request together; the default when not
/// given), or per endpoint of the recorded mix, then with its envelope
/// (every clause) as the `Slo` the step length and timeout are made for.
pub fn objective(args: &Args, mix: Option<&Mix>) -> Result<(Slo, Option<EndpointSlo>), CliError> {
    let text = args.slo.as_deref().unwrap_or(DEFAULT_SLO);
    if !EndpointSlo::is_per_endpoint(text) {
        let slo = text
            .parse()
            .map_err(|e| CliError::usage(format!("--slo: {e}")))?;
        return Ok((slo, None));
    }
    let Some(mix) = mix else {
        return Err(CliError::usage(
            "--slo per endpoint (METHOD /template:CLAUSES; ...) judges a replayed mix: give --replay FILE --base URL, or the plain form, e.g. 'p99<200ms'",
        ));
    };
    let per = EndpointSlo::parse(text).map_err(|e| CliError::usage(format!("--slo: {e}")))?;
    per.check_recorded(&mix.names)
        .map_err(|e| CliError::usage(format!("--slo: {e}")))?;
    Ok((per.envelope(), Some(per)))
}

/// The search on `probe`, judged per endpoint when the objective is.
pub fn search(
    name: &str,
    probe: &Probe,
    slo: &Slo,
    per_endpoint: Option<&EndpointSlo>,
    o: &Options,
    notes: Vec<String>,
    each: &dyn Progress,
) -> Search {
    match per_endpoint {
        Some(objective) => {
            let bench = MixBench {
                bench: probe,
                objective,
            };
            capacity::run(name, &bench, slo, o, notes, each)
        }
        None => capacity::run(name, probe, slo, o, notes, each),
    }
}

/// A replay names its own requests: the flags that would too are refused.
fn refuse_other_flags(args: &Args) -> Result<(), CliError> {
    let r = &args.request;
    let clash = [
        (
            args.url.is_some(),
            "a URL or preset (--base names where the replay goes)",
        ),
        (
            r.http2 || r.call.is_some(),
            "--http2/--call (a replay is HTTP/1.1)",
        ),
        (
            r.body.is_some() || r.body_file.is_some(),
            "--body (the recording has the bodies)",
        ),
        (r.method != "GET", "-m (the recording has the methods)"),
    ];
    match clash.iter().find(|(on, _)| *on) {
        Some((_, what)) => Err(CliError::usage(format!("--replay cannot take {what}"))),
        None => Ok(()),
    }
}
