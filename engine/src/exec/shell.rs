//! The shell backend's engine side: a batch runs in a worker shell (a forked copy of the user's
//! bash, see `bash/`) reached over a socket, instead of in a spawned process.
//!
//! This module owns the wire format between the engine and a worker shell (a start-up message,
//! one request and one reply per batch) and the engine's end of it. It does not know how worker
//! shells are made or what they run: a [`Host`] starts and reaps them.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use nix::errno::Errno;
use nix::sys::socket::{MsgFlags, Shutdown, shutdown};

use crate::exec::spawn::ChildEnd;

/// Starts and reaps worker shells (the bash front end's process that forked the engine).
pub trait Host: Send + Sync {
    /// Starts a worker shell; returns its pid and the engine's end of its socket.
    fn start(&self) -> io::Result<(libc::pid_t, OwnedFd)>;
    /// Waits for a worker shell whose socket closed and says how it ended.
    fn reap(&self, pid: libc::pid_t) -> io::Result<ChildEnd>;
    /// Whether its workers read each batch from the spool themselves ([`REQUEST_RANGE`]), given
    /// the spool's descriptor at start-up ([`HELLO_SPOOL`]), instead of getting words or a pipe.
    fn wants_ranges(&self) -> bool {
        false
    }
}

/// Start-up flag: the worker shell leads its own process group.
pub const HELLO_OWN_GROUP: u32 = 1;
/// Start-up flag: a descriptor for fd 1 comes with the message.
pub const HELLO_STDOUT: u32 = 2;
/// Start-up flag: a descriptor for fd 0 comes with the message.
pub const HELLO_STDIN: u32 = 4;
/// Start-up flag: the spool's descriptor comes with the message (after fd 1 and fd 0), for a
/// worker that reads ranges or hands it to a plugin (`-C`).
pub const HELLO_SPOOL: u32 = 8;
/// Request flag: a descriptor for the batch's stdin comes with the request.
pub const REQUEST_STDIN: u32 = 1;
/// Request flag: the body is a [`Range`] of the spool, not words.
pub const REQUEST_RANGE: u32 = 2;

/// A batch as a byte range of the spool's file, for a worker that reads it there itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Range {
    /// Where the batch's bytes start in the spool's file.
    pub file_offset: u64,
    /// Bytes in the batch.
    pub len: u64,
    /// The batch's first byte as an input offset.
    pub input_offset: u64,
    /// The batch's position in input order.
    pub seq: u64,
}

/// Bytes of a [`Range`] as it travels.
pub const RANGE_LEN: usize = 32;

impl Range {
    /// The range's bytes, as sent.
    pub fn to_bytes(self) -> [u8; RANGE_LEN] {
        let mut b = [0u8; RANGE_LEN];
        for (i, v) in [self.file_offset, self.len, self.input_offset, self.seq]
            .into_iter()
            .enumerate()
        {
            b[i * 8..i * 8 + 8].copy_from_slice(&v.to_ne_bytes());
        }
        b
    }

    /// A range from the bytes received.
    pub fn from_bytes(b: &[u8; RANGE_LEN]) -> Range {
        let at = |i: usize| u64::from_ne_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        Range {
            file_offset: at(0),
            len: at(1),
            input_offset: at(2),
            seq: at(3),
        }
    }
}

/// Request flag: the body ends with a plugin request (`plugin::Request`) after the words: the
/// words are `SO:FN` and the plugin function's arguments (`-C`).
pub const REQUEST_PLUGIN: u32 = 4;

/// The fixed part of every message from the engine: a kind-specific flag word, a count and the
/// length of the bytes that follow.
#[derive(Clone, Copy, Default)]
#[repr(C)]
pub struct Header {
    /// Kind-specific flags (0 when a kind has none).
    pub flags: u32,
    /// Words in a request (0 in the start-up message).
    pub words: u32,
    /// Bytes after the header: the words, each ending with NUL.
    pub len: u64,
}

const HEADER_LEN: usize = std::mem::size_of::<Header>();

