//! GNU xargs' input rules: reads the input as xargs does (blanks and newlines separate, quotes
//! and backslashes quote, an end-of-file string; or one delimiter byte) and cuts it into the
//! argument lists of its commands (`-n`, `-L`, `-I`, `-s`, `-x`, `-r`), written as packed
//! records (see [`crate::exec::command::argv::pack_arg`]) that the engine runs one per command.
//!
//! It only translates bytes: it runs nothing and knows nothing of the engine.

use std::io::{self, Read, Write};

use crate::exec::command::argv::{pack_arg, pack_end};
use crate::input::used::Used;

/// How items are separated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Separator {
    /// The default: blanks and newlines separate; `'`, `"` and `\` quote.
    Quoted,
    /// `-0` / `-d C`: every byte but this one is data.
    Byte(u8),
}

/// What one command gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grouping {
    /// As many items as fit, at most this many (`-n`).
    Args(Option<u64>),
    /// The items of this many non-blank lines (`-L`); a trailing blank continues a line.
    Lines(u64),
    /// One line (or item) per command, its leading blanks stripped (`-I`).
    Replace,
}

/// How the input becomes commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    /// How the input splits into items (`-0`, `-d`, or blanks and quotes).
    pub separator: Separator,
    /// `-E STR`: an item equal to it ends the input (default mode only).
    pub eof: Option<Vec<u8>>,
    /// How many items or lines one command gets (`-n`, `-L`, `-I`).
    pub grouping: Grouping,
    /// `-s`: the most bytes a command line may take (each word and its NUL).
    pub max_chars: u64,
    /// The bytes the command and its initial arguments take (with `-I`, without the replace
    /// strings, which each item fills).
    pub initial: u64,
    /// `-I`: how many replace strings the initial arguments hold (xargs replaces none in the
    /// command's name).
    pub replaced: u64,
    /// `-x`: a command that cannot take all its `-n`/`-L` items is an error.
    pub exit_if_too_long: bool,
    /// No `-r`: empty input still runs the command once.
    pub run_if_empty: bool,
}

/// Reads all of `input` and writes the commands to `out`. An error (an unmatched quote, an
/// item too long) is xargs' message: the commands before it are written first.
pub fn translate(input: impl Read, out: impl Write, rules: &Rules) -> Result<(), String> {
    translate_counting(input, out, rules, &mut 0, None)
}

/// [`translate`] from a file (standard input), read through `used`, which learns where each
/// command's input ended: when it stops before the input's end (at the end-of-file string, or
/// an error), the file's offset is set back to just after the last byte it used (the
/// end-of-file string's terminator, the byte that was wrong), so that what follows stays for
/// the next reader of a seekable input, as POSIX requires of xargs. A pipe cannot go back:
/// what was read ahead of that point is gone, as with xargs.
pub fn translate_file(used: &Used, out: impl Write, rules: &Rules) -> Result<(), String> {
    let mut unread = 0u64;
    let done = translate_counting(used.reader(), out, rules, &mut unread, Some(used));
    used.unread(unread);
    done
}

/// [`translate`], setting `unread` to the bytes read past the point where it stopped.
fn translate_counting(
    input: impl Read,
    out: impl Write,
    rules: &Rules,
    unread: &mut u64,
    used: Option<&Used>,
) -> Result<(), String> {
    let mut cutter = Cutter {
        rules,
        out: io::BufWriter::with_capacity(256 << 10, out),
        pending: Vec::new(),
        args: 0,
        lines: 0,
        size: rules.initial,
        commands: 0,
        used,
        base: 0,
        at: 0,
    };
    let read = match rules.separator {
        Separator::Quoted => read_quoted(input, &mut cutter, unread),
        Separator::Byte(b) => read_delimited(input, b, &mut cutter, unread),
    };
    // What was cut before an error still runs (as xargs runs it), but with -L not the items
    // of a line not yet complete, and with -x not the command still being filled.
    if read.is_err() && (matches!(rules.grouping, Grouping::Lines(_)) || rules.exit_if_too_long) {
        cutter.pending.clear();
        cutter.args = 0;
        cutter.lines = 0;
    }
    let flushed = cutter.finish(read.is_ok());
    read.and(flushed)
}

