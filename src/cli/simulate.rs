//! `advisor2048 simulate`: TEMPORARY STUB written by the lead so the crate compiles; helper-4 replaces this file.

#[derive(clap::Args, Debug)]
pub struct SimulateArgs {}

pub fn run(_args: &SimulateArgs) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("simulate is not built yet")
}
