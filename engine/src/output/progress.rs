//! Live progress on the terminal (`--progress`, `--bar`, `--eta`): a thread of its own reads the
//! run's counters ten times a second, redraws one line on stderr, and clears that line when the
//! run ends. It only reads counters the run keeps anyway (the ledger's records done): it must
//! never add work to a worker or the scanner, and it decides nothing about the run.

use crate::sys::errors::PROG;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle, TermLike};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `--bar`: a bar, the percent, done/total, the rate and the ETA.
    Bar,
    /// `--eta`: the ETA first, then what is left, the rate and done/total.
    Eta,
    /// `--progress` (`--tui`): one summary line: done/total, percent, workers, rate, ETA.
    Summary,
}

/// Progress as asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    /// Bar, ETA or summary line.
    pub style: Style,
    /// Drawn even when stderr is not a terminal (`=always`).
    pub forced: bool,
}

/// The most redraws per second.
const REDRAWS_PER_SECOND: u8 = 10;
/// How often the counters are read.
const TICK: Duration = Duration::from_millis(100);
/// What the background count reads at once.
const COUNT_CHUNK: usize = 1 << 20;
/// "Not counted (yet)" in [`Counted`].
const UNKNOWN: u64 = u64::MAX;

/// What the meter reads at each tick.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    /// Records (chunks with `-b`) whose batch has finished, succeeded or failed.
    pub done: u64,
    /// Workers running now.
    pub workers: usize,
    /// The run's exact total, once the whole input has been cut into batches.
    pub total: Option<u64>,
}

/// What the run's total is before the input is all read.
pub enum Total {
    /// Not known until the input ends.
    Unknown,
    /// Known from the start: this many.
    Known(u64),
    /// A regular input file: its delimiters from byte `from` on are counted in a background
    /// thread (the total is shown once the count ends).
    Count {
        /// The input file.
        file: File,
        /// Where the run's input starts in it.
        from: u64,
        /// The byte that ends each record.
        delimiter: u8,
    },
}

/// Where the meter's figures come from.
pub struct Source {
    /// What is counted: "records", or "chunks" with `-b`.
    pub unit: &'static str,
    /// The total the meter shows done against.
    pub total: Total,
    /// `-n`: the total is at most this.
    pub limit: Option<u64>,
    /// Reads the counters; called from the meter's thread only.
    pub read: Box<dyn Fn() -> Counts + Send>,
}

/// How the meter is told to end: `Some(completed)`.
#[derive(Default)]
struct Ending {
    asked: Mutex<Option<bool>>,
    wake: Condvar,
}

/// A running progress line; [`Meter::finish`] (or dropping it) clears the line.
pub struct Meter {
    ending: Arc<Ending>,
    thread: Option<JoinHandle<()>>,
}

impl Meter {
    /// Starts drawing; None when nothing is to be drawn (stderr is no terminal and drawing is
    /// not forced, or the thread cannot start).
    pub fn start(spec: Spec, source: Source) -> Option<Meter> {
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr())
            && std::env::var_os("TERM").is_none_or(|t| t != "dumb");
        if !terminal && !spec.forced {
            return None;
        }
        let target = ProgressDrawTarget::term_like_with_hz(
            Box::new(Margin(console::Term::buffered_stderr())),
            REDRAWS_PER_SECOND,
        );
        let bar = ProgressBar::with_draw_target(None, target);
        let ending = Arc::new(Ending::default());
        let theirs = Arc::clone(&ending);
        let thread = std::thread::Builder::new()
            .name("frun-progress".into())
            .stack_size(256 << 10)
            .spawn(move || draw_until_ended(&bar, spec.style, source, &theirs))
            .ok()?;
        Some(Meter {
            ending,
            thread: Some(thread),
        })
    }

    /// Ends the line: a run that `completed` first shows its final figures, then the line is
    /// cleared either way, so what is printed next starts on a clean line.
    pub fn finish(mut self, completed: bool) {
        self.end(completed);
    }

    fn end(&mut self, completed: bool) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        *self.ending.asked.lock().unwrap_or_else(|e| e.into_inner()) = Some(completed);
        self.ending.wake.notify_all();
        let _ = thread.join();
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        self.end(false);
    }
}

