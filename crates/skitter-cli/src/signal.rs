//! Turns Ctrl-C and SIGTERM into a cancellation token: the first signal asks the
//! job to stop gracefully (it still reports); a second one exits at once with 130.

use tokio_util::sync::CancellationToken;

/// A token cancelled by the first Ctrl-C or SIGTERM.
pub fn cancel_on_signals() -> CancellationToken {
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::warn!("stopping: finishing in-flight requests (signal again to quit now)");
        cancel.cancel();
        wait_for_signal().await;
        std::process::exit(130);
    });
    token
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
