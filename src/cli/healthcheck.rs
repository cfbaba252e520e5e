//! `advisor2048 healthcheck`: exit 0 when the service's `/healthz` answers ok within the timeout (the container's
//! health check: the image has no curl).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;

#[derive(Args, Debug)]
pub struct HealthcheckArgs {
    /// The health endpoint to ask.
    #[arg(
        long,
        env = "ADVISOR_HEALTHCHECK_URL",
        default_value = "http://127.0.0.1:2048/healthz"
    )]
    pub url: String,
    /// Seconds to wait for an answer.
    #[arg(long, default_value_t = 3)]
    pub timeout_s: u64,
}

/// Asks the health endpoint; prints why when unhealthy.
pub fn run(args: &HealthcheckArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let result: anyhow::Result<()> = runtime.block_on(async {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(args.timeout_s))
            .build()?;
        let response = client
            .get(&args.url)
            .send()
            .await
            .with_context(|| format!("cannot reach {}", args.url))?;
        let status = response.status();
        let body: serde_json::Value = response.json().await.context("the health answer is not JSON")?;
        if !status.is_success() || body.get("status").and_then(|s| s.as_str()) != Some("ok") {
            bail!("{} answered {status}: {body}", args.url);
        }
        Ok(())
    });
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("unhealthy: {e:#}");
            Ok(ExitCode::FAILURE)
        }
    }
}
