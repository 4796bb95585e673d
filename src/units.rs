//! Numbers with units (`1k` = 1000, `1Ki` = 1024) and `INIT:MAX` ranges, as flag values use them.
//!
//! Pure parsing: no knowledge of which flag a value belongs to or what its default is.

use frun_engine::dispatch::ledger::{Halt, HaltCount, HaltOn};
pub use frun_engine::plan::config::{Bound, Range};

/// Parses a non-negative number with an optional unit suffix: `k m g t p e` (powers of 1000,
/// either case) or `Ki Mi Gi Ti Pi Ei` (powers of 1024). A fraction is allowed before a unit
/// (`1.5k`) when the result is whole.
pub fn parse_number(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!("'{s}' is not a number"));
    }
    let mult: u64 = match unit {
        "" => 1,
        "k" | "K" => 1_000,
        "m" | "M" => 1_000_000,
        "g" | "G" => 1_000_000_000,
        "t" | "T" => 1_000_000_000_000,
        "p" | "P" => 1_000_000_000_000_000,
        "e" | "E" => 1_000_000_000_000_000_000,
        "Ki" | "ki" | "KI" => 1 << 10,
        "Mi" | "mi" | "MI" => 1 << 20,
        "Gi" | "gi" | "GI" => 1 << 30,
        "Ti" | "ti" | "TI" => 1 << 40,
        "Pi" | "pi" | "PI" => 1 << 50,
        "Ei" | "ei" | "EI" => 1 << 60,
        _ => return Err(format!("'{s}' has an unknown unit '{unit}'")),
    };
    if let Some((whole, frac)) = num.split_once('.') {
        if frac.contains('.') || (whole.is_empty() && frac.is_empty()) {
            return Err(format!("'{s}' is not a number"));
        }
        let scale = 10u64
            .checked_pow(frac.len() as u32)
            .ok_or_else(|| format!("'{s}' has too many digits"))?;
        let w: u64 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| format!("'{s}' is too large"))?
        };
        let f: u64 = if frac.is_empty() {
            0
        } else {
            frac.parse().map_err(|_| format!("'{s}' is too large"))?
        };
        let total = (w as u128 * scale as u128 + f as u128) * mult as u128;
        if total % (scale as u128) != 0 {
            return Err(format!("'{s}' is not a whole number"));
        }
        return u64::try_from(total / scale as u128).map_err(|_| format!("'{s}' is too large"));
    }
    let n: u64 = num.parse().map_err(|_| format!("'{s}' is too large"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Parses a number as GNU Parallel reads sizes and counts: `K M G T P E` (upper case) and `Ki`
/// … `Ei` (any case) are powers of 1024, `k m g t p e` (lower case) powers of 1000; a fraction
/// is rounded down (`1.5K` is 1536, `3.1` is 3).
pub fn parse_binary_prefix(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!("'{s}' is not a number"));
    }
    let power = |c: char| "kmgtpe".find(c.to_ascii_lowercase()).map(|i| i as u32 + 1);
    let mult: u128 = match unit.as_bytes() {
        [] => 1,
        [c, b'i' | b'I'] => 1u128 << (10 * power(*c as char).ok_or_else(|| unknown(s, unit))?),
        [c] if c.is_ascii_uppercase() => {
            1u128 << (10 * power(*c as char).ok_or_else(|| unknown(s, unit))?)
        }
        [c] => 1000u128.pow(power(*c as char).ok_or_else(|| unknown(s, unit))?),
        _ => return Err(unknown(s, unit)),
    };
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    if (whole.is_empty() && frac.is_empty()) || frac.contains('.') {
        return Err(format!("'{s}' is not a number"));
    }
    let digits = |d: &str| -> Result<u128, String> {
        if d.is_empty() {
            Ok(0)
        } else {
            d.parse().map_err(|_| format!("'{s}' is too large"))
        }
    };
    let frac = &frac[..frac.len().min(18)];
    let scale = 10u128.pow(frac.len() as u32);
    let total = (digits(whole)? * scale + digits(frac)?) * mult / scale;
    u64::try_from(total).map_err(|_| format!("'{s}' is too large"))
}

fn unknown(s: &str, unit: &str) -> String {
    format!("'{s}' has an unknown unit '{unit}'")
}

