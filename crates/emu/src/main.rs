//! `ccarena-emu --config FILE --out DIR`: the link emulator process.
//!
//! It creates the two TUN devices named in the configuration (in its own
//! network namespace; the caller moves them into the experiment's
//! namespaces), switches to SCHED_FIFO, prints `ready <realtime 0|1>` and
//! forwards packets. Commands arrive on standard input, one per line:
//!
//! * `start T0` — the measurement starts at CLOCK_MONOTONIC nanosecond T0
//!   and ends one experiment duration later;
//! * `stop` (or end of input, or SIGTERM) — write the output folder and exit.
//!
//! The process dies with its parent (PR_SET_PDEATHSIG), so a killed
//! experiment never leaves it running; the devices vanish with it.

use emu::config::Config;
use emu::engine::{Answer, Cause, Engine, Side};
use emu::report::{self, RunInfo};
use emu::{sys, wire};
use sim::event::{Time, PS_PER_NS};
use sim::hist::Histogram;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

static TERMINATE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigterm(_: libc::c_int) {
    TERMINATE.store(true, Ordering::SeqCst);
}

/// Packets read from one device before the other gets a turn.
const READ_BATCH: usize = 64;

/// Linux lets real-time tasks run `kernel.sched_rt_runtime_us` (950 ms) of
/// every `sched_rt_period_us` (1 s) and then stops them for the rest of the
/// period: up to 50 ms in which nothing would be delivered. Busy-waiting
/// counts as running. The kernel counts a CPU's real-time run time and takes
/// one runtime off the count at the end of each period (sched/rt.c,
/// do_sched_rt_period_timer), so a task that never runs more than that in
/// any second is never stopped. Every [`CPU_CHECK`] the emulator reads its
/// own CPU time, and while it has used more than [`MAX_CPU_PERMILLE`] of the
/// last [`CPU_WINDOW`] it naps until its next event is due between turns
/// instead of busy-waiting (at least [`MIN_NAP_NS`], even with work waiting,
/// at most [`MAX_NAP_NS`]): deliveries late by tens of microseconds instead
/// of milliseconds, and only when it has to. Under load the packets due
/// after a nap go out coalesced, which is less work. Up to
/// [`HARD_CPU_PERMILLE`] it naps only where no delivery to the senders falls
/// due within the nap and a timer's overshoot ([`NAP_MARGIN_NS`]): their
/// ACKs clock the senders (see `Engine::next_wake`), while a late delivery
/// to a receiver is taken back on the way of its ACK (`engine::Answer`).
const MAX_CPU_PERMILLE: u64 = 920;
const HARD_CPU_PERMILLE: u64 = 940;
const NAP_MARGIN_NS: u64 = 40_000;
const CPU_WINDOW: Time = 1_000_000_000 * PS_PER_NS;
const CPU_CHECK: Time = 200_000 * PS_PER_NS;
const MIN_NAP_NS: u64 = 10_000;
const MAX_NAP_NS: u64 = 100_000;

/// Packets taken from the receivers' device right after each write to it,
/// at most: the answers the receiving TCP sent while taking the data (see
/// [`Answer`]). Anything else waits for the next turn of the loop.
const MAX_ANSWERS: usize = 4;
/// Buffers for answers read and not yet in the engine.
const ANSWER_BUFFERS: usize = 16;
/// Rounds of running the engine and taking in answers per call of `Devices::run_until`.
const ANSWER_ROUNDS: usize = 4;

/// The two devices as the engine writes to them.
struct Devices {
    sfd: i32,
    rfd: i32,
    offload: bool,
    epoch: u64,
    write_errors: u64,
    /// Time spent in write(2): the kernel processes the packet in it
    /// (receiving TCP, and what the receiver sends in response).
    write_ns: Histogram,
    /// Buffers for the answers read after writes, and those free.
    answers: Vec<Vec<u8>>,
    free: Vec<usize>,
    /// Answers read, not yet in the engine: (buffer, length, what they answer);
    /// and those entering it.
    answered: Vec<(usize, usize, Answer)>,
    entering: Vec<(usize, usize, Answer)>,
    answers_read: u64,
    /// Wire packets the answers carried.
    answer_wire_packets: u64,
}

impl Devices {
    fn clock(&self) -> Time {
        since(self.epoch)
    }

