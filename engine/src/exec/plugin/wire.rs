//! The wire format between a worker and its plugin host (`-C`): the host's name and modes, the
//! start-up message and the per-batch request, as plain fixed-size structs.
//!
//! Only the layout lives here; who sends what and when is `plugin`'s and `plugin_host`'s.

/// The name a plugin host runs under (its `argv[0]`): the binary starts as a host, not as frun,
/// when started by this name.
pub const HOST_NAME: &str = "frun-plugin-host";

/// The version of this wire format, the host's second argument: a host from another frun
/// (the static binary's `frun-plugin-host` of another release) refuses to serve instead of
/// misreading requests. Raised whenever a message's layout changes.
pub const WIRE_VERSION: &str = "frun-plugin-wire-1";

/// The host's first argument: load the library, look up the function, and exit (0: fine; else
/// one line on stderr and 126 or 127).
pub const MODE_CHECK: &str = "check";
/// What a host in check mode writes on its stdout once the library is loaded and the function
/// found: a constructor that ends the process while the library loads (`exit(0)` included)
/// never lets it be written, so the check cannot take such an exit for success.
pub const LOADED: &[u8] = b"frun-plugin-loaded\n";
/// The host's first argument: load the library and serve batches on fd 0.
pub const MODE_SERVE: &str = "serve";

/// Start-up flag: batches come on the function's stdin (`-s`): argv holds only the fixed words.
pub const HELLO_STDIN_MODE: u32 = 1;
/// Request flag: a descriptor for the batch's stdin comes with the request.
pub const REQUEST_STDIN: u32 = 1;

/// The start-up message, sent with two descriptors: the host's default stdin and the spool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Hello {
    /// Start-up flags (`HELLO_STDIN_MODE`).
    pub flags: u32,
    /// The worker this host serves.
    pub worker: u32,
    /// That worker's NUMA node.
    pub node: u32,
    /// Which host of this worker this is: 1 for the first, one more after each lost one.
    pub incarnation: u32,
    /// The byte that ends each record.
    pub delimiter: u32,
    /// Zero; keeps the layout free of padding.
    pub reserved: u32,
}

/// One batch, as the host is told of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Request {
    /// The batch's place in input order (0, 1, …).
    pub seq: u64,
    /// Where the batch's bytes start in the spool file.
    pub spool_offset: u64,
    /// Where they start in the input.
    pub input_offset: u64,
    /// Bytes in the batch.
    pub len: u64,
    /// Records in the batch (0: not counted).
    pub records: u64,
    /// Earlier attempts at this batch (0 on the first).
    pub attempt: u32,
    /// Request flags (`REQUEST_STDIN`).
    pub flags: u32,
    /// The worker and its node (for a worker shell, which gets no start-up message of ours).
    pub worker: u32,
    /// That worker's NUMA node.
    pub node: u32,
    /// The byte that ends each record.
    pub delimiter: u32,
    /// Zero; keeps the layout free of padding.
    pub reserved: u32,
}

/// Plain-data messages that travel as their bytes: each field's native-endian bytes in order,
/// which is the struct's own layout (`repr(C)`, no padding: both ends are one binary).
pub trait Message: Copy + Default {
    /// The message's bytes, as sent.
    fn to_bytes(&self) -> Vec<u8>;
    /// The message from bytes received; `b` must hold exactly one message.
    fn from_bytes(b: &[u8]) -> Self;
}

/// Implements [`Message`] for a struct of integer fields, listed in declaration order (a field
/// left out makes the struct literal below fail to compile).
macro_rules! message {
    ($t:ty { $($field:ident: $ft:ty),* $(,)? }) => {
        impl Message for $t {
            fn to_bytes(&self) -> Vec<u8> {
                let mut b = Vec::with_capacity(std::mem::size_of::<Self>());
                $(b.extend_from_slice(&self.$field.to_ne_bytes());)*
                debug_assert_eq!(b.len(), std::mem::size_of::<Self>());
                b
            }

            fn from_bytes(b: &[u8]) -> Self {
                assert_eq!(b.len(), std::mem::size_of::<Self>());
                let mut at = 0;
                $(
                    let n = std::mem::size_of::<$ft>();
                    let $field = <$ft>::from_ne_bytes(b[at..at + n].try_into().expect("in range"));
                    at += n;
                )*
                let _ = at;
                Self { $($field),* }
            }
        }
    };
}

message!(Hello {
    flags: u32,
    worker: u32,
    node: u32,
    incarnation: u32,
    delimiter: u32,
    reserved: u32,
});
message!(Request {
    seq: u64,
    spool_offset: u64,
    input_offset: u64,
    len: u64,
    records: u64,
    attempt: u32,
    flags: u32,
    worker: u32,
    node: u32,
    delimiter: u32,
    reserved: u32,
});

#[cfg(test)]
mod message_tests {
    use super::*;

    /// The bytes are the struct's own layout, field after field with no gap, and read back whole.
    #[test]
    fn a_message_is_its_fields_in_order() {
        let r = Request {
            seq: 1,
            spool_offset: 2,
            input_offset: 3,
            len: 4,
            records: 5,
            attempt: 6,
            flags: 7,
            worker: 8,
            node: 9,
            delimiter: 10,
            reserved: 11,
        };
        let b = r.to_bytes();
        assert_eq!(b.len(), std::mem::size_of::<Request>());
        assert_eq!(b[..8], 1u64.to_ne_bytes());
        assert_eq!(b[b.len() - 4..], 11u32.to_ne_bytes());
        assert_eq!(Request::from_bytes(&b), r);
        let h = Hello {
            flags: 1,
            worker: 2,
            node: 3,
            incarnation: 4,
            delimiter: 5,
            reserved: 6,
        };
        assert_eq!(h.to_bytes().len(), std::mem::size_of::<Hello>());
        assert_eq!(Hello::from_bytes(&h.to_bytes()), h);
    }
}