/// Columns the line leaves free at the right edge.
const MARGIN: u16 = 2;

/// Stderr as the renderer sees it: [`MARGIN`] columns narrower than it is. The renderer fills
/// its line to the width it is told, so the cursor rests there; in the last column, the
/// terminal's `^C` echo would wrap to the next row and leave the line behind, uncleared.
#[derive(Debug)]
struct Margin(console::Term);

impl TermLike for Margin {
    fn width(&self) -> u16 {
        self.0.size().1.saturating_sub(MARGIN).max(20)
    }

    fn height(&self) -> u16 {
        self.0.size().0
    }

    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_up(n)
    }

    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_down(n)
    }

    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_right(n)
    }

    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_left(n)
    }

    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.0.write_line(s)
    }

    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.0.write_str(s)
    }

    fn clear_line(&self) -> std::io::Result<()> {
        self.0.clear_line()
    }

    fn flush(&self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// The meter's thread: redraws each tick until the end is asked for, then clears the line.
fn draw_until_ended(bar: &ProgressBar, style: Style, source: Source, ending: &Ending) {
    let counted = Arc::new(AtomicU64::new(UNKNOWN));
    let quit_count = Arc::new(AtomicBool::new(false));
    let mut total_before_scan = match source.total {
        Total::Unknown => None,
        Total::Known(n) => Some(n),
        Total::Count {
            file,
            from,
            delimiter,
        } => {
            let (counted, quit) = (Arc::clone(&counted), Arc::clone(&quit_count));
            let enough = source.limit.unwrap_or(u64::MAX);
            let spawned = std::thread::Builder::new()
                .name("frun-progress-count".into())
                .spawn(move || {
                    if let Some(n) = count_delimited(&file, from, delimiter, enough, &quit) {
                        counted.store(n, Ordering::Release);
                    }
                });
            drop(spawned);
            None
        }
    };
    let mut shown_total = None;
    bar.set_style(template(style, source.unit, false));
    let completed = loop {
        let asked = wait_tick(ending);
        let now = (source.read)();
        if total_before_scan.is_none() {
            total_before_scan = Some(counted.load(Ordering::Acquire)).filter(|&n| n != UNKNOWN);
        }
        let total = now
            .total
            .or(total_before_scan)
            .map(|t| source.limit.map_or(t, |l| t.min(l)));
        if total != shown_total {
            if let Some(t) = total {
                bar.set_length(t);
                if shown_total.is_none() {
                    bar.set_style(template(style, source.unit, true));
                }
                shown_total = total;
            }
        }
        if style == Style::Summary {
            bar.set_message(now.workers.to_string());
        }
        bar.set_position(now.done);
        if let Some(completed) = asked {
            break completed;
        }
    };
    quit_count.store(true, Ordering::Release);
    if completed {
        // The last figures, drawn whatever the redraw limit, then cleared.
        bar.abandon();
    }
    bar.finish_and_clear();
}

/// Waits one tick or until the end is asked for; returns what was asked, if anything.
fn wait_tick(ending: &Ending) -> Option<bool> {
    let asked = ending.asked.lock().unwrap_or_else(|e| e.into_inner());
    if asked.is_some() {
        return *asked;
    }
    let (asked, _) = ending
        .wake
        .wait_timeout(asked, TICK)
        .unwrap_or_else(|e| e.into_inner());
    *asked
}

/// Records in `file` from byte `from` on (a last record may lack its delimiter), or at least
/// `enough` (`-n`: the rest is not read); None when reading fails or `quit` is set first.
fn count_delimited(
    file: &File,
    from: u64,
    delimiter: u8,
    enough: u64,
    quit: &AtomicBool,
) -> Option<u64> {
    let mut buf = vec![0u8; COUNT_CHUNK];
    let (mut at, mut records, mut last) = (from, 0u64, None);
    loop {
        if quit.load(Ordering::Acquire) {
            return None;
        }
        match file.read_at(&mut buf, at) {
            Ok(0) => break,
            Ok(n) => {
                records += bytecount::count(&buf[..n], delimiter) as u64;
                if records >= enough {
                    return Some(records);
                }
                last = Some(buf[n - 1]);
                at += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(records + u64::from(last.is_some_and(|b| b != delimiter)))
}

/// The line's look for `style`, with the total known or not.
fn template(style: Style, unit: &str, total_known: bool) -> ProgressStyle {
    let text = match (style, total_known) {
        (Style::Bar, true) => format!(
            "[{{wide_bar}}] {{percent:>3}}% {{pos}}/{{len}} {unit} {{rate}} ETA {{eta_hms}}"
        ),
        (Style::Bar, false) => format!("[{{pos}} {unit}] {{rate}} elapsed {{elapsed_hms}}"),
        (Style::Eta, true) => format!(
            "ETA: {{eta_hms}} left: {{left}} {unit} avg: {{rate}} done: {{pos}}/{{len}} ({{percent}}%)"
        ),
        (Style::Eta, false) => {
            format!("ETA: ? done: {{pos}} {unit} avg: {{rate}} elapsed {{elapsed_hms}}")
        }
        (Style::Summary, true) => format!(
            "{PROG}: {{pos}}/{{len}} {unit} ({{percent}}%), {{msg}} workers, {{rate}}, ETA {{eta_hms}}"
        ),
        (Style::Summary, false) => {
            format!("{PROG}: {{pos}} {unit}, {{msg}} workers, {{rate}}, elapsed {{elapsed_hms}}")
        }
    };
    // The templates above are fixed and valid; a unit never holds a brace.
    ProgressStyle::with_template(&text)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("#>-")
        .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(&rate(s.per_sec()));
        })
        .with_key(
            "eta_hms",
            |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&clock(s.eta()));
            },
        )
        .with_key(
            "elapsed_hms",
            |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&clock(s.elapsed()));
            },
        )
        .with_key("left", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let left = s.len().map_or(0, |l| l.saturating_sub(s.pos()));
            let _ = write!(w, "{left}");
        })
}

