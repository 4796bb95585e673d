//! The worker loop's decisions — retry, split, give up, halt, stop — driven by a scripted run
//! and a runner that starts nothing, checked against what each record should end as.

use std::cell::RefCell;
use std::collections::VecDeque;

use super::*;
use crate::dispatch::ledger::HaltCount;

/// A run held in memory: its input (records `r0\n`, `r1\n`, …), the batches it hands out
/// in order, and what reached the emitter.
struct Run {
    input: Vec<u8>,
    queue: RefCell<VecDeque<Batch>>,
    stop: Stop,
    ledger: Ledger,
    rules: Rules,
    reader_gone: bool,
    completed: RefCell<Vec<Completed>>,
}

/// One batch as the emitter got it.
#[derive(Debug)]
struct Completed {
    seq: u64,
    output: String,
    done: Vec<(u64, u64)>,
    failed: bool,
}

impl Run {
    /// `records` records in batches of `per_batch`.
    fn new(records: usize, per_batch: usize, rules: Rules) -> Run {
        let input: Vec<u8> = (0..records)
            .flat_map(|i| format!("r{i}\n").into_bytes())
            .collect();
        let mut queue = VecDeque::new();
        let (mut start, mut seq) = (0usize, 0u64);
        for chunk in (0..records).collect::<Vec<_>>().chunks(per_batch) {
            let len: usize = chunk.iter().map(|i| format!("r{i}\n").len()).sum();
            queue.push_back(Batch {
                seq,
                start: start as u64,
                end: (start + len) as u64,
                records: chunk.len() as u64,
            });
            start += len;
            seq += 1;
        }
        Run {
            input,
            queue: RefCell::new(queue),
            stop: Stop::new().unwrap(),
            ledger: Ledger::default(),
            rules,
            reader_gone: false,
            completed: RefCell::new(Vec::new()),
        }
    }

    /// Runs the worker loop over every batch with `runner`.
    fn serve(&self, runner: &mut Mock) {
        let capture = Arc::clone(&runner.capture);
        Worker::new(self, runner, Some(&capture)).serve().unwrap();
    }

    /// The sequence numbers that reached the emitter, in the order they did.
    fn seqs(&self) -> Vec<u64> {
        self.completed.borrow().iter().map(|c| c.seq).collect()
    }

    /// Everything emitted, in input order.
    fn output(&self) -> String {
        let mut c = self.completed.borrow_mut();
        c.sort_by_key(|c| c.seq);
        c.iter().map(|c| c.output.as_str()).collect()
    }

    /// The input bytes recorded done, in input order.
    fn done_bytes(&self) -> String {
        let mut c = self.completed.borrow_mut();
        c.sort_by_key(|c| c.seq);
        let mut all: Vec<(u64, u64)> = c.iter().flat_map(|c| c.done.clone()).collect();
        all.sort();
        all.iter()
            .map(|&(s, e)| std::str::from_utf8(&self.input[s as usize..e as usize]).unwrap())
            .collect()
    }
}

impl Site for Run {
    fn claim(&self, _finished: bool) -> Option<Batch> {
        self.queue.borrow_mut().pop_front()
    }
    fn bytes(&self, start: u64, end: u64) -> &[u8] {
        &self.input[start as usize..end as usize]
    }
    fn command(&self, _bytes: &[u8], _seq: u64, _attempt: u64, _argv: &mut Argv) {}
    fn intact(&self, _end: u64) -> bool {
        true
    }
    fn shrank(&self) -> bool {
        false
    }
    fn input_shrank(&self) {
        panic!("this input never shrinks");
    }
    fn release(&self, _seq: u64) {}
    fn complete(&self, finished: Finished) -> Result<(), EmitError> {
        let Finished {
            seq,
            piece,
            done,
            failed,
            log: _,
        } = finished;
        // Read now: the worker may empty its capture file once the batch is handed over.
        let output = piece.map_or_else(String::new, |p| {
            let all = std::fs::read(format!("/proc/self/fd/{}", p.capture.fd())).unwrap();
            String::from_utf8(all[p.off as usize..(p.off + p.len) as usize].to_vec()).unwrap()
        });
        let done = match done {
            DoneSet::None => Vec::new(),
            DoneSet::One(s, e) => vec![(s, e)],
            DoneSet::Many(v) => v.into_vec(),
        };
        self.completed.borrow_mut().push(Completed {
            seq,
            output,
            done,
            failed,
        });
        Ok(())
    }
    fn reader_gone(&self) -> bool {
        self.reader_gone
    }
    fn timed(&self) -> bool {
        false
    }
    fn note_busy(&self, _busy: Duration) {}
    fn stop(&self) -> &Stop {
        &self.stop
    }
    fn ledger(&self) -> &Ledger {
        &self.ledger
    }
    fn rules(&self) -> Rules {
        self.rules
    }
}