/// GNU Parallel's escapes in `--tagstring`, applied as it applies them, one kind
/// after the other over the whole text: `\t`, `\n`, `\r`, then three digits `\NNN`, then one
/// digit `\N`, the digits read as perl reads them in a string (up to three octal digits make
/// a byte; an 8 or 9 stands for itself).
pub fn unquote_printf(s: &[u8]) -> Vec<u8> {
    let mut text = s.to_vec();
    for (letter, byte) in [(b't', b'\t'), (b'n', b'\n'), (b'r', b'\r')] {
        text = replace_escapes(&text, |rest, out| {
            (rest.first() == Some(&letter))
                .then(|| out.push(byte))
                .map(|()| 1)
        });
    }
    for width in [3, 1] {
        text = replace_escapes(&text, |rest, out| {
            let digits = rest.get(..width)?;
            if !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let octal = digits.iter().take_while(|d| **d < b'8').count();
            if octal > 0 {
                let v = digits[..octal]
                    .iter()
                    .fold(0u32, |v, d| v * 8 + u32::from(d - b'0'));
                out.push(v as u8);
            }
            out.extend_from_slice(&digits[octal..]);
            Some(width)
        });
    }
    text
}

/// Replaces each backslash that `escape` recognises, in one pass from the left: given the
/// bytes after it, `escape` writes what they stand for and says how many it took.
fn replace_escapes(text: &[u8], escape: impl Fn(&[u8], &mut Vec<u8>) -> Option<usize>) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'\\' {
            if let Some(n) = escape(&text[i + 1..], &mut out) {
                i += 1 + n;
                continue;
            }
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

/// Parses a duration: seconds with an optional fraction and unit (`ms`, `s`, `m`, `h`, `d`),
/// possibly compound (`1m30s`, `1d3.5h`), as GNU Parallel's time postfixes.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let bad = || format!("'{s}' is not a duration (seconds, or e.g. 1.5, 200ms, 1m30s, 2h)");
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, after) = rest.split_at(num_len);
        let value: f64 = num.parse().map_err(|_| bad())?;
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let scale = match unit {
            "" | "s" => 1.0,
            "ms" => 0.001,
            "m" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            _ => return Err(bad()),
        };
        if unit.is_empty() && !next.is_empty() {
            return Err(bad());
        }
        total += value * scale;
        rest = next;
    }
    // Up to about 300 years; beyond is no limit anyone means.
    if !(total.is_finite() && total < 1e10) {
        return Err(format!("'{s}' is too long a duration"));
    }
    Ok(std::time::Duration::from_secs_f64(total))
}

/// Parses `--job-timeout`: a duration (more than zero), or `N%` of the median runtime.
/// `--termseq SIG,MS,SIG,MS…`: signals by name (`TERM` or `SIGTERM`) or number, each followed
/// by the milliseconds the command is given before the next step (the last wait may be left
/// out: 25 ms, GNU Parallel's last).
pub fn parse_termseq(s: &str) -> Result<Vec<(i32, std::time::Duration)>, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let mut steps = Vec::new();
    for pair in parts.chunks(2) {
        let name = pair[0];
        let sig = match name.parse::<i32>() {
            Ok(n) => nix::sys::signal::Signal::try_from(n).ok(),
            Err(_) => {
                let full = if name.starts_with("SIG") {
                    name.to_string()
                } else {
                    format!("SIG{name}")
                };
                full.parse::<nix::sys::signal::Signal>().ok()
            }
        }
        .ok_or_else(|| format!("'{name}' is not a signal"))?;
        let ms = match pair.get(1) {
            Some(ms) => ms
                .parse::<u64>()
                .map_err(|_| format!("'{ms}' is not a number of milliseconds"))?,
            None => 25,
        };
        steps.push((sig as i32, std::time::Duration::from_millis(ms)));
    }
    if steps.is_empty() || s.trim().is_empty() {
        return Err("expected SIGNAL,MS[,SIGNAL,MS…]".into());
    }
    Ok(steps)
}

pub fn parse_job_timeout(s: &str) -> Result<frun_engine::dispatch::pace::JobTimeout, String> {
    use frun_engine::dispatch::pace::JobTimeout;
    if let Some(p) = s.trim().strip_suffix('%') {
        return match p.parse::<u32>() {
            Ok(p @ 1..) => Ok(JobTimeout::Percent(p)),
            _ => Err(format!("'{s}' is not a percentage of at least 1%")),
        };
    }
    match parse_duration(s)? {
        d if d.is_zero() => Err("must be more than 0".into()),
        d => Ok(JobTimeout::Fixed(d)),
    }
}

