//! The frames a worker writes for each batch and the parent reads back, in the order the
//! engine emits the batches: a kind byte, a little-endian u64 length, then that many bytes.
//!
//! Only the wire format lives here: no Python object is made or read, and nothing is sent.

/// A `bytes` result.
pub const BYTES: u8 = 0;
/// A `str` result, as UTF-8.
pub const STR: u8 = 1;
/// A `None` result (no bytes).
pub const NONE: u8 = 2;
/// Any other result, pickled by the worker.
pub const PICKLE: u8 = 3;
/// A record whose call raised and was not skipped: its input offset (u64), then the
/// traceback's text. The run stops when the parent reads it.
pub const ERROR: u8 = 4;
/// A record whose call raised and was skipped: as [`ERROR`].
pub const SKIPPED: u8 = 5;
/// All the results of a batch, as one pickled list (a batch with results that are not text):
/// one pickle per batch, not per result.
pub const PICKLED_LIST: u8 = 6;

const HEAD: usize = 9;

/// Appends one frame to `out`.
pub fn push(out: &mut Vec<u8>, kind: u8, payload: &[u8]) {
    out.push(kind);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
}

/// Appends an [`ERROR`] or [`SKIPPED`] frame for the record at input `offset`.
pub fn push_error(out: &mut Vec<u8>, kind: u8, offset: u64, traceback: &str) {
    out.push(kind);
    out.extend_from_slice(&((8 + traceback.len()) as u64).to_le_bytes());
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(traceback.as_bytes());
}

/// The first whole frame of `buf`, as (kind, payload, bytes used); None until one is whole.
pub fn next(buf: &[u8]) -> Option<(u8, &[u8], usize)> {
    if buf.len() < HEAD {
        return None;
    }
    let len = u64::from_le_bytes(buf[1..HEAD].try_into().expect("8 bytes"));
    let end = HEAD.checked_add(usize::try_from(len).ok()?)?;
    (buf.len() >= end).then(|| (buf[0], &buf[HEAD..end], end))
}

/// An error frame's payload split into its record's offset and the traceback text.
pub fn error_parts(payload: &[u8]) -> (u64, String) {
    let (at, text) = payload.split_at(payload.len().min(8));
    let mut b = [0u8; 8];
    b[..at.len()].copy_from_slice(at);
    (
        u64::from_le_bytes(b),
        String::from_utf8_lossy(text).into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_come_back_whole_and_in_order() {
        let mut out = Vec::new();
        push(&mut out, STR, b"abc");
        push(&mut out, NONE, b"");
        push_error(&mut out, ERROR, 77, "Traceback");
        let (k, p, used) = next(&out).unwrap();
        assert_eq!((k, p), (STR, &b"abc"[..]));
        assert!(next(&out[used..used + 5]).is_none());
        let rest = &out[used..];
        let (k, p, used2) = next(rest).unwrap();
        assert_eq!((k, p.len()), (NONE, 0));
        let (k, p, _) = next(&rest[used2..]).unwrap();
        assert_eq!(k, ERROR);
        assert_eq!(error_parts(p), (77, "Traceback".to_string()));
    }
}