impl Header {
    /// The header's bytes as they travel (its `repr(C)` layout, native byte order).
    fn to_bytes(self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[..4].copy_from_slice(&self.flags.to_ne_bytes());
        b[4..8].copy_from_slice(&self.words.to_ne_bytes());
        b[8..].copy_from_slice(&self.len.to_ne_bytes());
        b
    }

    fn from_bytes(b: &[u8; HEADER_LEN]) -> Header {
        let word = |at: usize| u32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"));
        Header {
            flags: word(0),
            words: word(4),
            len: u64::from_ne_bytes(b[8..].try_into().expect("8 bytes")),
        }
    }
}

/// The reply to a start-up message: 0, or the status the setup code (`FORKRUN_EXTRA_SETUP`)
/// failed with.
pub type SetupStatus = i32;

// The descriptor-carrying calls below build their message headers and control messages by
// hand: nix's `sendmsg` allocates its control buffer on every call and its descriptor decoding
// allocates a list, and these calls run once per batch.

/// Sends `header` + `body` on `sock`, with `fds` attached to the first byte.
pub fn send(sock: RawFd, header: &Header, body: &[u8], fds: &[RawFd]) -> io::Result<()> {
    send_with_fds(sock, &header.to_bytes(), fds)?;
    write_all(sock, body)
}

/// Sends `data` with `fds` (SCM_RIGHTS) attached, all of it.
pub fn send_with_fds(sock: RawFd, data: &[u8], fds: &[RawFd]) -> io::Result<()> {
    let mut cmsg = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    let bytes = std::mem::size_of_val(fds) as u32;
    // SAFETY: one sendmsg with SCM_RIGHTS: the header (plain data: all-zero is a valid empty
    // one) points at `iov` and `cmsg`, live locals for the whole call, which the kernel only
    // reads. CMSG_SPACE/CMSG_LEN are arithmetic; the control buffer is large enough (checked)
    // and aligned for cmsghdr (u64s), so CMSG_FIRSTHDR/CMSG_DATA point inside it, where the
    // descriptor numbers are copied.
    let r = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if !fds.is_empty() {
            let space = libc::CMSG_SPACE(bytes) as usize;
            assert!(
                space <= std::mem::size_of_val(&cmsg),
                "too many descriptors"
            );
            msg.msg_control = cmsg.as_mut_ptr().cast();
            msg.msg_controllen = space as _;
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(bytes) as _;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(c).cast(), fds.len());
        }
        loop {
            let r = libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL);
            if r >= 0 || Errno::last() != Errno::EINTR {
                break r;
            }
        }
    };
    match Errno::result(r) {
        Ok(n) if n as usize == data.len() => Ok(()),
        // The descriptors went with the first part; the rest is plain data.
        Ok(n) => write_all(sock, &data[n as usize..]),
        Err(e) => Err(e.into()),
    }
}

/// Receives exactly `buf.len()` bytes; descriptors attached to them are returned (at most
/// `max_fds`). `Ok(None)` means the peer closed the socket before the first byte.
pub fn recv_with_fds(
    sock: RawFd,
    buf: &mut [u8],
    max_fds: usize,
) -> io::Result<Option<Vec<OwnedFd>>> {
    let mut fds = Vec::new();
    let mut got = 0;
    while got < buf.len() {
        let mut cmsg = [0u64; 8];
        let mut iov = libc::iovec {
            iov_base: buf[got..].as_mut_ptr().cast(),
            iov_len: buf.len() - got,
        };
        // SAFETY: one recvmsg with SCM_RIGHTS: the header (plain data: all-zero is a valid
        // empty one) points at `iov` (the unfilled rest of `buf`) and `cmsg`, live and
        // exclusively borrowed for the whole call. After a successful call the control
        // messages walked are the ones the kernel wrote into `cmsg` (msg_controllen says how
        // much), and each SCM_RIGHTS number in them is a new descriptor of this process,
        // owned by nothing else until it is wrapped here (those over `max_fds` are closed).
        let n = unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = cmsg.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&cmsg) as _;
            let r = libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC);
            let n = match Errno::result(r) {
                Ok(n) => n as usize,
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            };
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                    // (cmsg_len is a size_t in glibc and a socklen_t in musl.)
                    let count = ((*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize)
                        / std::mem::size_of::<RawFd>();
                    let data = libc::CMSG_DATA(c).cast::<RawFd>();
                    for i in 0..count {
                        let fd = OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i)));
                        if fds.len() < max_fds {
                            fds.push(fd);
                        }
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
            n
        };
        if n == 0 {
            if got == 0 {
                return Ok(None);
            }
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the peer closed mid-message",
            ));
        }
        got += n;
    }
    Ok(Some(fds))
}