fn parse_bound(s: &str) -> Result<Bound, String> {
    match s.trim() {
        "" | "auto" => Ok(Bound::Default),
        "-1" => Ok(Bound::HardMax),
        t if t.starts_with('-') => Err(format!("'{s}' is negative (only -1 is allowed)")),
        t => match parse_number(t)? {
            0 => Ok(Bound::Default),
            n => Ok(Bound::Value(n)),
        },
    }
}

/// Parses `N` (= `N:N`) or `INIT:MAX`.
pub fn parse_range(s: &str) -> Result<Range, String> {
    match s.split_once(':') {
        None => {
            let b = parse_bound(s)?;
            Ok(Range { init: b, max: b })
        }
        Some((a, b)) => Ok(Range {
            init: parse_bound(a)?,
            max: parse_bound(b)?,
        }),
    }
}

/// Parses a delimiter: one byte, `''` (NUL), or an escape (`\n`, `\t`, `\0`, `\\`, `\xHH`,
/// `\NNN` octal).
pub fn parse_delimiter(s: &str) -> Result<u8, String> {
    let b = s.as_bytes();
    match b {
        [] => Ok(0),
        [c] => Ok(*c),
        [b'\\', rest @ ..] => {
            let simple = match rest {
                b"n" => Some(b'\n'),
                b"t" => Some(b'\t'),
                b"r" => Some(b'\r'),
                b"0" => Some(0),
                b"\\" => Some(b'\\'),
                b"a" => Some(7),
                b"b" => Some(8),
                b"f" => Some(12),
                b"v" => Some(11),
                _ => None,
            };
            if let Some(c) = simple {
                return Ok(c);
            }
            let text = &s[1..];
            if let Some(hex) = text.strip_prefix('x') {
                if let (1..=2, Ok(v)) = (hex.len(), u8::from_str_radix(hex, 16)) {
                    return Ok(v);
                }
            } else if let (1..=3, Ok(v)) = (text.len(), u8::from_str_radix(text, 8)) {
                return Ok(v);
            }
            Err(format!(
                "'{s}' is not a one-byte delimiter or a known escape"
            ))
        }
        _ => Err(format!(
            "'{s}' is not one byte (a delimiter is a single byte)"
        )),
    }
}

