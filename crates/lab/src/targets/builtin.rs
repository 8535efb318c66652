//! The built-in targets: a Rust model served by `iolab serve` of this binary,
//! started as a child process like any other target.

use std::path::Path;

use iolab_model::experiment::{RunSpec, Work};

use super::{StartOptions, TargetError};

/// `iolab serve --model M --port 0 ...` for `spec`.
pub(super) fn argv(exe: &Path, spec: &RunSpec, opts: &StartOptions) -> Vec<String> {
    let mut argv = vec![
        exe.display().to_string(),
        "serve".into(),
        "--model".into(),
        spec.model.as_str().into(),
        "--port".into(),
        "0".into(),
        // The runner does not wait for abandoned work at the end.
        "--grace".into(),
        "250ms".into(),
    ];
    if opts.separate_metrics {
        argv.extend(["--metrics-port".into(), "0".into()]);
    }
    if let Some(n) = spec.spans {
        argv.extend(["--spans".into(), n.to_string()]);
    }
    argv.extend(spec.params.flags());
    argv.extend(opts.backends.serve_flags());
    argv
}

/// A built-in model, knobs in range, no runtime options.
pub(super) fn check(spec: &RunSpec) -> Result<(), TargetError> {
    if !spec.model.def().built_in {
        return Err(TargetError::NotBuiltIn(spec.model.to_string()));
    }
    spec.params.check()?;
    if let Work::Batch(_) = &spec.work {
        return Ok(());
    }
    if let Some(o) = super::runtime::options_set(spec).first() {
        return Err(TargetError::OptionBuiltIn(o.clone()));
    }
    Ok(())
}
