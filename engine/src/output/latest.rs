//! `--latest-line` (GNU Parallel's `--ll`): each job has a row of its own on the terminal and
//! that row shows the job's tag and the last whole line it wrote, cut to the terminal's width
//! (a `>` says it was cut), rewritten in place as new lines come. This module only turns "job
//! N's latest line is now X" into the bytes that redraw its row; it reads no pipe and writes
//! nothing itself.
//!
//! Rows are numbered from 1 in the order jobs first show something (by job number with `-k`).
//! The cursor is moved up with the terminal's "cursor up" and down with newlines, and is left
//! below the lowest row drawn. A row is drawn only while it is on the screen: the screen's
//! first row moves down past the rows of jobs that ended, so a long run scrolls.

use std::collections::{BTreeMap, HashMap};

/// The terminal the rows are drawn on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Terminal {
    /// Its height (the last row is where the cursor waits).
    pub rows: u64,
    /// Its width: a row is cut to fit.
    pub columns: usize,
    /// Moves the cursor up one row (empty where there is no terminal to ask, as GNU Parallel
    /// then writes none).
    pub up: Vec<u8>,
}

impl Terminal {
    /// The controlling terminal's size (`LINES` and `COLUMNS` first, as terminfo reads them)
    /// and its cursor-up; without one, 24 by 80 and no cursor movement.
    pub fn detect() -> Terminal {
        let fallback = Terminal {
            rows: 24,
            columns: 80,
            up: Vec::new(),
        };
        use std::os::unix::fs::OpenOptionsExt;
        // O_NOCTTY: looking at the terminal must not make it frun's.
        let Ok(tty) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
            .open("/dev/tty")
        else {
            return fallback;
        };
        // Its size as the kernel has it (console asks with TIOCGWINSZ).
        let asked = tty
            .try_clone()
            .ok()
            .and_then(|read| console::Term::read_write_pair(read, tty).size_checked());
        let env = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|&v| v > 0)
        };
        let (mut rows, mut columns) = asked.map_or((0, 0), |(r, c)| (u64::from(r), usize::from(c)));
        if let Some(r) = env("LINES") {
            rows = r;
        }
        if let Some(c) = env("COLUMNS") {
            columns = c as usize;
        }
        let dumb = std::env::var("TERM").map_or(true, |t| t.is_empty() || t == "dumb");
        Terminal {
            rows: if rows == 0 { 24 } else { rows },
            columns: if columns == 0 { 80 } else { columns },
            up: if dumb { Vec::new() } else { b"\x1b[A".to_vec() },
        }
    }
}

/// What a job's row shows.
#[derive(Clone, Debug, Default)]
struct Row {
    /// The tag with its tab, tabs expanded.
    tag: String,
    colour: Vec<u8>,
    reset: &'static [u8],
    text: String,
}

impl Row {
    /// A row of `tag`, `colour` and `reset` (`look`) and `text`, tabs expanded.
    fn new((tag, colour, reset): (&[u8], &[u8], &'static [u8]), text: &[u8]) -> Row {
        Row {
            tag: untabify(&String::from_utf8_lossy(tag)),
            colour: colour.to_vec(),
            reset,
            text: untabify(&String::from_utf8_lossy(text)),
        }
    }
}

/// The rows drawn so far and where the cursor is.
#[derive(Debug)]
pub struct Screen {
    terminal: Terminal,
    /// When the terminal's size was last asked (None: a size given, not asked); it is asked
    /// again at most once a second, so a resized terminal is followed.
    asked: Option<std::time::Instant>,
    /// Rows are job numbers (`-k`), else handed out in order.
    by_job: bool,
    rows_of: HashMap<u64, u64>,
    next_row: u64,
    /// The row the cursor is on, and the lowest row drawn.
    at: u64,
    lowest: u64,
    /// The screen's first row.
    first: u64,
    /// Ended jobs' rows, drawn once more when the screen moves.
    ended: BTreeMap<u64, Row>,
}

/// Tabs as spaces to the next multiple of 8, each measured where it stands in `s` as given (as
/// GNU Parallel expands them: a second tab's stop does not count the first one's spaces).
pub fn untabify(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        if c == '\t' {
            out.extend(std::iter::repeat_n(' ', 8 - i % 8));
        } else {
            out.push(c);
        }
    }
    out
}

