//! `iolab attack --replay FILE --base URL`: a recording (HAR, combined
//! access log, vegeta targets file; read by `iolab_loadgen::replay`) sent
//! as its mix of endpoints, only to `--base`. At the recorded times scaled
//! by `--speed`, or as a Poisson stream at `--rate` with the recorded
//! shares. The flags here become the plan's requests and driver; the rest
//! of the plan is attack's own. `iolab capacity --replay` takes the same
//! flags ([`ReplayArgs`]) and loader ([`recording`]).

use std::path::{Path, PathBuf};

use iolab_loadgen::replay::{self, timeline, Format, Loaded, Options, Routes, Safety};
use iolab_model::driver::{Arrival, Driver, Phase};
use iolab_model::replay::ReplayMix;
use iolab_model::request::{parse_header, RequestSet, RequestTemplate};

use super::Args;
use crate::CliError;

/// Requests in the list of a `--rate` replay: enough for shares of 0.1%.
const WEIGHTED: usize = 1000;

/// The flags of a replay (attack's and capacity's; attack's `--speed` is
/// its own).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ReplayArgs {
    /// Replay recorded traffic: a HAR file, an nginx/Apache access log in
    /// the combined format (with $request_time when present) or a vegeta
    /// targets file; needs --base. attack sends it at the recorded times
    /// (--speed) or as a Poisson stream at --rate with the recorded shares;
    /// capacity at each step's rate with the recorded shares.
    #[arg(
        long,
        value_name = "FILE",
        requires = "base",
        conflicts_with = "targets"
    )]
    pub replay: Option<PathBuf>,
    /// Where a replay goes, e.g. http://127.0.0.1:8080: every request is
    /// sent here, never to the hosts the file names.
    #[arg(long, value_name = "URL", requires = "replay")]
    pub base: Option<String>,
    /// The recording's format [default: detected from its first line].
    #[arg(long, value_name = "FORMAT", value_parser = ["har", "combined", "vegeta"], requires = "replay")]
    pub replay_format: Option<String>,
    /// Keep these credential headers (Cookie, Authorization,
    /// Proxy-Authorization), dropped by default: --keep-auth authorization.
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        requires = "replay"
    )]
    pub keep_auth: Vec<String>,
    /// Send the state-changing methods the recording holds (POST, PUT,
    /// PATCH, DELETE, ...); skipped by default, said in one line.
    #[arg(long, requires = "replay")]
    pub allow_writes: bool,
    /// Load a partly bad recording: leave bad lines or entries out and say how many.
    #[arg(long, requires = "replay")]
    pub skip_bad: bool,
    /// A route template to group paths by, e.g. /users/{name}/posts (repeat
    /// the flag); numeric, UUID and hex segments become {id} without one.
    #[arg(long = "route", value_name = "TEMPLATE", requires = "replay")]
    pub routes: Vec<String>,
}

/// A replay's part of the plan, and the lines to tell the user.
pub struct Replayed {
    pub target: String,
    pub request: RequestSet,
    pub driver: Driver,
    pub notes: Vec<String>,
}

/// A recording loaded for `--base`, and the lines to tell the user.
pub struct Recording {
    /// `--base`, without a trailing `/`.
    pub base: String,
    /// The file given.
    pub file: PathBuf,
    /// Its endpoints and samples.
    pub loaded: Loaded,
    /// What was left out, in lines.
    pub notes: Vec<String>,
}

/// The replay the flags ask for, if any.
pub fn plan(args: &Args) -> Result<Option<Replayed>, CliError> {
    if args.replay.replay.is_none() || args.replay.base.is_none() {
        return Ok(None);
    }
    refuse_other_flags(args)?;
    let Some(mut rec) = recording(&args.replay)? else {
        return Ok(None);
    };
    let mut notes = std::mem::take(&mut rec.notes);
    let (list, of, driver) = schedule(args, &rec.file, &rec.loaded, &mut notes)?;
    let (target, request) = rec.requests(&args.request, list, of)?;
    Ok(Some(Replayed {
        target,
        request,
        driver,
        notes,
    }))
}

/// The recording `--replay FILE --base URL` name, loaded (`None` without them).
pub fn recording(r: &ReplayArgs) -> Result<Option<Recording>, CliError> {
    let (Some(file), Some(base)) = (&r.replay, &r.base) else {
        return Ok(None);
    };
    let base = base.trim_end_matches('/').to_string();
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(CliError::usage(format!(
            "--base '{base}': give an http:// or https:// URL, e.g. http://127.0.0.1:8080"
        )));
    }
    let loaded = replay::load(file, &options(r)?)?;
    let notes = [loaded.mix.skipped_line(), loaded.bad_line(file)]
        .into_iter()
        .flatten()
        .collect();
    Ok(Some(Recording {
        base,
        file: file.clone(),
        loaded,
        notes,
    }))
}

impl Recording {
    /// The recorded requests in their shares, spread over a list (a
    /// Poisson stream over it keeps the mix at any rate).
    pub fn weighted(&self) -> (Vec<RequestTemplate>, Vec<u32>) {
        self.loaded.mix.weighted(WEIGHTED)
    }

    /// `METHOD /template` of each endpoint, most requests first.
    pub fn endpoint_names(&self) -> Vec<String> {
        (self.loaded.mix.endpoints.iter())
            .map(|e| format!("{} {}", e.method, e.template))
            .collect()
    }

    /// The target (`--base` and `/`) and the request set of `list` (each
    /// of endpoint `of[i]`) sent to `--base`, with the `-H` headers.
    pub fn requests(
        &self,
        flags: &crate::cmd::flags::RequestFlags,
        list: Vec<RequestTemplate>,
        of: Vec<u32>,
    ) -> Result<(String, RequestSet), CliError> {
        let target = format!("{}/", self.base);
        let (_, mut request) = flags.requests(Some(&target))?;
        request.list = to_base(list, &self.base, &flags.headers)?;
        request.mix = Some(ReplayMix {
            endpoints: self.loaded.mix.endpoints.clone(),
            of_request: of,
        });
        Ok((target, request))
    }
}