fn io_error(e: &io::Error) -> String {
    crate::sys::errors::os_message(e)
}

/// Builds commands from items and lines.
struct Cutter<'a, W: Write> {
    rules: &'a Rules,
    out: io::BufWriter<W>,
    /// The packed items of the command being built.
    pending: Vec<u8>,
    args: u64,
    lines: u64,
    /// Its command line's bytes so far.
    size: u64,
    commands: u64,
    /// Learns where each command's input ended (standard input).
    used: Option<&'a Used>,
    /// The input offset of the buffer being read (from where reading began).
    base: u64,
    /// The input offset the reader has used up to.
    at: u64,
}

impl<W: Write> Cutter<'_, W> {
    /// One item of the input; `line_end` when it ends a line (for `-L`).
    fn item(&mut self, item: &[u8]) -> Result<(), String> {
        if self.rules.grouping == Grouping::Replace {
            // The item fills each replace string of the one command it makes.
            if self.rules.initial + self.rules.replaced * item.len() as u64 > self.rules.max_chars {
                return Err("argument list too long".into());
            }
            pack_arg(item, &mut self.pending);
            self.args += 1;
            return self.flush();
        }
        let cost = item.len() as u64 + 1;
        if self.args > 0 && self.size + cost > self.rules.max_chars {
            if self.rules.exit_if_too_long && self.rules.grouping != Grouping::Args(None) {
                // The command that cannot take its items never runs.
                self.pending.clear();
                self.args = 0;
                self.lines = 0;
                return Err("argument list too long".into());
            }
            self.flush()?;
        }
        if self.rules.initial + cost > self.rules.max_chars {
            return Err("argument line too long".into());
        }
        pack_arg(item, &mut self.pending);
        self.args += 1;
        self.size += cost;
        match self.rules.grouping {
            Grouping::Args(Some(n)) if self.args >= n => self.flush(),
            _ => Ok(()),
        }
    }

    /// A line with items in it ended (`-L`).
    fn line(&mut self) -> Result<(), String> {
        if let Grouping::Lines(n) = self.rules.grouping {
            self.lines += 1;
            if self.lines >= n {
                return self.flush();
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        if self.args == 0 && self.lines == 0 {
            return Ok(());
        }
        pack_end(&mut self.pending);
        if let Some(u) = self.used {
            if !u.has_room() {
                // The run must see the commands it waits for before it starts them.
                self.out.flush().map_err(|e| io_error(&e))?;
                u.wait_room();
            }
            u.command_ended(self.at);
        }
        self.out
            .write_all(&self.pending)
            .map_err(|e| io_error(&e))?;
        self.pending.clear();
        self.args = 0;
        self.lines = 0;
        self.size = self.rules.initial;
        self.commands += 1;
        Ok(())
    }

    /// The input ended (`clean`: without an error): the last command, or the one run on empty
    /// input.
    fn finish(&mut self, clean: bool) -> Result<(), String> {
        self.flush()?;
        if clean
            && self.commands == 0
            && self.rules.run_if_empty
            && self.rules.grouping != Grouping::Replace
        {
            pack_end(&mut self.pending);
            if let Some(u) = self.used {
                u.command_ended(self.at);
            }
            self.out
                .write_all(&self.pending)
                .map_err(|e| io_error(&e))?;
        }
        self.out.flush().map_err(|e| io_error(&e))
    }
}

/// Where the default-mode reader stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between items.
    Space,
    /// Inside an unquoted item.
    Word,
    /// Inside quotes (the quote byte).
    Quote(u8),
    /// After a backslash.
    Escape,
}