/// A rate per second, short: `950/s`, `12.3k/s`, `4.56M/s`.
fn rate(per_sec: f64) -> String {
    match per_sec {
        r if !r.is_finite() || r < 0.0 => "?/s".into(),
        r if r < 1e4 => format!("{r:.0}/s"),
        r if r < 1e6 => format!("{:.1}k/s", r / 1e3),
        r => format!("{:.2}M/s", r / 1e6),
    }
}

/// A duration as `m:ss`, or `h:mm:ss` from an hour on.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..3600 => format!("{}:{:02}", s / 60, s % 60),
        _ => format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn clock_and_rate_read_well() {
        assert_eq!(clock(Duration::from_secs(0)), "0:00");
        assert_eq!(clock(Duration::from_secs(61)), "1:01");
        assert_eq!(clock(Duration::from_secs(3600 + 62)), "1:01:02");
        assert_eq!(rate(950.4), "950/s");
        assert_eq!(rate(12_345.0), "12.3k/s");
        assert_eq!(rate(4_560_000.0), "4.56M/s");
        assert_eq!(rate(f64::NAN), "?/s");
    }

    #[test]
    fn the_background_count_matches_the_records_of_the_file() {
        let mut f = tempfile::tempfile().unwrap();
        // Crosses several read chunks; the last record has no delimiter.
        let mut text = Vec::new();
        for i in 0..300_000 {
            writeln!(text, "{i}").unwrap();
        }
        text.extend_from_slice(b"last");
        f.write_all(&text).unwrap();
        let quit = AtomicBool::new(false);
        let lines = text.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        assert_eq!(count_delimited(&f, 0, b'\n', u64::MAX, &quit), Some(lines));
        // With -n 1000, the first chunk is enough (the total shown is then capped at 1000).
        let first = count_delimited(&f, 0, b'\n', 1000, &quit).unwrap();
        assert!((1000..lines).contains(&first), "{first}");
        // From an offset: what a shell left unread.
        let from = text.iter().position(|&b| b == b'\n').unwrap() as u64 + 1;
        assert_eq!(
            count_delimited(&f, from, b'\n', u64::MAX, &quit),
            Some(lines - 1)
        );
        quit.store(true, Ordering::Release);
        assert_eq!(count_delimited(&f, 0, b'\n', u64::MAX, &quit), None);
    }
}
