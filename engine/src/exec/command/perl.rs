//! Perl replacement strings: the user-defined strings a line may hold ([`Rpl`]: a tag that
//! stands for a perl expression) and the evaluator that computes them ([`Evaluator`]): one
//! long-lived `perl` process per run, started only when a line holds a perl expression, fed
//! through a pipe with a small framed protocol.
//!
//! It evaluates expressions and nothing else: it does not parse command lines (that is
//! [`crate::exec::command::job`]'s business) and starts no job.
//!
//! The protocol (all lengths decimal, each followed by a newline):
//! - at start, frun writes the number of expressions, then each one as `LEN\nBYTES`; perl
//!   answers `ok\n` or `err LEN\nMESSAGE` (an expression that does not compile);
//! - per value, frun writes `ID SEQ SLOT NARGS DONE TOTAL SLOTS\n` (DONE: the jobs completed
//!   so far, `$Global::total_completed`; TOTAL: all the jobs, 0 when not known, `total_jobs()`;
//!   SLOTS: the job slots, `$Global::max_jobs_running`), the job's arguments and the value, each as
//!   `LEN\nBYTES`; perl answers `STATUS LEN\nBYTES`: status 0 (quote the result), 1 (`uq()`:
//!   put it in as it is), 2 (the expression died: BYTES is perl's message), 3 (it called
//!   `exit`) or 4 (it called `skip()`: the job does not run).
//!
//! perl reads its requests from a pipe frun holds: when frun exits, for whatever reason, perl
//! reads end-of-file and exits too.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// A user-defined replacement string: `tag` stands for the perl expression `body`, as if the
/// line held `{=BODY=}` (a body that starts with a number is positional, as `{=N …=}` is).
/// A tag holding `(` is a regular expression; its groups' texts are `$$1`, `$$2`, … in the
/// body. A tag of the form `{…}` also has a positional form `{N…}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rpl {
    /// The text (or pattern) that names it.
    pub tag: Vec<u8>,
    /// The perl expression.
    pub body: Vec<u8>,
}

