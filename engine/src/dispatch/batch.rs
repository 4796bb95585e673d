//! The unit of work every stage speaks of: a [`Batch`] of records (a byte range of the input),
//! the argument space a batch may fill ([`ArgSpace`]), and how records in bytes are counted.
//!
//! Plain values shared by scan, ring, ledger, exec and the engine; nothing here does I/O.

/// A batch as the ring carries it: a byte range of the spool holding `records` records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    /// Position of the batch in input order (0, 1, 2, …).
    pub seq: u64,
    /// First byte, as an input offset.
    pub start: u64,
    /// One past the last byte (after the last delimiter, or end of input).
    pub end: u64,
    /// Number of records in the range.
    pub records: u64,
}

/// How much argument space a batch may use when its records become argv words.
///
/// A record of `len` bytes costs `per_byte * len + per_record` bytes of the `budget`; a record
/// longer than `max_record_len` cannot be passed at all (the kernel's per-argument limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgSpace {
    /// Bytes of budget each byte of a record costs (one per place the template inserts it).
    pub per_byte: u64,
    /// Bytes of budget each record costs beyond its bytes (terminating NULs and argv pointers).
    pub per_record: u64,
    /// Bytes of argument space one command may use, after the template's own words.
    pub budget: u64,
    /// Longest record, in bytes, that fits in one argument.
    pub max_record_len: u64,
}

/// Records in `bytes` (a final record may lack its delimiter).
pub fn count_records(bytes: &[u8], delimiter: u8) -> u64 {
    let n = bytecount::count(bytes, delimiter) as u64;
    n + u64::from(bytes.last().is_some_and(|&b| b != delimiter))
}
