//! `iolab k8s --shards N --image IMG -- URL ATTACK-FLAGS`: the Kubernetes
//! manifests ([`manifest`]) that run an attack as N shards of an Indexed
//! Job starting together, and merge them. The attack flags are checked here
//! exactly as `iolab attack` would check them, so a plan that cannot run is
//! refused before anything reaches a cluster.

mod check;
mod manifest;
mod yaml;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;
use iolab_loadgen::shard::plan_hash;
use iolab_model::shard::Shard;
use manifest::{manifest, Claim, JobSpec};

use super::shard::parse_start_at;
use crate::CliError;

/// `iolab attack`'s flags alone, to read the attack after `--` exactly as
/// `iolab attack` reads it.
#[derive(Debug, Parser)]
#[command(name = "iolab attack")]
struct AttackFlags {
    #[command(flatten)]
    attack: super::attack::Args,
}

/// Time the merge waits past the shards' planned end (pods scheduled late,
/// slow volumes) before it names the missing shards.
const MERGE_SLACK: Duration = Duration::from_secs(300);

/// Flags of `iolab k8s`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  iolab k8s --shards 8 --image registry.example/iolab:1 -- http://svc:8080/ --rate 8000 --duration 5m | kubectl apply -f -
  iolab k8s --shards 4 --image IMG --claim results --start-at 2026-11-22T10:00:00Z -o job.yaml -- http://svc:8080/ -c 400 -n 1000000")]
pub struct Args {
    /// Shards (pods of the Indexed Job), 1..=10000.
    #[arg(long, value_name = "N")]
    pub shards: u32,
    /// Container image with `iolab` on its PATH (and `sh`).
    #[arg(long, value_name = "IMAGE")]
    pub image: String,
    /// Name of the Job (and prefix of the other objects).
    #[arg(long, default_value = "iolab", value_name = "NAME")]
    pub name: String,
    /// Namespace of the objects [default: kubectl's current one].
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// When every shard starts: Unix seconds, RFC 3339, or +DUR from now
    /// (leave the pods time to be scheduled and pull the image).
    #[arg(long, default_value = "+2m", value_name = "TIME")]
    pub start_at: String,
    /// Use this existing ReadWriteMany claim for results instead of creating one.
    #[arg(long, value_name = "CLAIM")]
    pub claim: Option<String>,
    /// Size of the results claim created.
    #[arg(long, default_value = "1Gi", value_name = "SIZE")]
    pub storage: String,
    /// Storage class of the claim created (one offering ReadWriteMany).
    #[arg(long, value_name = "CLASS")]
    pub storage_class: Option<String>,
    /// CPU each shard's pod requests, e.g. 1 or 500m.
    #[arg(long, value_name = "CPU")]
    pub cpu: Option<String>,
    /// Write the manifests to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// After `--`: the URL and `iolab attack` flags of the whole plan (the
    /// shard flags, --out and --hdr are added per pod).
    #[arg(last = true, required = true, value_name = "URL FLAGS")]
    pub attack: Vec<String>,
}