/// Parses `--halt`: `[now,|soon,]fail|success|done=N|N%`, `now,N` and `soon,N` (forkrun's
/// `fail=N`), or `never` (None). `fail=N%` and `success=N%` are shares of the finished batches
/// (from the third on); `done=N%` is a share of all the input's batches.
pub fn parse_halt(s: &str) -> Result<Option<Halt>, String> {
    if s == "never" {
        return Ok(None);
    }
    let (now, cond) = match s.split_once(',') {
        Some(("now", c)) => (true, c),
        Some(("soon", c)) => (false, c),
        Some((w, _)) => return Err(format!("'{w}' is not now or soon")),
        None => (false, s),
    };
    let (on, n) = match cond.split_once('=') {
        Some(("fail", n)) => (HaltOn::Fail, n),
        Some(("success", n)) => (HaltOn::Success, n),
        Some(("done", n)) => (HaltOn::Done, n),
        // `now,2`: forkrun's way of saying now,fail=2.
        None if s.contains(',') && cond.starts_with(|c: char| c.is_ascii_digit()) => {
            (HaltOn::Fail, cond)
        }
        _ => {
            return Err(
                "expected [now,|soon,]fail=N, success=N or done=N (or N%), now,N, soon,N or \
                 never"
                    .into(),
            );
        }
    };
    let word = match on {
        HaltOn::Fail => "fail",
        HaltOn::Success => "success",
        HaltOn::Done => "done",
    };
    let count = match n.strip_suffix('%') {
        Some(p) => match p.parse::<u64>() {
            Ok(p @ 1..=100) if on == HaltOn::Done => HaltCount::PercentOfAll(p),
            Ok(p @ 1..=100) => HaltCount::Percent(p),
            _ => return Err(format!("'{n}' is not a percentage from 1% to 100%")),
        },
        None => match parse_number(n) {
            Ok(0) => return Err(format!("{word}=0 would stop before anything ran")),
            Ok(n) => HaltCount::Batches(n),
            Err(e) => return Err(e),
        },
    };
    Ok(Some(Halt { now, on, count }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_escapes_as_gnu_parallel_reads_them() {
        assert_eq!(unquote_printf(b"I{1}\\tB{2}"), b"I{1}\tB{2}");
        assert_eq!(unquote_printf(b"a\\nb\\rc"), b"a\nb\rc");
        assert_eq!(unquote_printf(b"\\101\\0x"), b"A\0x");
        assert_eq!(unquote_printf(b"\\089\\9"), b"\089\x39");
        assert_eq!(unquote_printf(b"\\q\\"), b"\\q\\");
        // One kind after the other: a backslash, then `\t`, is a backslash and a tab.
        assert_eq!(unquote_printf(b"\\\\t"), b"\\\t");
    }

    #[test]
    fn binary_prefixes_are_gnu_parallels() {
        assert_eq!(parse_binary_prefix("1M"), Ok(1 << 20));
        assert_eq!(parse_binary_prefix("1m"), Ok(1_000_000));
        assert_eq!(parse_binary_prefix("2Ki"), Ok(2048));
        assert_eq!(parse_binary_prefix("2ki"), Ok(2048));
        assert_eq!(parse_binary_prefix("1.5K"), Ok(1536));
        assert_eq!(parse_binary_prefix("3.1"), Ok(3));
        assert_eq!(parse_binary_prefix("10"), Ok(10));
        assert_eq!(parse_binary_prefix("1G"), Ok(1 << 30));
        assert_eq!(parse_binary_prefix("1g"), Ok(1_000_000_000));
        assert!(parse_binary_prefix("1Q").is_err());
        assert!(parse_binary_prefix("").is_err());
        assert!(parse_binary_prefix("M").is_err());
        assert!(parse_binary_prefix("99E").is_err());
    }

    #[test]
    fn termseq_is_signals_and_waits() {
        use std::time::Duration;
        assert_eq!(
            parse_termseq("INT,200,TERM,100,KILL"),
            Ok(vec![
                (libc::SIGINT, Duration::from_millis(200)),
                (libc::SIGTERM, Duration::from_millis(100)),
                (libc::SIGKILL, Duration::from_millis(25)),
            ])
        );
        assert_eq!(
            parse_termseq("SIGHUP,5"),
            Ok(vec![(libc::SIGHUP, Duration::from_millis(5))])
        );
        assert_eq!(
            parse_termseq("9,0"),
            Ok(vec![(libc::SIGKILL, Duration::ZERO)])
        );
        assert!(parse_termseq("NOPE,1").is_err());
        assert!(parse_termseq("TERM,x").is_err());
        assert!(parse_termseq("").is_err());
    }

    #[test]
    fn fractions_of_a_unit() {
        assert_eq!(parse_number("1.5k"), Ok(1500));
        assert!(parse_number("3.1").is_err());
        assert_eq!(parse_binary_prefix("1.0005k"), Ok(1000));
        assert_eq!(parse_binary_prefix("0.5"), Ok(0));
        assert!(parse_binary_prefix("1.2.3").is_err());
    }

    #[test]
    fn halt_specs() {
        let h = |now, on, count| Ok(Some(Halt { now, on, count }));
        use HaltOn::{Done, Fail, Success};
        assert_eq!(parse_halt("fail=3"), h(false, Fail, HaltCount::Batches(3)));
        assert_eq!(
            parse_halt("now,fail=1"),
            h(true, Fail, HaltCount::Batches(1))
        );
        assert_eq!(
            parse_halt("soon,fail=2k"),
            h(false, Fail, HaltCount::Batches(2000))
        );
        assert_eq!(
            parse_halt("fail=50%"),
            h(false, Fail, HaltCount::Percent(50))
        );
        assert_eq!(parse_halt("now,2"), h(true, Fail, HaltCount::Batches(2)));
        assert_eq!(parse_halt("soon,3"), h(false, Fail, HaltCount::Batches(3)));
        assert_eq!(
            parse_halt("now,success=1"),
            h(true, Success, HaltCount::Batches(1))
        );
        assert_eq!(
            parse_halt("success=20%"),
            h(false, Success, HaltCount::Percent(20))
        );
        assert_eq!(
            parse_halt("soon,done=4"),
            h(false, Done, HaltCount::Batches(4))
        );
        assert_eq!(
            parse_halt("now,done=50%"),
            h(true, Done, HaltCount::PercentOfAll(50))
        );
        assert_eq!(parse_halt("never"), Ok(None));
        for bad in [
            "",
            "fail=",
            "fail=0",
            "fail=0%",
            "fail=101%",
            "later,fail=1",
            "now",
            "x=1",
            "2",
            "now,0",
            "now,x",
            "done=0",
            "success=-1",
            "now,fail=1,x",
        ] {
            assert!(parse_halt(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn forkrun_halt_short_forms() {
        let h = |now, count| {
            Ok(Some(Halt {
                now,
                on: frun_engine::dispatch::ledger::HaltOn::Fail,
                count,
            }))
        };
        assert_eq!(parse_halt("now,2"), h(true, HaltCount::Batches(2)));
        assert_eq!(parse_halt("soon,3"), h(false, HaltCount::Batches(3)));
        assert_eq!(parse_halt("now,10%"), h(true, HaltCount::Percent(10)));
        for bad in ["now,", "now,0", "now,x", "soon,-1", "2"] {
            assert!(parse_halt(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn durations() {
        use std::time::Duration;
        let ms = |n| Ok(Duration::from_millis(n));
        assert_eq!(parse_duration("2"), ms(2000));
        assert_eq!(parse_duration("0.25"), ms(250));
        assert_eq!(parse_duration(".5s"), ms(500));
        assert_eq!(parse_duration("200ms"), ms(200));
        assert_eq!(parse_duration("1m30s"), ms(90_000));
        assert_eq!(parse_duration("1d1h"), ms(90_000_000));
        assert_eq!(parse_duration("0"), ms(0));
        for bad in ["", "x", "-1", "1x", "1.2.3", "s", "1e3", "1 s", "9e99"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
        use frun_engine::dispatch::pace::JobTimeout;
        assert_eq!(parse_job_timeout("150%"), Ok(JobTimeout::Percent(150)));
        assert_eq!(
            parse_job_timeout("1.5"),
            Ok(JobTimeout::Fixed(Duration::from_millis(1500)))
        );
        for bad in ["0", "0%", "%", "-5%", "1.5%", "0s"] {
            assert!(parse_job_timeout(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn units() {
        assert_eq!(parse_number("0"), Ok(0));
        assert_eq!(parse_number("17"), Ok(17));
        assert_eq!(parse_number("1k"), Ok(1000));
        assert_eq!(parse_number("1K"), Ok(1000));
        assert_eq!(parse_number("1Ki"), Ok(1024));
        assert_eq!(parse_number("3Mi"), Ok(3 << 20));
        assert_eq!(parse_number("2g"), Ok(2_000_000_000));
        assert_eq!(parse_number("1.5k"), Ok(1500));
        assert_eq!(parse_number("1e"), Ok(1_000_000_000_000_000_000));
        assert!(parse_number("1.5").is_err());
        assert!(parse_number("x").is_err());
        assert!(parse_number("1q").is_err());
        assert!(parse_number("").is_err());
        assert!(parse_number("99999999999999999999").is_err());
        assert!(parse_number("20e").is_err());
    }

    #[test]
    fn ranges() {
        use Bound::*;
        let r = |s| parse_range(s).unwrap();
        assert_eq!(
            r("5"),
            Range {
                init: Value(5),
                max: Value(5)
            }
        );
        assert_eq!(
            r("1:-1"),
            Range {
                init: Value(1),
                max: HardMax
            }
        );
        assert_eq!(
            r("0"),
            Range {
                init: Default,
                max: Default
            }
        );
        assert_eq!(
            r("auto"),
            Range {
                init: Default,
                max: Default
            }
        );
        assert_eq!(
            r(":8"),
            Range {
                init: Default,
                max: Value(8)
            }
        );
        assert_eq!(
            r("2:"),
            Range {
                init: Value(2),
                max: Default
            }
        );
        assert_eq!(
            r("1k:4Ki"),
            Range {
                init: Value(1000),
                max: Value(4096)
            }
        );
        assert!(parse_range("-2").is_err());
        assert!(parse_range("a:b").is_err());
    }

    #[test]
    fn delimiters() {
        assert_eq!(parse_delimiter(""), Ok(0));
        assert_eq!(parse_delimiter(","), Ok(b','));
        assert_eq!(parse_delimiter("\\t"), Ok(b'\t'));
        assert_eq!(parse_delimiter("\\0"), Ok(0));
        assert_eq!(parse_delimiter("\\x1f"), Ok(0x1f));
        assert_eq!(parse_delimiter("\\101"), Ok(b'A'));
        assert!(parse_delimiter("ab").is_err());
        assert!(parse_delimiter("\\q").is_err());
    }
}