impl Screen {
    /// A screen on `terminal`; with `by_job`, job N (from 0) has row N + 1.
    pub fn new(terminal: Terminal, by_job: bool) -> Screen {
        Screen {
            terminal,
            asked: None,
            by_job,
            rows_of: HashMap::new(),
            next_row: 0,
            at: 1,
            lowest: 1,
            first: 1,
            ended: BTreeMap::new(),
        }
    }

    /// A screen on the controlling terminal ([`Terminal::detect`]), following its size.
    pub fn on_terminal(by_job: bool) -> Screen {
        Screen {
            asked: Some(std::time::Instant::now()),
            ..Screen::new(Terminal::detect(), by_job)
        }
    }

    fn row_of(&mut self, seq: u64) -> u64 {
        if let Some(&r) = self.rows_of.get(&seq) {
            return r;
        }
        let r = if self.by_job {
            seq + 1
        } else {
            self.next_row += 1;
            self.next_row
        };
        self.rows_of.insert(seq, r);
        r
    }

    /// Job `seq`'s row now shows `tag` (with its tab, if any) and `text`, in `colour` (empty:
    /// none) ended by `reset`: appends the bytes that draw it to `out`.
    pub fn show(
        &mut self,
        seq: u64,
        look: (&[u8], &[u8], &'static [u8]),
        text: &[u8],
        out: &mut Vec<u8>,
    ) {
        let row = self.row_of(seq);
        self.draw(row, &Row::new(look, text), out);
    }

    /// Job `seq` ended, its row showing what [`Screen::show`] says: drawn once more, the
    /// screen's first row moved past the rows of jobs that ended, and the ended rows on the
    /// screen drawn again.
    pub fn end(
        &mut self,
        seq: u64,
        look: (&[u8], &[u8], &'static [u8]),
        text: &[u8],
        out: &mut Vec<u8>,
    ) {
        let row = self.row_of(seq);
        let r = Row::new(look, text);
        self.draw(row, &r, out);
        self.ended.insert(row, r);
        while let Some(r) = self.ended.remove(&self.first) {
            self.draw(self.first, &r, out);
            self.first += 1;
        }
        let last = self.first + self.terminal.rows.saturating_sub(1);
        let on_screen: Vec<u64> = self
            .ended
            .range(self.first..last)
            .map(|(&k, _)| k)
            .collect();
        for k in on_screen {
            if let Some(r) = self.ended.remove(&k) {
                self.draw(k, &r, out);
                self.ended.insert(k, r);
            }
        }
    }

    /// Draws `r` on row `row` if the row is on the screen.
    fn draw(&mut self, row: u64, r: &Row, out: &mut Vec<u8>) {
        if let Some(at) = self.asked {
            if at.elapsed() >= std::time::Duration::from_secs(1) {
                self.terminal = Terminal::detect();
                self.asked = Some(std::time::Instant::now());
            }
        }
        let visible = self.first <= row && row < self.first + self.terminal.rows.saturating_sub(1);
        if !visible {
            return;
        }
        let columns = self.terminal.columns;
        let tag_len = r.tag.chars().count();
        let text_len = r.text.chars().count();
        let room = columns as i64 - tag_len as i64;
        // A line with room to spare ends in a space, a cut one in '>'.
        let mut mark = if room - text_len as i64 > 0 { " " } else { ">" };
        let mut shown_tag = tag_len;
        let mut tag_mark = "";
        if tag_len > columns {
            shown_tag = columns.saturating_sub(1);
            tag_mark = ">";
            mark = "";
        }
        let shown_text = (room - 1).max(0) as usize;
        self.lowest = self.lowest.max(row);
        for _ in row..self.at {
            out.extend_from_slice(&self.terminal.up);
        }
        for _ in self.at..row {
            out.push(b'\n');
        }
        out.push(b'\r');
        out.extend(r.tag.chars().take(shown_tag).collect::<String>().bytes());
        out.extend_from_slice(tag_mark.as_bytes());
        out.extend_from_slice(&r.colour);
        out.extend(r.text.chars().take(shown_text).collect::<String>().bytes());
        out.extend_from_slice(mark.as_bytes());
        out.extend_from_slice(if r.colour.is_empty() { b"" } else { r.reset });
        for _ in row..=self.lowest {
            out.push(b'\n');
        }
        self.at = self.lowest + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(rows: u64, columns: usize, by_job: bool) -> Screen {
        Screen::new(
            Terminal {
                rows,
                columns,
                up: b"^".to_vec(),
            },
            by_job,
        )
    }

    const PLAIN: &[u8] = b"";

    #[test]
    fn tabs_stop_at_multiples_of_eight_where_they_stand() {
        assert_eq!(untabify("01x\t"), "01x     ");
        assert_eq!(untabify("a\tb\tc"), "a       b     c");
        assert_eq!(untabify("\t"), "        ");
    }

    #[test]
    fn a_row_is_cut_to_the_width_with_a_mark() {
        let mut s = screen(24, 30, false);
        let mut out = Vec::new();
        let long = b"0100000 1 2 3 4 5 6 7 8 9 10 11 12";
        s.show(0, (b"01x\t", PLAIN, b""), long, &mut out);
        assert_eq!(out, b"\r01x     0100000 1 2 3 4 5 6 7>\n");
        // A tag wider than the terminal is cut instead, and the line is not shown.
        let mut s = screen(24, 30, false);
        out.clear();
        let tag = format!("22{}\t", "x".repeat(22));
        s.show(0, (tag.as_bytes(), PLAIN, b""), long, &mut out);
        assert_eq!(out, b"\r22xxxxxxxxxxxxxxxxxxxxxx     >\n");
        // A short one ends in a space.
        let mut s = screen(24, 30, false);
        out.clear();
        s.show(0, (PLAIN, PLAIN, b""), b"hi", &mut out);
        assert_eq!(out, b"\rhi \n");
    }

    #[test]
    fn rows_are_redrawn_in_place() {
        let mut s = screen(24, 80, false);
        let mut out = Vec::new();
        s.show(7, (PLAIN, PLAIN, b""), b"a", &mut out);
        s.show(9, (PLAIN, PLAIN, b""), b"b", &mut out);
        s.show(7, (PLAIN, PLAIN, b""), b"c", &mut out);
        // Row 1, row 2 below it, then up two and row 1 again, the cursor back below row 2.
        assert_eq!(out, b"\ra \n\rb \n^^\rc \n\n");
    }

    #[test]
    fn colour_surrounds_the_line_and_ended_rows_scroll_off() {
        let mut s = screen(3, 80, true);
        let mut out = Vec::new();
        s.show(0, (PLAIN, b"<c>", b"</c>"), b"x", &mut out);
        assert_eq!(out, b"\r<c>x </c>\n");
        out.clear();
        // Only two rows fit (the last is the cursor's): job 2's row 3 is not drawn until job
        // 0 ends and the screen moves down.
        s.show(2, (PLAIN, PLAIN, b""), b"z", &mut out);
        assert!(out.is_empty());
        s.end(0, (PLAIN, PLAIN, b""), b"x", &mut out);
        // Drawn as it ended, then once more as the screen's first row moves past it.
        assert_eq!(out, b"^\rx \n^\rx \n");
    }
}