/// How an attempt at a part ends: given the part, its records' numbers and how many
/// attempts that same part had before.
type Script<'a> = Box<dyn FnMut(&Batch, &[usize], usize) -> Ending + 'a>;

/// A runner that starts nothing. Like a command, every attempt writes one line per record
/// to the capture — `r3 ok`, `r3 exit 137` — before it ends as the script says.
struct Mock<'a> {
    input: Vec<u8>,
    capture: Arc<Capture>,
    /// Every attempt's part, in order.
    log: Vec<Batch>,
    script: Script<'a>,
}

impl<'a> Mock<'a> {
    fn new(run: &Run, script: impl FnMut(&Batch, &[usize], usize) -> Ending + 'a) -> Self {
        Mock {
            input: run.input.clone(),
            capture: Capture::new().unwrap(),
            log: Vec::new(),
            script: Box::new(script),
        }
    }

    /// How many attempts ran a part holding exactly these records.
    fn attempts_at(&self, records: &[usize]) -> usize {
        self.log
            .iter()
            .filter(|p| self.records(p) == records)
            .count()
    }

    fn records(&self, part: &Batch) -> Vec<usize> {
        self.input[part.start as usize..part.end as usize]
            .split(|&b| b == b'\n')
            .filter(|r| !r.is_empty())
            .map(|r| std::str::from_utf8(&r[1..]).unwrap().parse().unwrap())
            .collect()
    }
}

impl Runner for Mock<'_> {
    fn run(&mut self, attempt: &Attempt<'_>) -> io::Result<Ending> {
        let part = attempt.part;
        let before = self.log.iter().filter(|p| **p == part).count();
        self.log.push(part);
        let records = self.records(&part);
        let ending = (self.script)(&part, &records, before);
        let label = match &ending {
            Ending::Ran(Outcome::Ok) => "ok".to_string(),
            Ending::Ran(Outcome::Exited(c)) => format!("exit {c}"),
            Ending::Ran(Outcome::Signaled(s)) => format!("signal {s}"),
            Ending::Ran(o) => format!("{o:?}"),
            Ending::Stop(_) => return Ok(ending),
        };
        for r in records {
            self.capture.append(format!("r{r} {label}\n").as_bytes())?;
        }
        Ok(ending)
    }
}

fn rules(limit: Option<u64>, splittable: bool, halt: Option<Halt>) -> Rules {
    Rules {
        retry: RetryPolicy {
            limit,
            nonzero: false,
            crashes: true,
            last_stands: false,
        },
        halt,
        halt_names_jobs: false,
        splittable,
        delimiter: b'\n',
        abort: false,
    }
}

/// `r{i} {label}` lines for these records.
fn lines(records: impl IntoIterator<Item = usize>, label: &str) -> String {
    records
        .into_iter()
        .map(|i| format!("r{i} {label}\n"))
        .collect()
}

/// The input text of these records.
fn text(records: impl IntoIterator<Item = usize>) -> String {
    records.into_iter().map(|i| format!("r{i}\n")).collect()
}

const OK: Ending = Ending::Ran(Outcome::Ok);

#[test]
fn a_batch_that_fails_twice_runs_again_and_only_its_last_output_appears() {
    let run = Run::new(6, 1, rules(Some(3), false, None));
    let mut mock = Mock::new(&run, |part, _, before| match (part.seq, before) {
        (3, 0 | 1) => Ending::Ran(Outcome::Exited(137)),
        _ => OK,
    });
    run.serve(&mut mock);

    let mut seqs = run.seqs();
    seqs.sort();
    assert_eq!(seqs, [0, 1, 2, 3, 4, 5], "each batch is handed over once");
    assert_eq!(run.output(), lines(0..6, "ok"));
    assert_eq!(run.done_bytes(), text(0..6));
    assert_eq!(mock.attempts_at(&[3]), 3);
    assert_eq!(mock.log.len(), 8);
    assert_eq!(run.ledger.retries(), 2);
    assert_eq!(run.ledger.given_up_batches(), 0);
    assert_eq!(run.ledger.failed_batches(), 0);
    assert_eq!(run.ledger.records(), 6);
    assert!(!run.stop.is_stopped());
}

