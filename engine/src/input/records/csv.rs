//! GNU Parallel's `--csv`: input as comma-separated values. A record ends at a newline outside
//! double quotes (a quoted field may hold newlines); a field in double quotes may hold the
//! separator, and `""` in it is one `"`.
//!
//! It only finds records and fields in bytes it is given; it reads nothing and runs nothing.

/// Where the record starting at the beginning of `bytes` ends: just past its newline (one
/// outside double quotes), or None when `bytes` holds no whole record.
#[must_use]
pub fn record_end(bytes: &[u8]) -> Option<usize> {
    let mut quoted = false;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'\n' if !quoted => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// The records of `bytes`, each without its newline (nor a carriage return before it); a
/// last record without a newline counts.
#[must_use]
pub fn records(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let end = record_end(rest).unwrap_or(rest.len());
        let mut r = &rest[..end];
        r = r.strip_suffix(b"\n").unwrap_or(r);
        r = r.strip_suffix(b"\r").unwrap_or(r);
        out.push(r);
        rest = &rest[end..];
    }
    out
}

/// Appends the fields of `record` (separated by `sep`) to `arena`, pushing where each ends to
/// `ends`. Quotes around a field are taken off and `""` in them is one `"`; text after a
/// closing quote stays part of the field.
pub fn fields(record: &[u8], sep: u8, arena: &mut Vec<u8>, ends: &mut Vec<usize>) {
    let mut quoted = false;
    let mut i = 0;
    while i < record.len() {
        let b = record[i];
        i += 1;
        if quoted {
            if b != b'"' {
                arena.push(b);
            } else if record.get(i) == Some(&b'"') {
                arena.push(b'"');
                i += 1;
            } else {
                quoted = false;
            }
        } else if b == b'"' {
            quoted = true;
        } else if b == sep {
            ends.push(arena.len());
        } else {
            arena.push(b);
        }
    }
    ends.push(arena.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(record: &[u8]) -> Vec<Vec<u8>> {
        let (mut arena, mut ends) = (Vec::new(), Vec::new());
        fields(record, b',', &mut arena, &mut ends);
        let mut start = 0;
        ends.iter()
            .map(|&e| {
                let f = arena[start..e].to_vec();
                start = e;
                f
            })
            .collect()
    }

    #[test]
    fn quoted_fields_hold_separators_quotes_and_newlines() {
        assert_eq!(
            split(b"\"2\"\"x3\"\" board\",\"Value with ,\",Column 3"),
            vec![
                b"2\"x3\" board".to_vec(),
                b"Value with ,".to_vec(),
                b"Column 3".to_vec()
            ]
        );
        assert_eq!(
            split(b"a,,\"b\nc\","),
            vec![b"a".to_vec(), b"".to_vec(), b"b\nc".to_vec(), b"".to_vec()]
        );
        assert_eq!(split(b""), vec![b"".to_vec()]);
    }

    #[test]
    fn records_end_at_newlines_outside_quotes() {
        let input = b"\"a\nb\",c\nd\r\ne";
        assert_eq!(records(input), vec![&b"\"a\nb\",c"[..], b"d", b"e"]);
        assert_eq!(record_end(b"\"x\ny"), None);
        assert_eq!(record_end(b"\"x\"\ny"), Some(4));
    }
}
