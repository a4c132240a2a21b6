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
use emu::engine::{Engine, Side};
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
/// counts as running. So every [`CPU_CHECK`] the emulator reads its own CPU
/// time, and while it has used more than [`MAX_CPU_PERMILLE`] of the
/// current [`CPU_WINDOW`] it naps until its next event is due between
/// turns instead of busy-waiting (at least [`MIN_NAP_NS`], even with work
/// waiting, at most [`MAX_NAP_NS`]): deliveries late by tens of
/// microseconds instead of milliseconds. Under load the packets due after a
/// nap go out coalesced, which is less work.
const MAX_CPU_PERMILLE: u64 = 900;
const CPU_WINDOW: Time = 10_000_000 * PS_PER_NS;
const CPU_CHECK: Time = 200_000 * PS_PER_NS;
const MIN_NAP_NS: u64 = 10_000;
const MAX_NAP_NS: u64 = 100_000;

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
    let cfg = match std::fs::read_to_string(&config).map_err(|e| e.to_string()).and_then(|t| Config::parse(&t)) {
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
    let clock = move || -> Time { (sys::monotonic_ns() - epoch) * PS_PER_NS };
    let mut engine = Engine::new(cfg.engine.clone());
    let spin = cfg.spin_ns * PS_PER_NS;
    let batch = cfg.batch_ns * PS_PER_NS;
    let mut write_errors = 0u64;
    let mut read_packets = 0u64;
    let mut wire_packets = 0u64;
    // With offload a read returns a header and up to 64 KB (a TSO super-packet).
    let mut frame = vec![0u8; if cfg.engine.frames { wire::VNET_HDR_LEN + (1 << 16) + 256 } else { 0 }];
    let wall = std::time::Instant::now();
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "ready {}", realtime as u8).and_then(|_| stdout.flush()).map_err(|e| e.to_string())?;
    }

    // Time spent in write(2): the kernel processes the packet in it
    // (receiving TCP, and what the receiver sends in response).
    let mut write_ns = Histogram::new();
    let mut wake_ns = Histogram::new();
    let offload = cfg.engine.frames;
    let mut deliver = |side: Side, head: &[u8], b: &[u8]| -> Time {
        let before = clock();
        let fd = if side == Side::Snd { sfd } else { rfd };
        if !(if head.is_empty() { sys::write(fd, b) } else { sys::write2(fd, head, b) }) {
            write_errors += 1;
        }
        let after = clock();
        write_ns.record((after - before) / PS_PER_NS);
        after
    };
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
    // (wall time, thread CPU ns) at the start of the current CPU window; naps taken.
    let mut window: (Time, u64) = (clock(), sys::thread_cpu_ns());
    let mut next_check = clock();
    let mut over = false;
    let mut forced_sleeps = 0u64;
    while !stop && !TERMINATE.load(Ordering::Relaxed) {
        let now = clock();
        engine.run_until(now, &mut deliver);
        if cpu_at_end.is_none() && engine.finished() {
            cpu_at_end = Some(sys::thread_cpu_ns());
            busy = busy_from.map(|(t, i)| (now - t).saturating_sub(idle - i));
        }
        let wait = match engine.next_event() {
            Some(t) => (t + batch).saturating_sub(now),
            None => 50_000 * PS_PER_NS * 1000, // 50 ms
        };
        if now >= next_check {
            // Over the CPU budget of this window (see MAX_CPU_PERMILLE): short naps until the next check.
            next_check = now + CPU_CHECK;
            let cpu = sys::thread_cpu_ns();
            if now - window.0 > CPU_WINDOW {
                window = (now, cpu);
                over = false;
            } else {
                over = cpu - window.1 > (now - window.0) / PS_PER_NS * MAX_CPU_PERMILLE / 1000;
            }
        }
        let timeout = if over {
            // A nap until the next event is due (within MIN_NAP_NS, MAX_NAP_NS), then a
            // look at the devices without waiting.
            let before = clock();
            sys::sleep_ns((wait / PS_PER_NS).clamp(MIN_NAP_NS, MAX_NAP_NS));
            idle += clock() - before;
            forced_sleeps += 1;
            engine.run_until(clock(), &mut deliver);
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
                            let now = clock();
                            engine.run_until(now, &mut deliver);
                            wire_packets += engine.ingress_frame(now, side, &mut frame[..n]) as u64;
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
                        let now = clock();
                        engine.run_until(now, &mut deliver);
                        engine.ingress(now, side, id, n);
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
        write_errors,
        read_packets,
        wire_packets,
        offload,
        forced_sleeps,
        measured_cpu_seconds: cpu_at_start.zip(cpu_at_end).map(|(a, b)| (b - a) as f64 / 1e9),
        busy_seconds: busy.map(|b| b as f64 / 1e12),
        write_ns,
        wake_ns,
        cpu_latency_qos,
        pinned_cpu,
    };
    report::write(&out, &mut engine, &info).map_err(|e| format!("writing {}: {e}", out.display()))?;
    drop((snd, rcv, qos));
    Ok(())
}
