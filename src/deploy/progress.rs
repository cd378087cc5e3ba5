//! Progress of a deploy: indicatif bars (one for the whole run, one spinner per running table showing
//! its current statement and phase) when stdout is a terminal; plain structured lines otherwise (CI logs), e.g.
//! `deploy: table=int_orders statement=dev-usw2-dml-int-orders phase=RUNNING elapsed=1.2s`.
//! Progress always goes to stderr, so `--output json` on stdout stays machine-readable. Every text
//! passes through the secret scrubber.

use crate::target::secrets::Scrubber;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Receives deploy events. Implementations must be cheap: they are called from the scheduler.
pub trait Progress: Send + Sync {
    /// A node started.
    fn node_started(&self, table: &str);
    /// A statement's phase was observed (or an action taken: `creating`, `deleting`, …).
    fn statement(&self, table: &str, statement: &str, what: &str);
    /// A node ended; `outcome` is `done`, `failed: …`, `skipped: …`.
    fn node_finished(&self, table: &str, outcome: &str);
}

/// Discards everything (tests, `--output json` without a terminal if wanted).
pub struct Silent;

impl Progress for Silent {
    fn node_started(&self, _: &str) {}
    fn statement(&self, _: &str, _: &str, _: &str) {}
    fn node_finished(&self, _: &str, _: &str) {}
}

/// Plain lines on stderr.
pub struct Lines {
    start: Instant,
    scrubber: Scrubber,
    waves: BTreeMap<String, usize>,
}

impl Lines {
    /// Lines timed from now; `waves`: the plan's wave of each table that runs.
    pub fn new(waves: BTreeMap<String, usize>, scrubber: Scrubber) -> Self {
        Lines {
            start: Instant::now(),
            scrubber,
            waves,
        }
    }

    fn wave(&self, table: &str) -> String {
        self.waves
            .get(table)
            .map(|w| format!(" wave={w}"))
            .unwrap_or_default()
    }

    fn emit(&self, text: String) {
        eprintln!(
            "deploy: {} elapsed={:.1}s",
            self.scrubber.scrub(&text),
            self.start.elapsed().as_secs_f64()
        );
    }
}

impl Progress for Lines {
    fn node_started(&self, table: &str) {
        self.emit(format!("table={table}{} event=started", self.wave(table)));
    }
    fn statement(&self, table: &str, statement: &str, what: &str) {
        self.emit(format!("table={table} statement={statement} phase={what}"));
    }
    fn node_finished(&self, table: &str, outcome: &str) {
        self.emit(format!(
            "table={table} event=finished outcome=\"{outcome}\""
        ));
    }
}

/// Bars on a terminal: the whole run, one bar per wave of the plan, one spinner per running table.
pub struct Bars {
    multi: MultiProgress,
    total: ProgressBar,
    wave_bars: Vec<ProgressBar>,
    waves: BTreeMap<String, usize>,
    spinners: Mutex<BTreeMap<String, ProgressBar>>,
    scrubber: Scrubber,
}

impl Bars {
    /// Bars for the tables that run; `waves`: each one's wave in the plan.
    pub fn new(waves: BTreeMap<String, usize>, scrubber: Scrubber) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let total = multi.add(ProgressBar::new(waves.len() as u64));
        total.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} tables {msg}")
                .expect("static template")
                .progress_chars("=> "),
        );
        let count = waves.values().max().map_or(0, |m| m + 1);
        let wave_bars = (0..count)
            .map(|w| {
                let n = waves.values().filter(|v| **v == w).count() as u64;
                let b = multi.add(ProgressBar::new(n));
                b.set_style(
                    ProgressStyle::with_template("  wave {prefix:>2} [{bar:20}] {pos}/{len}")
                        .expect("static template")
                        .progress_chars("=> "),
                );
                b.set_prefix(w.to_string());
                b
            })
            .collect();
        Bars {
            multi,
            total,
            wave_bars,
            waves,
            spinners: Mutex::new(BTreeMap::new()),
            scrubber,
        }
    }
}

impl Progress for Bars {
    fn node_started(&self, table: &str) {
        let sp = self.multi.add(ProgressBar::new_spinner());
        sp.set_style(
            ProgressStyle::with_template("  {spinner} {prefix}: {msg} ({elapsed})")
                .expect("static template"),
        );
        sp.set_prefix(table.to_string());
        sp.enable_steady_tick(Duration::from_millis(120));
        self.spinners
            .lock()
            .expect("progress lock")
            .insert(table.to_string(), sp);
    }
    fn statement(&self, table: &str, statement: &str, what: &str) {
        if let Some(sp) = self.spinners.lock().expect("progress lock").get(table) {
            sp.set_message(self.scrubber.scrub(&format!("{statement} {what}")));
        }
    }
    fn node_finished(&self, table: &str, outcome: &str) {
        if let Some(sp) = self.spinners.lock().expect("progress lock").remove(table) {
            sp.finish_and_clear();
        }
        self.total.inc(1);
        if let Some(b) = self.waves.get(table).and_then(|w| self.wave_bars.get(*w)) {
            b.inc(1);
        }
        if outcome != "done" {
            let _ = self
                .multi
                .println(self.scrubber.scrub(&format!("  {table}: {outcome}")));
        }
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        for b in &self.wave_bars {
            b.finish_and_clear();
        }
        self.total.finish_and_clear();
    }
}

/// Bars when stdout (and stderr, where they are drawn) is a terminal, else lines. `waves`: the plan's
/// wave of each table that runs.
pub fn auto(waves: BTreeMap<String, usize>, scrubber: Scrubber) -> Box<dyn Progress> {
    if std::io::stdout().is_terminal() && std::io::stderr().is_terminal() {
        Box::new(Bars::new(waves, scrubber))
    } else {
        Box::new(Lines::new(waves, scrubber))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_and_lines_accept_every_event() {
        let waves = BTreeMap::from([("a".to_string(), 0), ("b".to_string(), 1)]);
        let scrub = Scrubber::new(["hunter22".to_string()]);
        for p in [
            Box::new(Bars::new(waves.clone(), scrub.clone())) as Box<dyn Progress>,
            Box::new(Lines::new(waves.clone(), scrub.clone())),
            Box::new(Silent),
        ] {
            p.node_started("a");
            p.statement("a", "dev-dml-a", "PENDING");
            p.node_finished("a", "done");
            p.node_started("b");
            p.node_finished("b", "failed: hunter22 leaked?");
            p.node_finished("unknown", "skipped: parent a failed");
        }
    }
}
