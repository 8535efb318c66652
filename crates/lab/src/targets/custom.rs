//! A user's own target command: `{port}` (a free port chosen now), `{model}`,
//! every set knob (`{threads}`, `{workers}`, ...) and the backends' addresses
//! (`{pg}`, `{mc}`, `{http_backend}`) are substituted into its arguments.

use iolab_model::experiment::RunSpec;

use crate::services::Addresses;

/// The command with its placeholders filled, and the port it was given.
pub(super) fn argv(
    argv: &[String],
    spec: &RunSpec,
    backends: &Addresses,
) -> Result<(Vec<String>, Option<u16>), super::TargetError> {
    let needs_port = argv.iter().any(|a| a.contains("{port}"));
    let port = if needs_port {
        Some(super::process::free_port().map_err(super::TargetError::NoPort)?)
    } else {
        None
    };
    let filled = argv
        .iter()
        .map(|a| {
            let mut a = spec
                .params
                .substitute(&a.replace("{model}", spec.model.as_str()));
            a = backends.substitute(&a);
            if let Some(p) = port {
                a = a.replace("{port}", &p.to_string());
            }
            a
        })
        .collect();
    Ok((filled, port))
}