/// How to read the recording, from the flags.
fn options(r: &ReplayArgs) -> Result<Options, CliError> {
    Ok(Options {
        format: r.replay_format.as_deref().and_then(Format::named),
        skip_bad: r.skip_bad,
        routes: Routes::new(&r.routes).map_err(CliError::usage)?,
        safety: Safety {
            allow_writes: r.allow_writes,
            keep_auth: auth_names(&r.keep_auth)?,
        },
        ..Options::default()
    })
}

/// The requests, their endpoints and the driver: a Poisson stream over the
/// recorded shares at `--rate`, else the recording at its times (`--speed`).
fn schedule(
    args: &Args,
    file: &Path,
    loaded: &Loaded,
    notes: &mut Vec<String>,
) -> Result<(Vec<RequestTemplate>, Vec<u32>, Driver), CliError> {
    if let Some(rate) = args.rate {
        let (list, of) = loaded.mix.weighted(WEIGHTED);
        return Ok((list, of, poisson(args, rate)?));
    }
    let speed = speed(args.speed.as_deref())?;
    let rec = timeline::recorded(&loaded.mix, speed).ok_or_else(|| {
        CliError::usage(format!(
            "--replay {}: the {} file has no times: replay it at --rate R --duration D",
            file.display(),
            loaded.format.name()
        ))
    })?;
    if rec.truncated {
        notes.push(format!(
            "replay: only the first {} recorded requests are replayed at the recorded times ({} in the file; --rate replays all of their shares)",
            rec.list.len(),
            loaded.mix.total
        ));
    }
    if rec.bucket_s > 1 {
        notes.push(format!(
            "replay: the recording is sent in buckets of {} s (its requests spread evenly in each): one a second would pass {} phases",
            rec.bucket_s,
            iolab_model::limits::MAX_PHASES
        ));
    }
    let driver = Driver::Open {
        phases: rec.phases,
        arrival: Arrival::Constant,
    };
    Ok((rec.list, rec.of, driver))
}

/// The recorded paths joined to `--base`, with each `-H` header a request
/// does not set itself.
fn to_base(
    list: Vec<RequestTemplate>,
    base: &str,
    headers: &[String],
) -> Result<Vec<RequestTemplate>, CliError> {
    let extra = (headers.iter())
        .map(|h| parse_header(h).map_err(|e| CliError::usage(format!("-H: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((list.into_iter())
        .map(|mut t| {
            t.url = format!("{base}{}", t.url);
            for (name, value) in &extra {
                if t.header(name).is_none() {
                    t.headers.push((name.clone(), value.clone()));
                }
            }
            t
        })
        .collect())
}

/// A replay names its own requests and driver: the flags that would too are refused.
fn refuse_other_flags(args: &Args) -> Result<(), CliError> {
    let clash = [
        (
            args.url.is_some(),
            "a URL (--base names where the replay goes)",
        ),
        (
            args.concurrency.is_some(),
            "--concurrency (a replay is an open loop)",
        ),
        (
            !args.phases.is_empty(),
            "--phase (the recording sets the times)",
        ),
        (
            args.rate.is_none() && args.duration.is_some(),
            "--duration without --rate (the recording sets the length)",
        ),
        (
            args.request.http2 || args.request.call.is_some(),
            "--http2/--call (a replay is HTTP/1.1)",
        ),
        (
            args.request.body.is_some() || args.request.body_file.is_some(),
            "--body (the recording has the bodies)",
        ),
        (
            args.request.method != "GET",
            "-m (the recording has the methods)",
        ),
    ];
    match clash.iter().find(|(on, _)| *on) {
        Some((_, what)) => Err(CliError::usage(format!("--replay cannot take {what}"))),
        None => Ok(()),
    }
}

/// `--rate R --duration D`: a Poisson stream (seeded with --seed).
fn poisson(args: &Args, rate: f64) -> Result<Driver, CliError> {
    let dur = args.duration.as_deref().ok_or_else(|| {
        CliError::usage("--replay at --rate needs --duration D (e.g. --duration 30s)")
    })?;
    let dur = iolab_model::parse_duration(dur)
        .map_err(|e| CliError::usage(format!("--duration: {e}")))?;
    Ok(Driver::Open {
        phases: vec![Phase::hold(rate, dur)],
        arrival: Arrival::Poisson { seed: args.seed },
    })
}

/// `2`, `2x`, `0.5x`: above zero.
fn speed(s: Option<&str>) -> Result<f64, CliError> {
    let Some(s) = s else { return Ok(1.0) };
    let x: f64 = s.trim_end_matches(['x', 'X']).parse().unwrap_or(f64::NAN);
    if x.is_finite() && x > 0.0 && x <= 1000.0 {
        return Ok(x);
    }
    Err(CliError::usage(format!(
        "--speed '{s}': give a factor above 0 and at most 1000, e.g. 2x or 0.5x"
    )))
}

/// `--keep-auth` names, lower case; only credential headers.
fn auth_names(names: &[String]) -> Result<Vec<String>, CliError> {
    let known = ["cookie", "authorization", "proxy-authorization"];
    (names.iter())
        .map(|n| {
            let l = n.trim().to_ascii_lowercase();
            match known.contains(&l.as_str()) {
                true => Ok(l),
                false => Err(CliError::usage(format!(
                    "--keep-auth {n}: name Cookie, Authorization or Proxy-Authorization (other headers are always kept)"
                ))),
            }
        })
        .collect()
}