#[test]
fn a_failing_batch_of_several_records_is_split_until_the_bad_record_is_alone() {
    let run = Run::new(8, 8, rules(Some(1), true, None));
    let mut mock = Mock::new(&run, |_, records, _| {
        if records.contains(&5) {
            Ending::Ran(Outcome::Signaled(libc::SIGSEGV))
        } else {
            OK
        }
    });
    run.serve(&mut mock);

    let good = || (0..8).filter(|&i| i != 5);
    let c = run.completed.borrow();
    assert_eq!(c.len(), 1, "the batch is handed over once, whole");
    assert_eq!(
        c[0].output,
        lines(good(), "ok"),
        "good records once, in order"
    );
    assert!(!c[0].failed);
    drop(c);
    assert_eq!(
        run.done_bytes(),
        text(good()),
        "all but the bad record are done"
    );
    // The bad record alone: its first attempt and its one retry.
    assert_eq!(mock.attempts_at(&[5]), 2);
    // A part without the bad record ran once, and it succeeded.
    for part in &mock.log {
        let records = mock.records(part);
        if !records.contains(&5) {
            assert_eq!(mock.attempts_at(&records), 1, "{records:?}");
        }
    }
    assert_eq!(run.ledger.given_up_batches(), 1);
    assert_eq!(run.ledger.failed_batches(), 0);
    // Only the records that ran count, each once (the bad one was given up).
    assert_eq!(run.ledger.records(), 7);
    assert!(!run.stop.is_stopped());
}

#[test]
fn a_batch_out_of_retries_is_given_up_and_the_others_run() {
    // Not splittable (as with -L): the batch of two records is retried whole.
    let run = Run::new(8, 2, rules(Some(2), false, None));
    let mut mock = Mock::new(&run, |part, _, _| match part.seq {
        1 => Ending::Ran(Outcome::Exited(254)),
        _ => OK,
    });
    run.serve(&mut mock);

    let mut seqs = run.seqs();
    seqs.sort();
    assert_eq!(seqs, [0, 1, 2, 3]);
    let given_up = run.completed.borrow().iter().find(|c| c.seq == 1).map(|c| {
        assert!(c.done.is_empty(), "nothing of it is done");
        c.output.clone()
    });
    assert_eq!(
        given_up.as_deref(),
        Some(""),
        "no output of its attempts appears"
    );
    assert_eq!(mock.attempts_at(&[2, 3]), 3);
    assert_eq!(run.output(), lines([0, 1, 4, 5, 6, 7], "ok"));
    assert_eq!(run.done_bytes(), text([0, 1, 4, 5, 6, 7]));
    assert_eq!(run.ledger.given_up_batches(), 1);
    assert_eq!(run.ledger.retries(), 2);
    assert_eq!(run.ledger.records(), 6);
    assert!(!run.stop.is_stopped());
}

#[test]
fn halt_stops_the_run_after_the_batch_that_reaches_it() {
    let halt = Halt {
        now: true,
        on: crate::dispatch::ledger::HaltOn::Fail,
        count: HaltCount::Batches(1),
    };
    let run = Run::new(6, 1, rules(Some(3), false, Some(halt)));
    let mut mock = Mock::new(&run, |part, _, _| match part.seq {
        2 => Ending::Ran(Outcome::Exited(1)),
        _ => OK,
    });
    run.serve(&mut mock);

    assert_eq!(run.seqs(), [0, 1, 2], "nothing after the failing batch");
    assert!(mock.log.iter().all(|p| p.seq <= 2));
    // A failure that is not retried stands, output and all.
    assert!(run.completed.borrow()[2].failed);
    assert_eq!(
        run.output(),
        lines(0..2, "ok") + &lines([2], "exit 1"),
        "the failed batch's output stands"
    );
    // It names the job that reached it, a failed one.
    assert!(
        matches!(
            run.stop.reason(),
            Some(StopReason::Halt {
                now: true,
                on: crate::dispatch::ledger::HaltOn::Fail,
                failed: 1,
                job: Some((true, _)),
            })
        ),
        "{:?}",
        run.stop.reason()
    );
    assert_eq!(run.ledger.failed_batches(), 1);
}