    /// Writes one packet (after `head` with offload) and, after a write to
    /// the receivers, reads what they answered at once.
    fn deliver(&mut self, side: Side, head: &[u8], b: &[u8], cause: Cause) -> Time {
        let before = self.clock();
        let fd = if side == Side::Snd { self.sfd } else { self.rfd };
        if !(if head.is_empty() { sys::write(fd, b) } else { sys::write2(fd, head, b) }) {
            self.write_errors += 1;
        }
        let written = self.clock();
        self.write_ns.record((written - before) / PS_PER_NS);
        if side == Side::Rcv {
            for _ in 0..MAX_ANSWERS {
                let Some(&k) = self.free.last() else { break };
                match sys::read(self.rfd, &mut self.answers[k]) {
                    Ok(Some(n)) => {
                        let read = self.clock();
                        self.free.pop();
                        self.answered.push((k, n, Answer { flow: cause.flow, due: cause.due, written, read }));
                        self.answers_read += 1;
                    }
                    // Nothing there, or an error the main loop's read will report.
                    _ => break,
                }
            }
        }
        written
    }

    /// Runs the engine to `now`, then hands it the answers read meanwhile,
    /// each at a time after it was read (with everything due by then run
    /// first; answers to those writes in turn, at most [`ANSWER_ROUNDS`]
    /// times, so that the devices are read again soon; the rest wait for
    /// the next call). Returns the engine's time: later packets enter no
    /// earlier.
    fn run_until(&mut self, engine: &mut Engine, now: Time) -> Time {
        engine.run_until(now, &mut |s, h, b, c| self.deliver(s, h, b, c));
        let mut now = now;
        for _ in 0..ANSWER_ROUNDS {
            if self.answered.is_empty() {
                break;
            }
            std::mem::swap(&mut self.answered, &mut self.entering);
            now = self.clock();
            engine.run_until(now, &mut |s, h, b, c| self.deliver(s, h, b, c));
            for &(k, n, answer) in &self.entering {
                if self.offload {
                    self.answer_wire_packets +=
                        engine.ingress_frame(now, Side::Rcv, &mut self.answers[k][..n], Some(answer)) as u64;
                } else {
                    let id = engine.alloc();
                    engine.buf_mut(id)[..n].copy_from_slice(&self.answers[k][..n]);
                    engine.ingress(now, Side::Rcv, id, n, Some(answer));
                    self.answer_wire_packets += 1;
                }
                self.free.push(k);
            }
            self.entering.clear();
        }
        now
    }
}

/// The emulator's clock: time since `epoch` (CLOCK_MONOTONIC ns), ps.
fn since(epoch: u64) -> Time {
    (sys::monotonic_ns() - epoch) * PS_PER_NS
}

fn usage() -> String {
    "usage: ccarena-emu --config FILE --out DIR".to_string()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut config = None;
    let mut out = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--config" => config = it.next().cloned(),
            "--out" => out = it.next().cloned(),
            "-h" | "--help" => {
                println!("{}", usage());
                return;
            }
            other => {
                eprintln!("ccarena-emu: unknown argument {other:?}\n{}", usage());
                std::process::exit(2);
            }
        }
    }
    let (Some(config), Some(out)) = (config, out) else {
        eprintln!("{}", usage());
        std::process::exit(2);
    };
    let cfg = match Config::load(std::path::Path::new(&config)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ccarena-emu: {config}: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(cfg, PathBuf::from(out)) {
        eprintln!("ccarena-emu: {e}");
        std::process::exit(1);
    }
}

