//! Ctrl-C (and SIGTERM) for the long-running commands (`simulate`, `analyze`, `train`): one way to stop them, the
//! library's [`StopHandle`], tripped from a small thread that listens for the signal. The work polls the handle and
//! ends with what it has (games finished, moves graded, a checkpoint written). `serve` stops the same way inside
//! its runtime: the signal ends the accept loop and running searches get their grace period, then their handles
//! are tripped ([`advisor2048::server::shutdown_signal`]).

use advisor2048::search::StopHandle;

/// Exit status after Ctrl-C (128 + SIGINT), as shells report it.
pub const INTERRUPTED: u8 = 130;

/// How a command answers the signals.
#[derive(Clone, Copy, Debug)]
pub struct OnSignal {
    /// Said on standard error when the first signal arrives.
    pub message: Option<&'static str>,
    /// SIGTERM stops too (a service manager's stop), not only Ctrl-C.
    pub sigterm: bool,
    /// A second Ctrl-C quits at once with [`INTERRUPTED`].
    pub second_quits: bool,
}

/// `simulate` and `analyze`: the first Ctrl-C ends the work with what finished, the second quits.
pub const STOP_THEN_QUIT: OnSignal = OnSignal {
    message: Some("\nstopping: the games in progress end here (Ctrl-C again to quit now)"),
    sigterm: false,
    second_quits: true,
};

/// `train`: Ctrl-C or SIGTERM ends the run at a game boundary, and it writes its checkpoint.
pub const STOP_AND_SAVE: OnSignal = OnSignal {
    message: None,
    sigterm: true,
    second_quits: false,
};

/// Trips `stop` on the first signal, as `how` says.
///
/// tokio's signal support (already a dependency for the server) listens on a small thread of its own; if it cannot
/// be set up, the signals keep their default meaning (quit at once), which is still a way to stop.
pub fn stop_on_signals(stop: StopHandle, how: OnSignal) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        return;
    };
    let spawned = std::thread::Builder::new().name("signals".into()).spawn(move || {
        runtime.block_on(async {
            if !first_signal(how.sigterm).await {
                return;
            }
            if let Some(message) = how.message {
                eprintln!("{message}");
            }
            stop.stop();
            if how.second_quits && tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(i32::from(INTERRUPTED));
            }
        });
    });
    drop(spawned);
}

/// Waits for Ctrl-C, or SIGTERM when `sigterm`; false when the signals cannot be listened for.
async fn first_signal(sigterm: bool) -> bool {
    #[cfg(unix)]
    if sigterm {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            return false;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => return true,
            _ = term.recv() => return true,
        }
    }
    tokio::signal::ctrl_c().await.is_ok()
}