/// Byte classes of the default mode, for the table lookup in the hot loop.
const PLAIN: u8 = 0;
const BLANK: u8 = 1;
const NEWLINE: u8 = 2;
const SPECIAL: u8 = 3;
/// `\v`, `\f`, `\r`: skipped between items (xargs' `isspace`), data inside one (they are not
/// `isblank`, so they never end an item).
const SPACE: u8 = 4;

const CLASSES: [u8; 256] = {
    let mut t = [PLAIN; 256];
    t[b' ' as usize] = BLANK;
    t[b'\t' as usize] = BLANK;
    t[b'\n' as usize] = NEWLINE;
    t[0x0b] = SPACE;
    t[0x0c] = SPACE;
    t[b'\r' as usize] = SPACE;
    t[b'\'' as usize] = SPECIAL;
    t[b'"' as usize] = SPECIAL;
    t[b'\\' as usize] = SPECIAL;
    t[0] = SPECIAL;
    t
};

/// The default mode's reader: its state across buffers.
struct Quoted {
    state: State,
    item: Vec<u8>,
    /// A NUL byte cut the item (the rest of it is dropped, as exec would).
    cut: bool,
    warned_nul: bool,
    /// The last byte outside quotes was a blank (a newline after it continues the line).
    after_blank: bool,
    /// The item's last byte is a blank escaped with a backslash: xargs counts it as a trailing
    /// blank too (a quoted one it does not).
    escaped_blank: bool,
    /// The current line has items.
    line_has_items: bool,
    /// The current physical line has items: a blank or empty line neither counts for `-L` nor
    /// ends a line that a trailing blank continued.
    phys_items: bool,
    /// `-I`: leading blanks of a line are dropped, other blanks are data.
    replace: bool,
    ended: bool,
    /// Where in the last buffer it stopped (at the end-of-file string or an error).
    stopped: usize,
}

impl Quoted {
    fn push(&mut self, b: u8) {
        self.escaped_blank = false;
        if !self.cut {
            self.item.push(b);
        }
    }

    fn nul(&mut self) {
        if !self.warned_nul {
            say!(
                "WARNING: a NUL character occurred in the input.  It cannot be passed \
                 through in the argument list.  Did you mean to use the --null option?"
            );
            self.warned_nul = true;
        }
        self.cut = true;
    }

    /// Ends the current item; false when it was the end-of-file string.
    fn end_item<W: Write>(&mut self, rules: &Rules, c: &mut Cutter<'_, W>) -> Result<bool, String> {
        if rules.eof.as_deref() == Some(self.item.as_slice()) {
            self.ended = true;
            return Ok(false);
        }
        c.item(&self.item)?;
        self.item.clear();
        self.cut = false;
        self.line_has_items = true;
        self.phys_items = true;
        Ok(true)
    }

    fn end_line<W: Write>(&mut self, c: &mut Cutter<'_, W>) -> Result<(), String> {
        if self.line_has_items && std::mem::take(&mut self.phys_items) && !self.after_blank {
            self.line_has_items = false;
            c.line()?;
        }
        Ok(())
    }

    /// Reads one buffer.
    fn feed<W: Write>(
        &mut self,
        buf: &[u8],
        rules: &Rules,
        c: &mut Cutter<'_, W>,
    ) -> Result<(), String> {
        let mut i = 0;
        while i < buf.len() && !self.ended {
            let b = buf[i];
            i += 1;
            match self.state {
                State::Word if CLASSES[b as usize] == PLAIN => {
                    // The common case: a run of plain bytes.
                    let run = buf[i..]
                        .iter()
                        .position(|&x| CLASSES[x as usize] != PLAIN)
                        .unwrap_or(buf.len() - i);
                    self.push(b);
                    if !self.cut {
                        self.item.extend_from_slice(&buf[i..i + run]);
                    }
                    i += run;
                }
                State::Space | State::Word => {
                    c.at = c.base + i as u64;
                    if let Err(e) = self.outside(b, rules, c) {
                        self.stopped = i;
                        return Err(e);
                    }
                }
                State::Quote(q) => {
                    if b == q {
                        self.state = State::Word;
                        self.escaped_blank = false;
                    } else if b == b'\n' {
                        self.stopped = i;
                        return Err(format!(
                            "unmatched {} quote; by default quotes are special to xargs unless \
                             you use the -0 option",
                            if q == b'\'' { "single" } else { "double" }
                        ));
                    } else if b == 0 {
                        self.nul();
                    } else {
                        self.push(b);
                    }
                }
                State::Escape => {
                    if b == 0 {
                        self.nul();
                    } else {
                        self.push(b);
                        self.escaped_blank = CLASSES[b as usize] == BLANK;
                    }
                    self.state = State::Word;
                }
            }
        }
        self.stopped = i;
        Ok(())
    }

