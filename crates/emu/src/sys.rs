//! Thin wrappers over the Linux calls the emulator makes: TUN devices,
//! real-time scheduling, the monotonic clock and `ppoll`.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `_IOW('T', 202, int)` from linux/if_tun.h.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
/// `_IOW('T', 208, unsigned int)`: which offloads the reader handles.
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
/// Checksum, TCP segmentation for IPv4 and TCP segmentation of segments with CWR.
const TUN_F_CSUM: libc::c_uint = 0x01;
const TUN_F_TSO4: libc::c_uint = 0x02;
const TUN_F_TSO_ECN: libc::c_uint = 0x08;

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags.
#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

fn last_error(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Creates a TUN device (`IFF_TUN | IFF_NO_PI`: reads and writes are bare
/// IP packets) named `name` in the current network namespace and returns
/// its non-blocking file descriptor. The device disappears when the
/// descriptor is closed, wherever it has been moved.
///
/// With `offload`, every packet read or written is preceded by a
/// [`crate::wire::VnetHdr`] (`IFF_VNET_HDR`), and the device tells the
/// kernel it does checksums and TCP segmentation (`TUNSETOFFLOAD`), so the
/// kernel's TCP hands over super-packets of up to 64 KB and leaves checksums
/// to the reader, as it does with a NIC that has TSO.
pub fn tun_create(name: &str, offload: bool) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad device name {name:?}")));
    }
    let path = CString::new("/dev/net/tun").expect("no NUL");
    // SAFETY: plain open(2) of a NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC | libc::O_NONBLOCK) };
    if fd < 0 {
        return Err(last_error("open /dev/net/tun"));
    }
    // SAFETY: fd was just returned by open and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let flags = IFF_TUN | IFF_NO_PI | if offload { IFF_VNET_HDR } else { 0 };
    let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags, _pad: [0; 22] };
    for (d, s) in req.name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: TUNSETIFF reads a struct ifreq, which IfReq lays out.
    let rc = unsafe { libc::ioctl(owned.as_raw_fd(), TUNSETIFF, &mut req as *mut IfReq) };
    if rc < 0 {
        return Err(last_error(&format!("TUNSETIFF {name}")));
    }
    if offload {
        let features = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO_ECN;
        // SAFETY: TUNSETOFFLOAD takes its argument by value.
        if unsafe { libc::ioctl(owned.as_raw_fd(), TUNSETOFFLOAD, features as libc::c_ulong) } < 0 {
            return Err(last_error(&format!("TUNSETOFFLOAD {name}")));
        }
    }
    Ok(owned)
}

/// Switches the calling thread to SCHED_FIFO at `priority` and locks its
/// memory, so that wake-ups are not delayed by other tasks or page faults.
pub fn realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param { sched_priority: priority };
    // SAFETY: sched_setscheduler with a valid sched_param for this process.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        return Err(last_error("sched_setscheduler(SCHED_FIFO)"));
    }
    // SAFETY: mlockall has no memory-safety preconditions.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
        return Err(last_error("mlockall"));
    }
    Ok(())
}

/// Asks cpuidle to keep every CPU out of halt while the returned file is
/// open (PM QoS: a 0 µs wake-up latency request, as cyclictest makes): in a
/// virtual machine a halted CPU takes tens to hundreds of microseconds to
/// wake, which would show as delay. The request ends with the process.
pub fn cpu_latency_qos() -> io::Result<std::fs::File> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).open("/dev/cpu_dma_latency")?;
    f.write_all(&0i32.to_ne_bytes())?;
    Ok(f)
}

/// Binds the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET writes inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(last_error(&format!("sched_setaffinity(cpu {cpu})")));
        }
    }
    Ok(())
}

/// Asks the kernel to kill this process when its parent exits; fails if the
/// parent is already gone (so that an orphan never keeps devices alive).
pub fn die_with_parent() -> io::Result<()> {
    // SAFETY: getppid and prctl(PR_SET_PDEATHSIG) have no preconditions.
    let parent = unsafe { libc::getppid() };
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) } != 0 {
        return Err(last_error("prctl(PR_SET_PDEATHSIG)"));
    }
    if unsafe { libc::getppid() } != parent || parent == 1 {
        return Err(io::Error::other("the parent process has exited"));
    }
    Ok(())
}

/// CLOCK_MONOTONIC, nanoseconds (the clock Python's time.monotonic_ns reads).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Waits up to `timeout_ns` for the descriptors' events (0: just look).
/// Interruption by a signal counts as a timeout.
pub fn ppoll(fds: &mut [libc::pollfd], timeout_ns: u64) -> io::Result<usize> {
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: fds is a valid slice of pollfd; ts lives across the call.
    let rc = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(e);
    }
    Ok(rc as usize)
}

/// read(2) into `buf`: Some(n), or None when nothing is available.
#[inline]
pub fn read(fd: i32, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: buf is valid for buf.len() bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(n as usize))
}

/// writev(2) of a header and a packet as one; false if the device refused it.
#[inline]
pub fn write2(fd: i32, head: &[u8], buf: &[u8]) -> bool {
    let iov = [
        libc::iovec { iov_base: head.as_ptr() as *mut libc::c_void, iov_len: head.len() },
        libc::iovec { iov_base: buf.as_ptr() as *mut libc::c_void, iov_len: buf.len() },
    ];
    // SAFETY: both iovecs point at live slices of their lengths; writev only reads them.
    let n = unsafe { libc::writev(fd, iov.as_ptr(), 2) };
    n == (head.len() + buf.len()) as isize
}

/// write(2) of one whole packet; false if the device refused it.
#[inline]
pub fn write(fd: i32, buf: &[u8]) -> bool {
    // SAFETY: buf is valid for buf.len() bytes.
    let n = unsafe { libc::write(fd, buf.as_ptr() as *const libc::c_void, buf.len()) };
    n == buf.len() as isize
}

/// Sleeps `ns` nanoseconds (less if a signal arrives).
pub fn sleep_ns(ns: u64) {
    let ts =
        libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long };
    // SAFETY: nanosleep reads one timespec; the remainder is not wanted.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// CPU time of the calling thread, nanoseconds: user and system, so the
/// kernel's work in its system calls (such as the receivers' TCP in a write)
/// counts — what RT throttling counts. The emulator has one thread.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
