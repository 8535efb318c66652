//! iolab's HTTP delay service for `http:MS` steps, started in process.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::delay::DelayService;
use crate::service::{Service, StartError, Started};

/// The delay service as a [`Service`].
pub struct Delay;

/// The one instance.
pub static DELAY: Delay = Delay;

impl Service for Delay {
    fn label(&self) -> &'static str {
        "the delay service"
    }

    fn answers(&self, url: &str) -> bool {
        ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(1))
            .build()
            .get(&format!("{url}/health"))
            .call()
            .is_ok_and(|r| r.status() == 200)
    }

    fn find(&self) -> Result<Option<PathBuf>, StartError> {
        Ok(None)
    }

    fn start(&self, _program: Option<&Path>) -> Result<Box<dyn Started>, StartError> {
        let d = DelayService::start(SocketAddr::from(([127, 0, 0, 1], 0)))
            .map_err(StartError::Delay)?;
        Ok(Box::new(Running(d)))
    }
}

#[derive(Debug)]
struct Running(DelayService);

impl Started for Running {
    fn address(&self) -> String {
        self.0.url().to_string()
    }

    fn version(&self) -> Option<String> {
        Some(format!("iolab {}", env!("CARGO_PKG_VERSION")))
    }

    fn notes(&self) -> Vec<String> {
        vec!["in process".into()]
    }

    fn pid(&self) -> Option<u32> {
        None
    }
}
