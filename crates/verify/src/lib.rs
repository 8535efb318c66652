//! SHIM
use std::time::Duration;
use iolab_model::verify::VerifyReport;
#[derive(Default)]
pub struct VerifyOptions { pub model: Option<String>, pub timeout: Duration }
#[derive(Debug, thiserror::Error)]
pub enum VerifyError { #[error("{0}")] Connect(String) }
pub fn verify(_base_url: &str, _opts: &VerifyOptions) -> Result<VerifyReport, VerifyError> { Err(VerifyError::Connect("shim".into())) }
