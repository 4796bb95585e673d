//! GNU Parallel's coloured output (`--color`, `--ctag`, `--ctagstring`, `--color-failed`): the
//! palette a job's colour comes from, and how each line of its output is dressed in it. It
//! only rewrites bytes already captured; it decides nothing about what is printed when.

/// What is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colouring {
    /// Every job's lines, each job in the palette's colour for its number.
    Jobs,
    /// Only a failed job's lines, white on red.
    Failed,
    /// Both: a failed job white on red, the others in their palette colour.
    JobsAndFailed,
}

/// Clears the rest of the terminal line after the colour starts (terminfo's `el`), so that the
/// background fills the line.
const CLEAR_TO_EOL: &[u8] = b"\x1b[K";
/// Ends the colour (terminfo's `sgr0` where a terminal gives none).
pub const RESET: &[u8] = b"\x1b[m";
/// A failed job's colour: white (231) on red (196).
const FAILED: (u8, u8) = (196, 231);

/// The palette: background and text colours of the 256-colour set, text black (0) or white
/// (231) on backgrounds where it reads well, ordered so that neighbours differ (by index
/// modulo 23, then modulo 7 descending), as GNU Parallel orders them: job N gets entry
/// `N % len`.
fn palette() -> &'static [(u8, u8)] {
    static PALETTE: std::sync::OnceLock<Vec<(u8, u8)>> = std::sync::OnceLock::new();
    PALETTE.get_or_init(|| {
        let on_black: &[(u8, u8)] = &[
            (6, 7),
            (9, 11),
            (13, 15),
            (40, 51),
            (75, 87),
            (113, 123),
            (147, 159),
            (171, 182),
            (185, 231),
            (249, 254),
        ];
        let on_white: &[(u8, u8)] = &[
            (1, 9),
            (12, 13),
            (16, 45),
            (52, 81),
            (88, 114),
            (124, 149),
            (160, 178),
            (180, 180),
            (182, 184),
            (196, 214),
            (232, 250),
        ];
        let mut all: Vec<(u8, u8)> = Vec::new();
        for (ranges, text) in [(on_black, 0u8), (on_white, 231u8)] {
            for &(lo, hi) in ranges {
                all.extend((lo..=hi).map(|bg| (bg, text)));
            }
        }
        let mut order: Vec<usize> = (0..all.len()).collect();
        // Stable, as perl's sort is.
        order.sort_by_key(|&i| (i % 23, std::cmp::Reverse(i % 7)));
        order.into_iter().map(|i| all[i]).collect()
    })
}

/// The escape that starts job `number`'s colour (from 1), or an empty one when its lines stay
/// uncoloured (`--color-failed` alone, and the job did not fail).
pub fn start(colouring: Colouring, number: u64, failed: bool, out: &mut Vec<u8>) {
    let (bg, text) = match (colouring, failed) {
        (Colouring::Failed | Colouring::JobsAndFailed, true) => FAILED,
        (Colouring::Failed, false) => return,
        _ => {
            let p = palette();
            p[(number % p.len() as u64) as usize]
        }
    };
    // Three digits each, as GNU Parallel writes them (so tabs after them line up).
    out.extend_from_slice(format!("\x1b[48;5;{bg:03};38;5;{text:03}m").as_bytes());
    out.extend_from_slice(CLEAR_TO_EOL);
}

/// Dresses `text` (a job's output) line by line: `start` (its colour, if any) and `tag` (with
/// its tab, if any) before each line, the colour's end after it (when it has one), every line
/// ending in a newline (one is added to a last line without); a carriage return inside a line
/// ends the colour and starts it again with the tag after it.
pub fn dress(text: &[u8], start: &[u8], tag: Option<&[u8]>, out: &mut Vec<u8>) {
    let reset: &[u8] = if start.is_empty() { b"" } else { RESET };
    let mut prefix = start.to_vec();
    if let Some(t) = tag {
        prefix.extend_from_slice(t);
        prefix.push(b'\t');
    }
    for line in text.split_inclusive(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        out.extend_from_slice(&prefix);
        dress_body(line, reset, out, |out| out.extend_from_slice(&prefix));
    }
}

/// Appends a line's `body` (after its prefix, without its newline), its colour ended with
/// `reset` and the line's prefix (`prefix`) written again around each carriage return in it,
/// then `reset` and the newline: the one place the lines of `--color` and `--lb --color` are
/// closed.
pub fn dress_body(body: &[u8], reset: &[u8], out: &mut Vec<u8>, prefix: impl Fn(&mut Vec<u8>)) {
    for piece in body.split_inclusive(|&b| b == b'\r') {
        match piece.strip_suffix(b"\r") {
            Some(p) => {
                out.extend_from_slice(p);
                out.extend_from_slice(reset);
                out.push(b'\r');
                prefix(out);
            }
            None => out.extend_from_slice(piece),
        }
    }
    out.extend_from_slice(reset);
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_jobs_colours_are_gnu_parallels() {
        assert_eq!(palette().len(), 307);
        let mut s = Vec::new();
        start(Colouring::Jobs, 1, false, &mut s);
        assert_eq!(s, b"\x1b[48;5;134;38;5;231m\x1b[K");
        s.clear();
        start(Colouring::Jobs, 2, false, &mut s);
        assert_eq!(s, b"\x1b[48;5;021;38;5;231m\x1b[K");
        s.clear();
        start(Colouring::Jobs, 307, false, &mut s);
        assert_eq!(s, b"\x1b[48;5;185;38;5;000m\x1b[K");
    }

    #[test]
    fn failed_jobs_are_white_on_red_and_others_plain_with_failed_only() {
        let mut s = Vec::new();
        start(Colouring::Failed, 5, true, &mut s);
        assert_eq!(s, b"\x1b[48;5;196;38;5;231m\x1b[K");
        s.clear();
        start(Colouring::Failed, 5, false, &mut s);
        assert!(s.is_empty());
    }

    #[test]
    fn lines_are_dressed_and_ended() {
        let mut out = Vec::new();
        dress(b"a\nb", b"<C>", Some(b"t"), &mut out);
        assert_eq!(out, b"<C>t\ta\x1b[m\n<C>t\tb\x1b[m\n");
        out.clear();
        dress(b"x\ry\n", b"<C>", None, &mut out);
        assert_eq!(out, b"<C>x\x1b[m\r<C>y\x1b[m\n");
        out.clear();
        dress(b"plain", b"", None, &mut out);
        assert_eq!(out, b"plain\n");
    }
}