    /// A byte outside quotes, not inside a run of plain bytes.
    fn outside<W: Write>(
        &mut self,
        b: u8,
        rules: &Rules,
        c: &mut Cutter<'_, W>,
    ) -> Result<(), String> {
        let in_word = self.state == State::Word;
        match CLASSES[b as usize] {
            NEWLINE => {
                if in_word || (self.replace && !self.item.is_empty()) {
                    self.after_blank = std::mem::take(&mut self.escaped_blank) && !self.replace;
                    if !self.end_item(rules, c)? {
                        return Ok(());
                    }
                }
                self.end_line(c)?;
                self.after_blank = false;
                self.state = State::Space;
            }
            BLANK if self.replace => {
                if in_word {
                    self.push(b);
                }
                self.after_blank = true;
            }
            // Between items it is skipped, as a blank is, but it ends nothing.
            SPACE if !in_word => {}
            BLANK => {
                if in_word && !self.end_item(rules, c)? {
                    return Ok(());
                }
                self.after_blank = true;
                self.state = State::Space;
            }
            _ => {
                // xargs looks at the byte before the newline: a quote or a backslash after an
                // escaped blank means the line does not end in a blank.
                self.after_blank = false;
                self.escaped_blank = false;
                self.state = State::Word;
                match b {
                    b'\'' | b'"' => self.state = State::Quote(b),
                    b'\\' => self.state = State::Escape,
                    0 => self.nul(),
                    _ => self.push(b),
                }
            }
        }
        Ok(())
    }
}

fn read_quoted<W: Write>(
    mut input: impl Read,
    c: &mut Cutter<'_, W>,
    unread: &mut u64,
) -> Result<(), String> {
    let rules = c.rules;
    let mut q = Quoted {
        state: State::Space,
        item: Vec::new(),
        cut: false,
        warned_nul: false,
        after_blank: false,
        escaped_blank: false,
        line_has_items: false,
        phys_items: false,
        replace: rules.grouping == Grouping::Replace,
        ended: false,
        stopped: 0,
    };
    let mut buf = vec![0u8; 128 << 10];
    while !q.ended {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("cannot read the input: {}", io_error(&e))),
        };
        let fed = q.feed(&buf[..n], rules, c);
        *unread = (n - q.stopped) as u64;
        c.base += n as u64;
        c.at = c.base - *unread;
        fed?;
    }
    if q.ended {
        return Ok(());
    }
    // As xargs: an item with no bytes yet at the end of the input is no item, even inside
    // quotes (`''` or a lone `'` at the very end are dropped, with no error).
    if q.item.is_empty() && !q.cut {
        q.after_blank = false;
        return q.end_line(c);
    }
    match q.state {
        State::Quote(quote) => Err(format!(
            "unmatched {} quote; by default quotes are special to xargs unless you use the -0 \
             option",
            if quote == b'\'' { "single" } else { "double" }
        )),
        State::Word | State::Escape | State::Space => {
            if q.end_item(rules, c)? {
                q.after_blank = false;
                q.end_line(c)?;
            }
            Ok(())
        }
    }
}