/// The perl evaluator's own code: helper functions the expressions may call, then the loop
/// that answers frun's requests.
const SCRIPT: &str = r#"
use strict;
BEGIN { *CORE::GLOBAL::exit = sub { my $c = shift || 0; main::frun_answer(3, "$c"); CORE::exit($c); }; }
binmode STDIN; binmode STDOUT;
package Frun::Job;
sub seq { $main::frun_seq }
sub slot { $main::frun_slot }
sub total_jobs { main::total_jobs() }
sub skip { main::skip() }
package Frun::Unknown;
sub TIESCALAR { my ($c, $n) = @_; bless [$n], $c }
sub FETCH { die "frun: \$Global::$_[0][0] is not supported\n" }
sub STORE { }
package Frun::Queue;
sub total_jobs { main::total_jobs() }
package main;
our ($frun_seq, $frun_slot, $frun_uq, @arg);
our $job = bless {}, 'Frun::Job';
$Global::JobQueue = bless {}, 'Frun::Queue';
$Global::use = {};
our $frun_done = 0;
*Global::total_completed = \$frun_done;
our ($frun_total, $frun_slots) = (0, 0);
*Global::max_jobs_running = \$frun_slots;
sub seq { $frun_seq }
sub slot { $frun_slot }
sub uq { $frun_uq = 1; }
sub total_jobs { $frun_total or die "frun: total_jobs() is not known: frun reads all input first only when the line holds {##} or total_jobs\n"; $frun_total }
our $frun_skip = 0;
sub skip { $frun_skip = 1; }
sub Q {
    my $s = shift;
    return "''" if !defined $s || $s eq '';
    return $s if $s =~ m{^[-_.+/a-zA-Z0-9]+$};
    $s =~ s/'/'"'"'/g;
    my $q = "'$s'";
    $q =~ s/^''//; $q =~ s/''$//;
    return $q;
}
sub shell_quote { join ' ', map { Q($_) } @_ }
sub pQ { my $s = shift; $s =~ s/([\\"\$\@])/\\$1/g; $s }
sub dirname { my $s = shift; return '.' unless $s =~ m{/}; $s =~ s{/+[^/]*$}{}; $s eq '' ? '/' : $s }
sub basename { my $s = shift; $s =~ s{.*/}{}; $s }
sub hash { require B; B::hash(@_) }
sub frun_t { my @t = localtime(time); my $f = shift; require POSIX; POSIX::strftime($f, @t) }
sub yyyy_mm_dd_hh_mm_ss { frun_t('%Y-%m-%dT%H:%M:%S') }
sub yyyy_mm_dd_hh_mm { frun_t('%Y-%m-%dT%H:%M') }
sub yyyy_mm_dd { frun_t('%Y-%m-%d') }
sub hh_mm_ss { frun_t('%H:%M:%S') }
sub hh_mm { frun_t('%H:%M') }
sub yyyymmddhhmmss { frun_t('%Y%m%d%H%M%S') }
sub yyyymmddhhmm { frun_t('%Y%m%d%H%M') }
sub yyyymmdd { frun_t('%Y%m%d') }
sub hhmmss { frun_t('%H%M%S') }
sub hhmm { frun_t('%H%M') }
sub frun_blob {
    my $n = <STDIN>;
    CORE::exit(0) unless defined $n;
    chomp $n;
    my $b = '';
    while (length($b) < $n) {
        my $r = read(STDIN, $b, $n - length($b), length($b));
        CORE::exit(0) unless $r;
    }
    return $b;
}
sub frun_answer { my ($st, $b) = @_; print STDOUT "$st ", length($b), "\n", $b; flush STDOUT; }
my $count = <STDIN>;
CORE::exit(0) unless defined $count;
my @code;
for my $i (1 .. $count) {
    my $e = frun_blob();
    my $sub = eval "no strict; no warnings; sub { $e\n; }";
    if (!$sub) { my $m = $@; print STDOUT "err ", length($m), "\n", $m; CORE::exit(1); }
    push @code, $sub;
}
print STDOUT "ok\n"; flush STDOUT;
while (defined(my $head = <STDIN>)) {
    my ($id, $seq, $slot, $n, $done, $total, $slots) = split ' ', $head;
    ($frun_done, $frun_total, $frun_slots) = ($done, $total, $slots);
    my @a = (undef);
    push @a, frun_blob() for 1 .. $n;
    my $v = frun_blob();
    ($frun_seq, $frun_slot, $frun_uq, $frun_skip) = ($seq, $slot, 0, 0);
    @arg = @a;
    local $_ = $v;
    my $ok = eval { $code[$id]->(); 1 };
    if (!$ok) { frun_answer(2, $@); next; }
    frun_answer($frun_skip ? 4 : $frun_uq ? 1 : 0, defined $_ ? $_ : '');
}
"#;

/// The jobs of this process's run completed so far (those a resumed joblog holds included):
/// perl's `$Global::total_completed`.
static COMPLETED: AtomicU64 = AtomicU64::new(0);

/// Counts `n` more completed jobs (`COMPLETED`).
pub fn add_completed(n: u64) {
    COMPLETED.fetch_add(n, Ordering::Relaxed);
}

/// The run's jobs (0: not known before they are read) and its job slots: perl's
/// `total_jobs()` and `$Global::max_jobs_running`.
static TOTALS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// What `total_jobs()` gives job 1 when it differs from what it gives the others (0: it does
/// not). GNU Parallel's count under `-X`/`-m`: job 1 sees every argument as a job of its own,
/// the later jobs one job plus the arguments job 1 did not take.
static FIRST_TOTAL: AtomicU64 = AtomicU64::new(0);

/// Sets the run's number of jobs (0: not known) and job slots (`TOTALS`).
pub fn set_totals(jobs: u64, slots: u64) {
    TOTALS[0].store(jobs, Ordering::Relaxed);
    TOTALS[1].store(slots, Ordering::Relaxed);
}

/// Sets what job 1 sees as the number of jobs (`FIRST_TOTAL`; 0: what the others see).
pub fn set_first_total(jobs: u64) {
    FIRST_TOTAL.store(jobs, Ordering::Relaxed);
}

/// What `total_jobs()` is for job `seq`.
fn total_for(seq: u64) -> u64 {
    match FIRST_TOTAL.load(Ordering::Relaxed) {
        first if seq == 1 && first != 0 => first,
        _ => TOTALS[0].load(Ordering::Relaxed),
    }
}

fn completed() -> u64 {
    COMPLETED.load(Ordering::Relaxed)
}

thread_local! {
    /// A job whose line this thread built last called `skip()`.
    static SKIPPED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Says that the job whose line this thread is building called `skip()`.
fn mark_skipped() {
    SKIPPED.with(|s| s.set(true));
}

/// Whether the job whose line this thread built last called `skip()` (and forgets it).
pub fn take_skipped() -> bool {
    SKIPPED.with(|s| s.replace(false))
}

/// One perl process evaluating a run's expressions.
pub struct Evaluator {
    io: Mutex<Pipes>,
    /// The job whose values are computed next (from 1), and the jobs waiting for their turn.
    next: Mutex<u64>,
    turns: Condvar,
    /// The expressions' texts, by id (for messages).
    exprs: Vec<Vec<u8>>,
}

struct Pipes {
    child: Child,
    to: ChildStdin,
    from: BufReader<ChildStdout>,
    buf: Vec<u8>,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("exprs", &self.exprs.len())
            .finish()
    }
}

/// A job's turn to have its values computed ([`Evaluator::turn`]).
pub struct Turn<'a> {
    next: MutexGuard<'a, u64>,
    seq: u64,
    turns: &'a Condvar,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        *self.next = (*self.next).max(self.seq + 1);
        self.turns.notify_all();
    }
}

/// What evaluating an expression gave.
pub enum Outcome {
    /// The value, to be quoted as any value is.
    Quoted,
    /// The value, put in as it is (`uq()`).
    Unquoted,
    /// The expression called perl's `exit` with this status: the run ends there.
    Exit(i32),
    /// The expression called `skip()`: the job does not run.
    Skip,
}

fn put_blob(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(b.len().to_string().as_bytes());
    out.push(b'\n');
    out.extend_from_slice(b);
}

impl Evaluator {
    /// Starts perl with `exprs` compiled. Errors: perl is missing, or an expression does not
    /// compile (perl's message).
    pub fn start(exprs: Vec<Vec<u8>>) -> Result<Evaluator, String> {
        let mut child = Command::new("perl")
            .arg("-e")
            .arg(SCRIPT)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| {
                format!(
                    "perl replacement strings ({{= … =}}, --plus, --rpl) need perl, which \
                     could not be started: {e}"
                )
            })?;
        let (Some(mut to), Some(from)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("perl's pipes could not be made".into());
        };
        let mut msg = Vec::new();
        msg.extend_from_slice(format!("{}\n", exprs.len()).as_bytes());
        for e in &exprs {
            put_blob(&mut msg, e);
        }
        let mut from = BufReader::new(from);
        let mut line = String::new();
        let started = to.write_all(&msg).and_then(|()| to.flush()).is_ok()
            && from.read_line(&mut line).is_ok();
        if line != "ok\n" {
            let mut rest = String::new();
            let _ = from.read_to_string(&mut rest);
            let _ = child.wait();
            let why = rest.lines().next().unwrap_or("").to_string();
            return Err(if started && line.starts_with("err") {
                format!("a perl expression does not compile: {why}")
            } else {
                "perl replacement strings need a working perl, which did not answer".into()
            });
        }
        Ok(Evaluator {
            io: Mutex::new(Pipes {
                child,
                to,
                from,
                buf: Vec::new(),
            }),
            next: Mutex::new(1),
            turns: Condvar::new(),
            exprs,
        })
    }

    /// Waits until job `seq` is the next one (its values computed after those of the jobs
    /// before it), at most a moment: a job that never comes (resumed, already done) does not
    /// hold the others up. The turn lasts while the returned guard lives.
    pub fn turn(&self, seq: u64) -> Turn<'_> {
        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        let deadline = std::time::Instant::now() + Duration::from_millis(50);
        while *next < seq {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            next = match self.turns.wait_timeout(next, left) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        Turn {
            next,
            seq,
            turns: &self.turns,
        }
    }

    /// Evaluates expression `id` with `$_` = `value`, `@arg` = `args` (`$arg[1]` the first),
    /// for job `seq` in slot `slot`; the result goes into `out` (cleared first). An expression
    /// that dies: its message, as one line.
    pub fn eval(
        &self,
        id: usize,
        value: &[u8],
        args: &[&[u8]],
        seq: u64,
        slot: u64,
        out: &mut Vec<u8>,
    ) -> Result<Outcome, String> {
        let mut io = self.io.lock().unwrap_or_else(|p| p.into_inner());
        let p = &mut *io;
        p.buf.clear();
        p.buf.extend_from_slice(
            format!(
                "{id} {seq} {slot} {} {} {} {}\n",
                args.len(),
                completed(),
                total_for(seq),
                TOTALS[1].load(Ordering::Relaxed)
            )
            .as_bytes(),
        );
        for a in args {
            put_blob(&mut p.buf, a);
        }
        put_blob(&mut p.buf, value);
        let lost = || "the perl evaluating replacement strings exited".to_string();
        p.to.write_all(&p.buf).map_err(|_| lost())?;
        p.to.flush().map_err(|_| lost())?;
        let mut head = String::new();
        p.from.read_line(&mut head).map_err(|_| lost())?;
        let mut it = head.split_whitespace();
        let status: u8 = it.next().and_then(|s| s.parse().ok()).ok_or_else(lost)?;
        let len: usize = it.next().and_then(|s| s.parse().ok()).ok_or_else(lost)?;
        out.clear();
        out.resize(len, 0);
        p.from.read_exact(out).map_err(|_| lost())?;
        match status {
            0 => Ok(Outcome::Quoted),
            1 => Ok(Outcome::Unquoted),
            4 => {
                mark_skipped();
                Ok(Outcome::Skip)
            }
            3 => Ok(Outcome::Exit(
                String::from_utf8_lossy(out).trim().parse().unwrap_or(255),
            )),
            _ => {
                let msg = String::from_utf8_lossy(out);
                let msg = msg.trim_end().trim_start_matches("frun: ");
                let e = String::from_utf8_lossy(self.exprs.get(id).map_or(&[][..], |e| e));
                Err(format!("{{={e}=}}: {msg}"))
            }
        }
    }
}

