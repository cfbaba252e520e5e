//! The `advisor2048` binary: parse the command line and hand over to the library.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match cli::run(cli::Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("advisor2048: {e:#}");
            ExitCode::FAILURE
        }
    }
}