#[test]
fn a_batch_killed_on_every_attempt_is_given_up_and_the_run_goes_on() {
    let run = Run::new(4, 1, rules(Some(2), false, None));
    let mut mock = Mock::new(&run, |part, _, _| match part.seq {
        1 => Ending::Ran(Outcome::Signaled(libc::SIGKILL)),
        _ => OK,
    });
    run.serve(&mut mock);
    // Batch 1 had its 3 attempts and was given up; the others ran, in order.
    assert_eq!(run.seqs(), [0, 1, 2, 3]);
    assert_eq!(mock.log.len(), 6);
    assert_eq!(run.ledger.given_up_batches(), 1);
    assert!(!run.stop.is_stopped());
}

#[test]
fn a_stop_during_an_attempt_leaves_the_batch_undone() {
    let run = Run::new(4, 1, rules(Some(3), false, None));
    let stop = &run.stop;
    let mut mock = Mock::new(&run, |part, _, _| {
        if part.seq == 1 {
            stop.request(StopReason::Signal(libc::SIGTERM));
        }
        OK
    });
    run.serve(&mut mock);

    assert_eq!(run.seqs(), [0]);
    assert_eq!(mock.log.len(), 2);
    assert_eq!(run.ledger.batches(), 1);
}

#[test]
fn a_draining_stop_lets_the_running_batch_count_but_not_retry() {
    // `--halt soon` (reached by another worker) during batch 1, which succeeds; during
    // batch 2 of another run, which fails: it is given up rather than run again.
    for (fails, output) in [(false, lines([0, 1], "ok")), (true, lines([0], "ok"))] {
        let run = Run::new(4, 1, rules(None, false, None));
        let stop = &run.stop;
        let mut mock = Mock::new(&run, |part, _, _| {
            if part.seq == 1 {
                stop.request(StopReason::Halt {
                    now: false,
                    on: crate::dispatch::ledger::HaltOn::Fail,
                    failed: 0,
                    job: None,
                });
                if fails {
                    return Ending::Ran(Outcome::Exited(137));
                }
            }
            OK
        });
        run.serve(&mut mock);

        assert_eq!(run.seqs(), [0, 1], "batch 1 counts; batch 2 never runs");
        assert_eq!(mock.log.len(), 2, "no retry");
        assert_eq!(run.output(), output);
        assert_eq!(run.ledger.given_up_batches(), u64::from(fails));
    }
}

#[test]
fn a_runner_that_asks_to_stop_ends_the_run_with_its_reason() {
    let run = Run::new(4, 1, rules(Some(3), false, None));
    let mut mock = Mock::new(&run, |part, _, _| match part.seq {
        2 => Ending::Stop(StopReason::Setup(3)),
        _ => OK,
    });
    run.serve(&mut mock);

    assert_eq!(run.seqs(), [0, 1]);
    assert_eq!(mock.log.len(), 3, "nothing runs after it");
    assert_eq!(run.stop.reason(), Some(StopReason::Setup(3)));
    assert_eq!(run.output(), lines(0..2, "ok"));
}

#[test]
fn sigpipe_stops_the_run_only_once_the_reader_is_gone() {
    for gone in [false, true] {
        let mut run = Run::new(3, 1, rules(Some(3), false, None));
        run.reader_gone = gone;
        let mut mock = Mock::new(&run, |part, _, before| match (part.seq, before) {
            (1, 0) => Ending::Ran(Outcome::Signaled(libc::SIGPIPE)),
            _ => OK,
        });
        run.serve(&mut mock);

        if gone {
            assert_eq!(run.seqs(), [0]);
            assert_eq!(run.stop.reason(), Some(StopReason::ReaderGone));
        } else {
            // An ordinary crash: retried, and its partial output dropped.
            assert_eq!(run.seqs(), [0, 1, 2]);
            assert_eq!(run.output(), lines(0..3, "ok"));
            assert_eq!(run.ledger.retries(), 1);
        }
    }
}

#[test]
fn split_points_are_record_boundaries_near_the_middle() {
    assert_eq!(split_point(b"a\n", b'\n'), None);
    assert_eq!(split_point(b"abc", b'\n'), None);
    assert_eq!(split_point(b"", b'\n'), None);
    assert_eq!(split_point(b"a\nb\n", b'\n'), Some(2));
    assert_eq!(split_point(b"a\nb", b'\n'), Some(2));
    assert_eq!(split_point(b"1\n2\n3\n4\n", b'\n'), Some(4));
    assert_eq!(split_point(b"long record\nx\n", b'\n'), Some(12));
}
