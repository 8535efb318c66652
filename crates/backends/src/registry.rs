//! Every backend, registered once: the one place that names each module
//! (the modules implement [`Backend`]; nothing else matches on a kind).

use iolab_model::steps::BackendKind;

use crate::backend::Backend;

/// The module behind `kind`.
pub fn backend(kind: BackendKind) -> &'static dyn Backend {
    match kind {
        BackendKind::Sleep => &crate::sleep::SLEEP,
        BackendKind::Http => &crate::http::HTTP,
        BackendKind::Pg => &crate::pg::PG,
        BackendKind::Mc => &crate::mc::MC,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_registered_as_itself() {
        for kind in BackendKind::ALL {
            assert_eq!(backend(kind).kind(), kind);
            assert_eq!(backend(kind).service().is_none(), kind.is_sleep());
        }
    }
}