fn run(cfg: Config, out: PathBuf) -> Result<(), String> {
    sys::die_with_parent().map_err(|e| e.to_string())?;
    // SAFETY: installing a handler that only stores to an atomic; ignoring SIGINT
    // (the orchestrator handles Ctrl-C and tells us to stop).
    unsafe {
        libc::signal(libc::SIGTERM, on_sigterm as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
    let snd = sys::tun_create(&cfg.tun_snd, cfg.engine.frames).map_err(|e| e.to_string())?;
    let rcv = sys::tun_create(&cfg.tun_rcv, cfg.engine.frames).map_err(|e| e.to_string())?;
    let (realtime, realtime_error) = if cfg.rt_priority > 0 {
        match sys::realtime(cfg.rt_priority) {
            Ok(()) => (true, None),
            Err(e) => (false, Some(e.to_string())),
        }
    } else {
        (false, Some("not requested".to_string()))
    };
    // Kept open for the whole run; failure only costs precision (reported).
    let qos = sys::cpu_latency_qos();
    let cpu_latency_qos = qos.is_ok();
    // Pinning is a refinement: a CPU outside this process's set only costs precision.
    let pinned_cpu = cfg.cpu.filter(|&cpu| sys::pin_to_cpu(cpu).is_ok());
    let (sfd, rfd) = (snd.as_raw_fd(), rcv.as_raw_fd());
    // SAFETY: fcntl on our own standard input.
    unsafe {
        let fl = libc::fcntl(0, libc::F_GETFL);
        libc::fcntl(0, libc::F_SETFL, fl | libc::O_NONBLOCK);
    }

    let epoch = sys::monotonic_ns();
    let clock = move || since(epoch);
    let mut engine = Engine::new(cfg.engine.clone());
    let spin = cfg.spin_ns * PS_PER_NS;
    let batch = cfg.batch_ns * PS_PER_NS;
    let mut read_packets = 0u64;
    let mut wire_packets = 0u64;
    // With offload a read returns a header and up to 64 KB (a TSO super-packet).
    let frame_len = if cfg.engine.frames { wire::VNET_HDR_LEN + (1 << 16) + 256 } else { cfg.engine.max_packet };
    let offload = cfg.engine.frames;
    let mut frame = vec![0u8; if offload { frame_len } else { 0 }];
    let mut dev = Devices {
        sfd,
        rfd,
        offload,
        epoch,
        write_errors: 0,
        write_ns: Histogram::new(),
        answers: (0..ANSWER_BUFFERS).map(|_| vec![0u8; frame_len]).collect(),
        free: (0..ANSWER_BUFFERS).collect(),
        answered: Vec::with_capacity(ANSWER_BUFFERS),
        entering: Vec::with_capacity(ANSWER_BUFFERS),
        answers_read: 0,
        answer_wire_packets: 0,
    };
    let wall = std::time::Instant::now();
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "ready {}", realtime as u8).and_then(|_| stdout.flush()).map_err(|e| e.to_string())?;
    }

    let mut wake_ns = Histogram::new();
    let mut fds = [
        libc::pollfd { fd: sfd, events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: rfd, events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 },
    ];
    let mut command = Vec::<u8>::new();
    let mut stop = false;
    // CPU time at the start and the end of the measurement, and time spent
    // working (not waiting or polling for work) in it.
    let (mut cpu_at_start, mut cpu_at_end): (Option<u64>, Option<u64>) = (None, None);
    let mut idle: Time = 0;
    let (mut busy_from, mut busy): (Option<(Time, Time)>, Option<Time>) = (None, None);
    // (wall time, thread CPU ns) every CPU_CHECK over the last CPU_WINDOW, and
    // the thread CPU time one window ago (or at the start).
    let mut window: std::collections::VecDeque<(Time, u64)> =
        std::collections::VecDeque::with_capacity((CPU_WINDOW / CPU_CHECK) as usize + 2);
    let mut cpu_window_ago = sys::thread_cpu_ns();
    let mut next_check = clock();
    let (mut over, mut hard_over) = (false, false);
    let mut forced_sleeps = 0u64;
    while !stop && !TERMINATE.load(Ordering::Relaxed) {
        let now = dev.run_until(&mut engine, clock());
        if cpu_at_end.is_none() && engine.finished() {
            cpu_at_end = Some(sys::thread_cpu_ns());
            busy = busy_from.map(|(t, i)| (now - t).saturating_sub(idle - i));
        }
        let wait = match engine.next_wake(batch) {
            Some(t) => t.saturating_sub(now),
            None => 50_000 * PS_PER_NS * 1000, // 50 ms
        };
        if now >= next_check {
            // Over the CPU budget of the last second (see MAX_CPU_PERMILLE): short naps until the next check.
            next_check = now + CPU_CHECK;
            let cpu = sys::thread_cpu_ns();
            while let Some(&(t, c)) = window.front() {
                if now - t < CPU_WINDOW {
                    break;
                }
                cpu_window_ago = c;
                window.pop_front();
            }
            window.push_back((now, cpu));
            let used = cpu - cpu_window_ago;
            over = used > CPU_WINDOW / PS_PER_NS * MAX_CPU_PERMILLE / 1000;
            hard_over = used > CPU_WINDOW / PS_PER_NS * HARD_CPU_PERMILLE / 1000;
        }
        // Room before the next delivery to the senders for a nap and its overshoot.
        let ack_room = engine
            .next_to_senders()
            .map_or(u64::MAX, |t| (t.saturating_sub(now) / PS_PER_NS).saturating_sub(NAP_MARGIN_NS));
        let timeout = if hard_over || (over && ack_room >= MIN_NAP_NS) {
            // A nap until the next event is due (within MIN_NAP_NS, MAX_NAP_NS, and with
            // only the soft budget spent, the room before the next ACK), then a look at
            // the devices without waiting.
            let before = clock();
            let nap = (wait / PS_PER_NS).clamp(MIN_NAP_NS, MAX_NAP_NS);
            sys::sleep_ns(if hard_over { nap } else { nap.min(ack_room) });
            idle += clock() - before;
            forced_sleeps += 1;
            dev.run_until(&mut engine, clock());
            0
        } else if wait > spin {
            (wait - spin) / PS_PER_NS
        } else {
            0
        };
        for f in fds.iter_mut() {
            f.revents = 0;
        }
        let before = clock();
        let ready = sys::ppoll(&mut fds, timeout).map_err(|e| format!("ppoll: {e}"))?;
        idle += clock() - before;
        if ready == 0 {
            if timeout > 0 {
                // How late the timer woke us, beyond the timeout asked for.
                wake_ns.record(((clock() - before) / PS_PER_NS).saturating_sub(timeout));
            }
            continue;
        }
        for (k, side) in [(0usize, Side::Snd), (1, Side::Rcv)] {
            if fds[k].revents & libc::POLLIN == 0 {
                if fds[k].revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
                    return Err(format!("device {} failed", if k == 0 { &cfg.tun_snd } else { &cfg.tun_rcv }));
                }
                continue;
            }
            for _ in 0..READ_BATCH {
                if offload {
                    match sys::read(fds[k].fd, &mut frame) {
                        Ok(Some(n)) => {
                            let now = dev.run_until(&mut engine, clock());
                            wire_packets += engine.ingress_frame(now, side, &mut frame[..n], None) as u64;
                            read_packets += 1;
                        }
                        Ok(None) => break,
                        Err(e) => return Err(format!("read: {e}")),
                    }
                    continue;
                }
                let id = engine.alloc();
                match sys::read(fds[k].fd, engine.buf_mut(id)) {
                    Ok(Some(n)) => {
                        let now = dev.run_until(&mut engine, clock());
                        engine.ingress(now, side, id, n, None);
                        read_packets += 1;
                        wire_packets += 1;
                    }
                    Ok(None) => {
                        engine.release(id);
                        break;
                    }
                    Err(e) => {
                        engine.release(id);
                        return Err(format!("read: {e}"));
                    }
                }
            }
        }
        if fds[2].revents != 0 {
            let mut buf = [0u8; 256];
            loop {
                // SAFETY: read into a stack buffer of its size.
                let n = unsafe { libc::read(0, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
                if n == 0 {
                    stop = true; // end of input: the orchestrator is gone or done
                    break;
                }
                if n < 0 {
                    break;
                }
                command.extend_from_slice(&buf[..n as usize]);
            }
            while let Some(pos) = command.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = command.drain(..=pos).collect();
                let line = String::from_utf8_lossy(&line);
                let words: Vec<&str> = line.split_whitespace().collect();
                match words.as_slice() {
                    ["start", t0] => {
                        let t0: u64 = t0.parse().map_err(|_| format!("bad start time {t0:?}"))?;
                        engine.start(t0.saturating_sub(epoch) * PS_PER_NS);
                        cpu_at_start = Some(sys::thread_cpu_ns());
                        busy_from = Some((clock(), idle));
                    }
                    ["stop"] => stop = true,
                    [] => {}
                    other => return Err(format!("unknown command {other:?}")),
                }
            }
        }
    }
    let info = RunInfo {
        realtime,
        realtime_error,
        spin_ns: cfg.spin_ns,
        wall_seconds: wall.elapsed().as_secs_f64(),
        write_errors: dev.write_errors,
        read_packets: read_packets + dev.answers_read,
        wire_packets: wire_packets + dev.answer_wire_packets,
        offload,
        forced_sleeps,
        measured_cpu_seconds: cpu_at_start.zip(cpu_at_end).map(|(a, b)| (b - a) as f64 / 1e9),
        busy_seconds: busy.map(|b| b as f64 / 1e12),
        write_ns: dev.write_ns,
        wake_ns,
        cpu_latency_qos,
        pinned_cpu,
    };
    report::write(&out, &mut engine, &info).map_err(|e| format!("writing {}: {e}", out.display()))?;
    drop((snd, rcv, qos));
    Ok(())
}