impl Drop for Evaluator {
    fn drop(&mut self) {
        let p = self.io.get_mut().unwrap_or_else(|p| p.into_inner());
        let _ = p.child.kill();
        let _ = p.child.wait();
    }
}

/// A perl replacement string found at the start of a text.
#[derive(Debug, PartialEq, Eq)]
pub struct Found {
    /// `{=N …=}`: the value it works on is the job's N-th (1-based, negative from the end).
    pub position: Option<i64>,
    /// The perl expression.
    pub expr: Vec<u8>,
    /// The bytes the replacement string takes.
    pub len: usize,
}

/// Splits a leading position (`N ` or `-N `, then blanks or the end) off an expression.
fn positional(e: &[u8]) -> (Option<i64>, &[u8]) {
    let digits_from = usize::from(e.first() == Some(&b'-'));
    let n = e[digits_from..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let end = digits_from + n;
    if n == 0 || e.get(end).is_some_and(|b| !b.is_ascii_whitespace()) {
        return (None, e);
    }
    let pos = std::str::from_utf8(&e[..end])
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|&p| p != 0);
    match pos {
        Some(p) => (Some(p), &e[end..]),
        None => (None, e),
    }
}

/// The `{=EXPR=}` (or `{=N EXPR=}`) at the start of `s`: a `{=`, then text in which neither
/// `{=` nor `=}` starts, then `=}`.
pub fn expression_at(s: &[u8]) -> Option<Found> {
    let inner = s.strip_prefix(b"{=")?;
    let close = memchr::memmem::find(inner, b"=}")?;
    if memchr::memmem::find(&inner[..close + 1], b"{=").is_some() {
        return None;
    }
    let (position, expr) = positional(&inner[..close]);
    Some(Found {
        position,
        expr: expr.to_vec(),
        len: close + 4,
    })
}