/// `-0` / `-d C`: every item ends at the delimiter (or the input's end); each is a line too.
fn read_delimited<W: Write>(
    mut input: impl Read,
    delimiter: u8,
    c: &mut Cutter<'_, W>,
    unread: &mut u64,
) -> Result<(), String> {
    let mut buf = vec![0u8; 256 << 10];
    let mut item: Vec<u8> = Vec::new();
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("cannot read the input: {}", io_error(&e))),
        };
        let mut start = 0;
        for end in memchr::memchr_iter(delimiter, &buf[..n]) {
            let piece = &buf[start..end];
            c.at = c.base + end as u64 + 1;
            let done = if item.is_empty() {
                delimited_item(piece, c)
            } else {
                item.extend_from_slice(piece);
                delimited_item(&item, c)
            };
            item.clear();
            start = end + 1;
            if done.is_err() {
                *unread = (n - start) as u64;
                return done;
            }
        }
        item.extend_from_slice(&buf[start..n]);
        c.base += n as u64;
    }
    c.at = c.base;
    if !item.is_empty() {
        delimited_item(&item, c)?;
    }
    Ok(())
}

fn delimited_item<W: Write>(item: &[u8], c: &mut Cutter<'_, W>) -> Result<(), String> {
    // A NUL inside an item ends it as an argument (exec takes C strings).
    let item = match memchr::memchr(0, item) {
        Some(i) => &item[..i],
        None => item,
    };
    c.item(item)?;
    c.line()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::command::argv::unpack_commands;

    fn rules(grouping: Grouping) -> Rules {
        Rules {
            separator: Separator::Quoted,
            eof: None,
            grouping,
            max_chars: 1 << 17,
            initial: 5,
            replaced: 0,
            exit_if_too_long: false,
            run_if_empty: true,
        }
    }

    fn run(input: &[u8], r: &Rules) -> (Vec<Vec<String>>, Result<(), String>) {
        let mut out = Vec::new();
        let res = translate(input, &mut out, r);
        let cmds = unpack_commands(&out)
            .into_iter()
            .map(|c| {
                c.into_iter()
                    .map(|a| String::from_utf8_lossy(&a).into_owned())
                    .collect()
            })
            .collect();
        (cmds, res)
    }

    #[test]
    fn quoting_like_xargs() {
        let (c, r) = run(
            b"a\\ b 'c d' \"e'f\" g\\\nh\n",
            &rules(Grouping::Args(None)),
        );
        assert!(r.is_ok());
        assert_eq!(c, [["a b", "c d", "e'f", "g\nh"]]);
        let (c, r) = run(b"a b\nc \"d\n", &rules(Grouping::Args(None)));
        assert_eq!(c, [["a", "b", "c"]]);
        assert!(r.unwrap_err().starts_with("unmatched double quote"));
    }

    #[test]
    fn lines_continue_after_a_trailing_blank() {
        let (c, _) = run(b"a b \nc\n\nd e\nf\n", &rules(Grouping::Lines(1)));
        assert_eq!(c, vec![vec!["a", "b", "c"], vec!["d", "e"], vec!["f"]]);
    }

    #[test]
    fn a_quote_after_an_escaped_blank_ends_the_line() {
        // `\ ''` ends in a quote, not in a blank: its line is complete, so it runs even
        // though an unmatched quote follows.
        let (c, r) = run(b"\\ ''\na\n'a", &rules(Grouping::Lines(2)));
        assert_eq!(c, vec![vec![" ", "a"]]);
        assert!(r.unwrap_err().starts_with("unmatched single quote"));
    }

    #[test]
    fn replace_keeps_inner_blanks() {
        let (c, _) = run(b"  a b \n c\n\n", &rules(Grouping::Replace));
        assert_eq!(c, vec![vec!["a b "], vec!["c"]]);
    }

    #[test]
    fn sizes_cut_commands() {
        let mut r = rules(Grouping::Args(None));
        r.max_chars = 20;
        let (c, _) = run("aaaa ".repeat(7).as_bytes(), &r);
        assert_eq!(c.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3, 1]);
        let (c, _) = run(b"", &r);
        assert_eq!(c, vec![Vec::<String>::new()]);
    }
}