/// Run `iolab k8s`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    check_flags(&args).map_err(CliError::usage)?;
    let whole: Shard = format!("1/{}", args.shards).parse().map_err(
        |e: iolab_model::shard::ShardParseError| {
            CliError::usage(e.to_string().replace("--shard '1/", "--shards '"))
        },
    )?;
    let attack = attack_args(&args.attack)?;
    local_files(&attack)?;
    let mut plan = super::attack::plan(&attack)?;
    plan.shard = Some(whole);
    iolab_loadgen::validate(&plan)
        .map_err(|e| CliError::usage(format!("the attack after --: {e}")))?;
    let now = SystemTime::now();
    let start = parse_start_at(&args.start_at, now).map_err(CliError::usage)?;
    let now_ms = now
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64;
    if start <= now_ms {
        // Pods scheduled after it would each start at once, not together.
        return Err(CliError::usage(format!(
            "--start-at '{}' is in the past: the pods start together only at a time still ahead when they are scheduled (e.g. --start-at +2m)",
            args.start_at
        )));
    }
    let lead = Duration::from_millis(start.saturating_sub(now_ms));
    let run = plan.driver.duration().unwrap_or(Duration::from_secs(3600)) + plan.timeout;
    let spec = JobSpec {
        name: args.name.clone(),
        namespace: args.namespace.clone(),
        image: args.image.clone(),
        shards: args.shards,
        start_at_unix_ms: start,
        attack_args: args.attack.clone(),
        plan_hash: plan_hash(&plan),
        merge_wait: lead + run + MERGE_SLACK,
        claim: match &args.claim {
            Some(c) => Claim::Existing(c.clone()),
            None => Claim::New {
                size: args.storage.clone(),
                storage_class: args.storage_class.clone(),
            },
        },
        cpu: args.cpu.clone(),
    };
    let text = manifest(&spec);
    match &args.out {
        Some(path) => iolab_model::files::write_atomic(path, text.as_bytes()).map_err(|e| {
            CliError::Failed(anyhow::anyhow!("cannot write {}: {e}", path.display()))
        })?,
        None => super::report::print(text.as_bytes()),
    }
    Ok(ExitCode::SUCCESS)
}

/// The attack flags after `--`, parsed as `iolab attack` parses them; the
/// flags each pod gets from the manifest are refused here.
fn attack_args(argv: &[String]) -> Result<super::attack::Args, CliError> {
    const PER_POD: [&str; 7] = [
        "--shard",
        "--start-at",
        "--out",
        "-o",
        "--hdr",
        "--csv",
        "--json",
    ];
    if let Some(f) = argv.iter().find(|a| {
        PER_POD
            .iter()
            .any(|p| *a == p || a.starts_with(&format!("{p}=")))
    }) {
        return Err(CliError::usage(format!(
            "{f} after --: iolab k8s sets it for each pod; leave it out"
        )));
    }
    let full = std::iter::once("iolab attack".to_string()).chain(argv.iter().cloned());
    match AttackFlags::try_parse_from(full) {
        Ok(flags) => Ok(flags.attack),
        Err(e) => {
            let text = e.to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("error");
            Err(CliError::usage(format!(
                "the attack after --: {}",
                first.trim_start_matches("error: ")
            )))
        }
    }
}

/// Files of this machine named in the attack: a pod runs `iolab attack`
/// with the same flags in its own filesystem, where they are not, so they
/// are refused here rather than passed on to fail in every pod.
fn local_files(attack: &super::attack::Args) -> Result<(), CliError> {
    let r = &attack.request;
    let named = [
        ("--body-file", r.body_file.as_ref()),
        ("--targets", r.targets.as_ref()),
        ("--proto", r.protos.first()),
    ];
    match named.into_iter().find_map(|(f, p)| p.map(|p| (f, p))) {
        Some((flag, path)) => Err(CliError::usage(format!(
            "{flag} {} after --: each pod reads its own filesystem, not this machine's; give the body with --body TEXT (gRPC: server reflection instead of --proto)",
            path.display()
        ))),
        None => Ok(()),
    }
}

/// Every flag that lands in the manifest, checked as Kubernetes would.
fn check_flags(args: &Args) -> Result<(), check::K8sFlagError> {
    check::name(&args.name)?;
    check::image(&args.image)?;
    check::storage(&args.storage)?;
    if let Some(ns) = &args.namespace {
        check::namespace(ns)?;
    }
    if let Some(cpu) = &args.cpu {
        check::cpu(cpu)?;
    }
    if let Some(class) = &args.storage_class {
        check::subdomain("--storage-class", class)?;
    }
    if let Some(claim) = &args.claim {
        check::subdomain("--claim", claim)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_pod_flags_are_refused_and_attack_flags_checked() {
        let e = attack_args(&["http://x/".into(), "--shard".into(), "1/2".into()]).unwrap_err();
        assert!(e.to_string().contains("sets it for each pod"), "{e}");
        let e = attack_args(&["http://x/".into(), "--rat".into(), "5".into()]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the attack after --: unexpected argument"),
            "{e}"
        );
        assert!(attack_args(&["http://x/".into(), "--rate".into(), "5".into()]).is_ok());
    }
}