/// The user-defined replacement strings of a line, compiled.
#[derive(Clone, Debug, Default)]
pub struct Tags(Vec<Tag>);

#[derive(Clone, Debug)]
struct Tag {
    re: regex::bytes::Regex,
    /// The pattern has a position group (`{N…}`) before the tag's own groups.
    braced: bool,
    body: Vec<u8>,
}

impl Tags {
    /// Compiles `rpl`.
    pub fn new(rpl: &[Rpl]) -> Result<Tags, String> {
        let mut tags = Vec::new();
        for r in rpl {
            let tag = String::from_utf8_lossy(&r.tag);
            let pat = |t: &str| {
                if t.contains('(') {
                    t.to_string()
                } else {
                    regex::escape(t)
                }
            };
            let braced = tag.len() >= 2 && tag.starts_with('{') && tag.ends_with('}');
            let pattern = if braced {
                format!(r"^\{{(-?[0-9]+)?(?:{})\}}", pat(&tag[1..tag.len() - 1]))
            } else {
                format!("^(?:{})", pat(&tag))
            };
            let re = regex::bytes::RegexBuilder::new(&pattern)
                .unicode(false)
                .build()
                .map_err(|e| format!("--rpl '{tag}' is not a regular expression: {e}"))?;
            tags.push(Tag {
                re,
                braced,
                body: r.body.clone(),
            });
        }
        Ok(Tags(tags))
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The longest user-defined replacement string at the start of `s` (the first defined of
    /// equally long ones), as the expression it stands for: `$$K` in its body is the text of
    /// the tag's K-th group.
    pub fn at(&self, s: &[u8]) -> Option<Found> {
        let mut best: Option<(&Tag, regex::bytes::Captures<'_>)> = None;
        for t in &self.0 {
            if let Some(c) = t.re.captures(s) {
                let len = c.get(0).map_or(0, |m| m.len());
                if best
                    .as_ref()
                    .is_none_or(|(_, b)| b.get(0).map_or(0, |m| m.len()) < len)
                {
                    best = Some((t, c));
                }
            }
        }
        let (t, c) = best?;
        let first = usize::from(t.braced) + 1;
        let mut expr = Vec::new();
        let mut i = 0;
        while i < t.body.len() {
            if t.body[i..].starts_with(b"$$") && t.body.get(i + 2).is_some_and(u8::is_ascii_digit) {
                let k = usize::from(t.body[i + 2] - b'0');
                expr.extend_from_slice(b"$::frun_c");
                expr.extend_from_slice(k.to_string().as_bytes());
                i += 3;
                continue;
            }
            expr.push(t.body[i]);
            i += 1;
        }
        // The groups' texts, set before the body runs.
        let mut names = Vec::new();
        let mut texts = Vec::new();
        for g in first..c.len() {
            if g > first {
                names.extend_from_slice(b", ");
                texts.extend_from_slice(b", ");
            }
            names.extend_from_slice(format!("$::frun_c{}", g + 1 - first).as_bytes());
            texts.push(b'\'');
            for &b in c.get(g).map_or(&[][..], |m| m.as_bytes()) {
                if b == b'\\' || b == b'\'' {
                    texts.push(b'\\');
                }
                texts.push(b);
            }
            texts.push(b'\'');
        }
        let mut caps = b"local (".to_vec();
        caps.extend_from_slice(&names);
        caps.extend_from_slice(b") = (");
        caps.extend_from_slice(&texts);
        caps.extend_from_slice(b");");
        let (mut position, body) = positional(&expr);
        if t.braced {
            let given = c
                .get(1)
                .and_then(|m| std::str::from_utf8(m.as_bytes()).ok());
            if let Some(p) = given.and_then(|g| g.parse::<i64>().ok()) {
                position = Some(p);
            }
        }
        caps.extend_from_slice(body);
        Some(Found {
            position,
            expr: if c.len() > first { caps } else { body.to_vec() },
            len: c.get(0).map_or(0, |m| m.len()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_and_their_positions_are_read_as_gnu_parallel_reads_them() {
        let f = |s: &str| expression_at(s.as_bytes()).map(|f| (f.position, f.expr, f.len));
        assert_eq!(f("{= s/a/b/ =}x"), Some((None, b" s/a/b/ ".to_vec(), 12)));
        assert_eq!(f("{=2 s/a/b/=}"), Some((Some(2), b" s/a/b/".to_vec(), 12)));
        assert_eq!(f("{=-1 $_=1=}"), Some((Some(-1), b" $_=1".to_vec(), 11)));
        // `{=2s/…/` is no position: the expression starts right after `{=`.
        assert_eq!(f("{=2x=}"), Some((None, b"2x".to_vec(), 6)));
        assert_eq!(f("{==}"), Some((None, Vec::new(), 4)));
        // A `{=` inside before the `=}`: this one is text.
        assert_eq!(f("{= {= =}"), None);
        assert_eq!(f("{=}"), None);
    }

    #[test]
    fn the_longest_user_string_wins_and_its_groups_reach_perl_as_variables() {
        let rpl = |t: &str, b: &str| Rpl {
            tag: t.as_bytes().to_vec(),
            body: b.as_bytes().to_vec(),
        };
        let tags =
            Tags::new(&[rpl("%", ""), rpl("%D", "s:/.*::"), rpl("{r(\\d)}", "$$1")]).unwrap();
        let at = |s: &str| tags.at(s.as_bytes()).map(|f| (f.position, f.expr, f.len));
        assert_eq!(at("%D/x"), Some((None, b"s:/.*::".to_vec(), 2)));
        assert_eq!(at("%x"), Some((None, Vec::new(), 1)));
        assert_eq!(
            at("{2r3}"),
            Some((
                Some(2),
                b"local ($::frun_c1) = ('3');$::frun_c1".to_vec(),
                5
            ))
        );
        assert_eq!(at("{rx}"), None);
    }
}