/// Asks the front end that started the engine (the user's shell, the Python caller) over the
/// control socket `ctl`: 8 bytes `[what, pid]` out, 8 bytes and at most one descriptor back.
/// `gone` names that front end in the error when the socket closed.
pub fn ask_front_end(
    ctl: &std::sync::Mutex<OwnedFd>,
    what: i32,
    pid: libc::pid_t,
    gone: &str,
) -> io::Result<(i32, Option<OwnedFd>)> {
    let ctl = ctl.lock().unwrap_or_else(|e| e.into_inner());
    let mut msg = [0u8; 8];
    msg[..4].copy_from_slice(&what.to_ne_bytes());
    msg[4..].copy_from_slice(&pid.to_ne_bytes());
    write_all(ctl.as_raw_fd(), &msg)?;
    let mut reply = [0u8; 8];
    let fds = recv_with_fds(ctl.as_raw_fd(), &mut reply, 1)?
        .ok_or_else(|| io::Error::other(format!("the calling {gone} went away")))?;
    let value = i32::from_ne_bytes(reply[..4].try_into().expect("4 bytes"));
    Ok((value, fds.into_iter().next()))
}

/// Writes all of `data` to a socket (no SIGPIPE).
pub fn write_all(sock: RawFd, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match nix::sys::socket::send(sock, data, MsgFlags::MSG_NOSIGNAL) {
            Ok(n) => data = &data[n..],
            Err(Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Reads a header (and any descriptors with it); None at end of stream.
pub fn recv_header(sock: RawFd, max_fds: usize) -> io::Result<Option<(Header, Vec<OwnedFd>)>> {
    let mut b = [0u8; HEADER_LEN];
    Ok(recv_with_fds(sock, &mut b, max_fds)?.map(|fds| (Header::from_bytes(&b), fds)))
}

/// The engine's end of one worker shell.
pub struct ShellWorker {
    host: Arc<dyn Host>,
    pid: libc::pid_t,
    sock: OwnedFd,
    body: Vec<u8>,
}

/// Why a worker shell could not be started.
#[derive(Debug)]
pub enum StartError {
    /// Starting the shell, or talking to it, failed.
    Io(io::Error),
    /// The setup code (`FORKRUN_EXTRA_SETUP`) ended with this status.
    Setup(i32),
}

impl ShellWorker {
    /// Starts a worker shell whose fd 1 is `stdout` and fd 0 is `stdin` (None: the caller's),
    /// given the `spool`'s descriptor when it reads batches there (or a plugin does), and waits
    /// until it has run the setup code.
    pub fn start(
        host: &Arc<dyn Host>,
        stdout: Option<RawFd>,
        stdin: Option<RawFd>,
        spool: Option<RawFd>,
        own_group: bool,
    ) -> Result<ShellWorker, StartError> {
        let (pid, sock) = host.start().map_err(StartError::Io)?;
        let mut w = ShellWorker {
            host: Arc::clone(host),
            pid,
            sock,
            body: Vec::new(),
        };
        let mut flags = 0;
        let mut fds = Vec::new();
        if own_group {
            flags |= HELLO_OWN_GROUP;
        }
        if let Some(fd) = stdout {
            flags |= HELLO_STDOUT;
            fds.push(fd);
        }
        if let Some(fd) = stdin {
            flags |= HELLO_STDIN;
            fds.push(fd);
        }
        if let Some(fd) = spool {
            flags |= HELLO_SPOOL;
            fds.push(fd);
        }
        let hello = Header {
            flags,
            words: 0,
            len: 0,
        };
        let sent = send(w.sock.as_raw_fd(), &hello, &[], &fds);
        match sent.and_then(|()| w.reply()) {
            Ok(Some(0)) => Ok(w),
            Ok(Some(status)) => {
                w.lost().map_err(StartError::Io)?;
                Err(StartError::Setup(status))
            }
            Ok(None) | Err(_) => match w.lost().map_err(StartError::Io)? {
                ChildEnd::Exited(c) => Err(StartError::Setup(c)),
                ChildEnd::Signaled(s) => Err(StartError::Setup(128 + s)),
            },
        }
    }

    /// The worker shell's process id.
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Sends one batch: `words` are the command and its arguments; `stdin` (with `-s`) is the
    /// read end of the batch's pipe.
    pub fn send<'a>(
        &mut self,
        words: impl Iterator<Item = &'a [u8]>,
        stdin: Option<RawFd>,
    ) -> io::Result<()> {
        self.send_call(words, stdin, None)
    }

    /// [`ShellWorker::send`] of a plugin call: `plugin` (a `plugin::Request`'s bytes) follows
    /// the words.
    pub fn send_call<'a>(
        &mut self,
        words: impl Iterator<Item = &'a [u8]>,
        stdin: Option<RawFd>,
        plugin: Option<&[u8]>,
    ) -> io::Result<()> {
        self.body.clear();
        let mut count = 0u32;
        for w in words {
            self.body.extend_from_slice(w);
            self.body.push(0);
            count += 1;
        }
        if let Some(p) = plugin {
            self.body.extend_from_slice(p);
        }
        let header = Header {
            flags: if stdin.is_some() { REQUEST_STDIN } else { 0 }
                | if plugin.is_some() { REQUEST_PLUGIN } else { 0 },
            words: count,
            len: self.body.len() as u64,
        };
        let fds: &[RawFd] = match &stdin {
            Some(fd) => std::slice::from_ref(fd),
            None => &[],
        };
        send(self.sock.as_raw_fd(), &header, &self.body, fds)
    }

    /// Sends one batch as a range of the spool (a worker started with [`HELLO_SPOOL`]).
    pub fn send_range(&mut self, range: Range) -> io::Result<()> {
        let header = Header {
            flags: REQUEST_RANGE,
            words: 0,
            len: RANGE_LEN as u64,
        };
        send(self.sock.as_raw_fd(), &header, &range.to_bytes(), &[])
    }

    /// Waits for the batch sent last to end: its status, or None when the worker shell went
    /// away (then [`ShellWorker::reap`] says how).
    pub fn wait(&mut self) -> Option<i32> {
        // A broken socket is a worker that went away too.
        self.reply().ok().flatten()
    }

    /// Reaps a worker shell that went away; the worker is unusable after this.
    pub fn reap(&mut self) -> io::Result<ChildEnd> {
        self.lost()
    }

    fn reply(&mut self) -> io::Result<Option<i32>> {
        let mut b = [0u8; 4];
        Ok(recv_with_fds(self.sock.as_raw_fd(), &mut b, 0)?.map(|_| i32::from_ne_bytes(b)))
    }

    /// The worker shell went away: reap it.
    fn lost(&mut self) -> io::Result<ChildEnd> {
        let pid = std::mem::replace(&mut self.pid, 0);
        if pid == 0 {
            return Ok(ChildEnd::Signaled(libc::SIGKILL));
        }
        self.host.reap(pid)
    }
}

impl Drop for ShellWorker {
    fn drop(&mut self) {
        // Closing the socket ends an idle worker shell; reap it so no zombie is left.
        if self.pid != 0 {
            let _ = shutdown(self.sock.as_raw_fd(), Shutdown::Both);
            let _ = self.host.reap(self.pid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_travels_as_its_four_numbers() {
        let r = Range {
            file_offset: 4096 + 17,
            len: u64::MAX - 1,
            input_offset: 17,
            seq: 9,
        };
        let b = r.to_bytes();
        assert_eq!(b.len(), RANGE_LEN);
        assert_eq!(Range::from_bytes(&b), r);
        assert_eq!(&b[8..16], &(u64::MAX - 1).to_ne_bytes());
    }
}
