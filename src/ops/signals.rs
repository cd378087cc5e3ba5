//! SIGINT, SIGTERM and SIGHUP alike: Ctrl-C, `kill`, `timeout`, a CI cancellation and a closed
//! terminal all ask a command to stop, and a command that has something to clean up (a query
//! statement, test statements, a deploy's journal) must get to do it whichever one arrives (#29).
//! [`Interrupts::listen`] registers the three listeners at once — from then on none of them ends the
//! process by itself — and [`Interrupts::recv`] resolves on the first one (one that arrived in between
//! counts).

/// Which signal asked the command to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// SIGINT (Ctrl-C).
    Int,
    /// SIGTERM (`kill`, `timeout`, CI cancellation).
    Term,
    /// SIGHUP (the terminal closed).
    Hup,
}

/// Serialised as its name: `"SIGINT"`, `"SIGTERM"`, `"SIGHUP"`.
impl serde::Serialize for Interrupt {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Interrupt {
    /// `SIGINT`, `SIGTERM`, `SIGHUP`.
    pub fn as_str(self) -> &'static str {
        match self {
            Interrupt::Int => "SIGINT",
            Interrupt::Term => "SIGTERM",
            Interrupt::Hup => "SIGHUP",
        }
    }
}

/// The registered listeners (see the module documentation).
pub struct Interrupts {
    #[cfg(unix)]
    signals: Vec<(Interrupt, tokio::signal::unix::Signal)>,
}

impl Interrupts {
    /// Registers the listeners of SIGINT, SIGTERM and SIGHUP now. Must be called inside a tokio
    /// runtime with its I/O driver ([`super::target::runtime`]); a signal whose listener cannot be
    /// registered keeps its default action (logged).
    pub fn listen() -> Interrupts {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut signals = Vec::new();
            for (which, kind) in [
                (Interrupt::Int, SignalKind::interrupt()),
                (Interrupt::Term, SignalKind::terminate()),
                (Interrupt::Hup, SignalKind::hangup()),
            ] {
                match signal(kind) {
                    Ok(s) => signals.push((which, s)),
                    Err(e) => tracing::warn!("cannot listen for {}: {e}", which.as_str()),
                }
            }
            Interrupts { signals }
        }
        #[cfg(not(unix))]
        Interrupts {}
    }

    /// Resolves when one of the signals arrives (or arrived since [`Interrupts::listen`]).
    pub async fn recv(&mut self) -> Interrupt {
        #[cfg(unix)]
        {
            if self.signals.is_empty() {
                return std::future::pending().await;
            }
            let futures = self.signals.iter_mut().map(|(which, s)| {
                let which = *which;
                Box::pin(async move {
                    s.recv().await;
                    which
                })
            });
            futures_util::future::select_all(futures).await.0
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            Interrupt::Int
        }
    }
}
