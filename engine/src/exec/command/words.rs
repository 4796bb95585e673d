//! One argument vector's storage ([`Argv`]): NUL-terminated words in one buffer, their
//! offsets and the pointer array `execve` takes, reused from batch to batch so a warm worker
//! builds command lines without allocating.
//!
//! Plain storage: what goes into it is [`crate::exec::command::argv`]'s and [`crate::exec::command::job`]'s business.

/// Reusable storage for one argv.
#[derive(Default)]
pub struct Argv {
    pub(super) bytes: Vec<u8>,
    pub(super) offsets: Vec<usize>,
    pub(super) ptrs: Vec<*const libc::c_char>,
    pub(super) records: Vec<(usize, usize)>,
    /// A job line's shell line while it is built.
    pub(super) scratch: Vec<u8>,
    /// Where the word being built starts (a job line's words).
    pub(super) word_start: Option<usize>,
    /// A job line run without a shell, when asked to be shown: its text as a shell would have
    /// got it, blanks as written (the words alone lose them).
    pub(super) shown: Vec<u8>,
    /// Whether `shown` holds this command line's text.
    pub(super) showing: bool,
}

// SAFETY: the raw pointers only ever point into `bytes` of the same Argv.
unsafe impl Send for Argv {}

impl Argv {
    /// Empties it for a new command line.
    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.offsets.clear();
        self.word_start = None;
        self.showing = false;
    }

    /// Appends a whole word.
    pub(super) fn push_word(&mut self, w: &[u8]) {
        self.offsets.push(self.bytes.len());
        self.bytes.extend_from_slice(w);
        self.bytes.push(0);
    }

    /// Appends bytes to the word being built (starting one if none is).
    pub(super) fn push_bytes(&mut self, b: &[u8]) {
        if self.word_start.is_none() {
            self.word_start = Some(self.bytes.len());
        }
        self.bytes.extend_from_slice(b);
    }

    /// Ends the word being built (an empty one too, once started or not).
    pub(super) fn end_word(&mut self) {
        let start = self.word_start.take().unwrap_or(self.bytes.len());
        self.offsets.push(start);
        self.bytes.push(0);
    }

    /// Points the pointer array at the words.
    pub(super) fn finish(&mut self) {
        self.ptrs.clear();
        let base = self.bytes.as_ptr();
        // Every offset is the start of a NUL-terminated word inside `bytes`, which is not
        // modified again until the next build (only the pointers' users dereference them).
        self.ptrs.extend(
            self.offsets
                .iter()
                .map(|&o| base.wrapping_add(o).cast::<libc::c_char>()),
        );
        self.ptrs.push(std::ptr::null());
    }

    /// The NULL-terminated pointer array for `execve`.
    pub fn pointers(&self) -> &[*const libc::c_char] {
        &self.ptrs
    }

    /// The last word's length, without looking at its bytes (a job line's shell line).
    pub fn last_word_len(&self) -> usize {
        self.offsets
            .last()
            .map_or(0, |&o| self.bytes.len().saturating_sub(o + 1))
    }

    /// The words' bytes in all (without their NULs), without looking at them.
    pub fn words_len(&self) -> usize {
        self.bytes.len() - self.offsets.len()
    }

    /// How many words it holds.
    pub fn word_count(&self) -> usize {
        self.offsets.len()
    }

    /// The text a job line run without a shell shows (`-v`, `-t`, the joblog), when it was
    /// asked for; None: the words are what there is to show.
    pub fn shown(&self) -> Option<&[u8]> {
        self.showing.then_some(&self.shown[..])
    }

    /// The words (without NULs), for `--dry-run`.
    pub fn words(&self) -> impl Iterator<Item = &[u8]> {
        self.offsets.iter().map(move |&o| {
            let end = o + memchr::memchr(0, &self.bytes[o..]).expect("words end with NUL");
            &self.bytes[o..end]
        })
    }
}
