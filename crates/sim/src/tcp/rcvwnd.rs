//! Linux's receive window (6.x, `net/ipv4/tcp_input.c` and `tcp_output.c`):
//! what the receiver advertises, how that grows, and the immediate ACK each
//! growth asks for.
//!
//! * The connection opens with `rcv_wnd = rcv_ssthresh` = 10 segments
//!   (`tcp_select_initial_window`, `TCP_DEFAULT_INIT_RCVWND`), a receive
//!   buffer of `tcp_rmem[1]` and a window clamp of the buffer's window less
//!   one segment (`tcp_init_buffer_space`).
//! * Each arriving data segment of at least 128 bytes raises `rcv_ssthresh`
//!   by max(2·advmss, 2·len), up to the clamp and the free space
//!   (`tcp_grow_window`), and puts the receiver in quick-ACK mode for one ACK
//!   (`icsk_ack.quick |= 1`): while the window grows, every segment is
//!   acknowledged at once.
//! * Once per receiver RTT, the bytes the application read in the last RTT
//!   (`copied`) set the buffer: if more than the last measure,
//!   `rcvwin = 2·copied + 16·advmss`, grown by twice its share of the
//!   increase (`rcvwin += 2·rcvwin·(copied − space)/space`), and
//!   `rcvbuf = min(rcvwin / ratio, tcp_rmem[2])`; the clamp follows
//!   (`tcp_rcv_space_adjust`, dynamic right-sizing).
//! * The window advertised on an ACK is the free space capped by
//!   `rcv_ssthresh`, rounded up to the window scale, and never below what
//!   is left of the last one (`__tcp_select_window`, `tcp_select_window`).
//! * Buffer bytes convert to window bytes by `scaling_ratio`/256
//!   (`tcp_win_from_space`): 128 at first, then payload·256/truesize of the
//!   first full-sized segment (`tcp_measure_rcv_mss`).
//!
//! An application's clamp (`TCP_WINDOW_CLAMP` before the connection opens,
//! as ccarena's emulator sets `rwnd`) caps the first clamp and sets the
//! window scale (`tcp_select_initial_window`: the scale for the smaller of
//! the clamp and `tcp_rmem[2]`), so the window field can carry at most
//! 65535 << scale; autotuning raises the clamp past it as ever.
//!
//! The application reads each in-order segment as it arrives, so the buffer
//! holds only segments above a hole. The receiver's RTT estimate (Linux's
//! `rcv_rtt_est`, from timestamps) is the sender's smoothed RTT, handed in by
//! the engine: both smooth the same round trip with gain 1/8.
//!
//! Measured on Linux 6.18 (ccarena's emulator, one CUBIC flow at 50 Mbit/s,
//! 40 ms, `ss -tmi` at the receiver): the window opens at 14,480 bytes with
//! 131,072 of buffer, and reaches a buffer of 6,621,440 bytes with
//! `rcv_ssthresh` 4,136,960, a ratio of 160/256; one queued 1448-byte
//! segment takes 2,304 bytes of buffer (`skmem` r2304), which is the same
//! ratio (1448·256/2304 = 160).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::event::Time;

/// Linux `TCP_DEFAULT_INIT_RCVWND`: the first window, segments.
const INIT_RCVWND_SEGS: u64 = 10;
/// Linux `TCP_RMEM_TO_WIN_SCALE`: `scaling_ratio` is in 1/256.
const RMEM_TO_WIN_SCALE: u32 = 8;
/// Linux `TCP_DEFAULT_SCALING_RATIO`: half the buffer is window until a
/// full-sized segment has been measured.
const DEFAULT_SCALING_RATIO: u64 = 1 << (RMEM_TO_WIN_SCALE - 1);
/// Linux `TCP_MAX_WSCALE`.
const MAX_WSCALE: u32 = 14;
/// Segments shorter than this do not grow the window (`tcp_event_data_recv`).
const GROW_MIN_LEN: u32 = 128;
/// The timestamp option (RFC 7323) as Linux aligns it: the advertised MSS
/// (MTU − 40) is the payload of a segment carrying it plus these 12 bytes.
const TIMESTAMP_OPTION: u32 = 12;

/// The receiver's memory settings (Linux's sysctls and one segment's cost).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RcvBufConfig {
    /// `net.ipv4.tcp_rmem[1]`: the initial receive buffer, bytes (Linux 131,072).
    pub rmem_default: u64,
    /// `net.ipv4.tcp_rmem[2]`: the most autotuning gives, bytes (32 MiB since
    /// a 2025 patch raised tcp_init's `max_rshare`, as in Linux 6.18; 6 MiB
    /// before).
    pub rmem_max: u64,
    /// Buffer bytes one full-sized segment takes (its skb's truesize).
    pub truesize: u32,
}

impl RcvBufConfig {
    /// Linux 6.18's defaults, with the truesize measured on it (module doc).
    pub const LINUX: RcvBufConfig = RcvBufConfig { rmem_default: 131_072, rmem_max: 33_554_432, truesize: 2_304 };
}

/// One connection's receive window (see the module doc). Sizes in bytes.
#[derive(Clone, Debug)]
pub struct RcvWindow {
    cfg: RcvBufConfig,
    /// Payload bytes per full segment (Linux `rcv_mss`, the sender's MSS).
    mss: u64,
    /// The MSS this receiver advertised (Linux `advmss`: MTU − 40).
    advmss: u64,
    /// `scaling_ratio`, in 1/256.
    ratio: u64,
    /// Whether a full-sized segment has set `ratio`.
    measured: bool,
    rcvbuf: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    /// The window advertised last, and `rcv_nxt` (bytes) when it was.
    rcv_wnd: u64,
    rcv_wup: u64,
    /// Linux `rcv_wscale`.
    pub wscale: u32,
    /// `rcvq_space`: bytes read in the last measured RTT, bytes read at its
    /// start, and when it started.
    space: u64,
    space_seq: u64,
    space_time: Time,
}

impl RcvWindow {
    /// A new connection whose peer sends `mss`-byte segments (timestamps on),
    /// its window clamped at `user_clamp` bytes if given (see the module doc).
    pub fn new(cfg: RcvBufConfig, mss: u32, user_clamp: Option<u64>) -> RcvWindow {
        let user_clamp = user_clamp.unwrap_or(u64::MAX);
        let mss = mss as u64;
        let advmss = mss + TIMESTAMP_OPTION as u64;
        let full = win_from_space(DEFAULT_SCALING_RATIO, cfg.rmem_default);
        // tcp_select_initial_window: the buffer's window in whole segments, at
        // most 10 of them; the scale for the largest buffer autotuning can give.
        let space = if full > mss { full / mss * mss } else { full };
        let rcv_wnd = space.min(INIT_RCVWND_SEGS * mss);
        let wscale = (63 - cfg.rmem_max.max(space).min(user_clamp).max(1).leading_zeros()).saturating_sub(15);
        let wscale = wscale.min(MAX_WSCALE);
        // tcp_init_buffer_space: the clamp is the buffer's window less one segment
        // (tcp_app_win = 31 keeps all of it but that segment).
        let window_clamp = if full > 2 * advmss { (2 * advmss).max(full - advmss) } else { full }.min(user_clamp);
        let rcv_ssthresh = rcv_wnd.min(window_clamp);
        RcvWindow {
            cfg,
            mss,
            advmss,
            ratio: DEFAULT_SCALING_RATIO,
            measured: false,
            rcvbuf: cfg.rmem_default,
            window_clamp,
            rcv_ssthresh,
            rcv_wnd,
            rcv_wup: 0,
            wscale,
            space: rcv_ssthresh.min(rcv_wnd).min(INIT_RCVWND_SEGS * advmss),
            space_seq: 0,
            space_time: 0,
        }
    }

    /// The window the connection opens with (the SYN's, unscaled).
    pub fn initial_window(&self) -> u64 {
        self.rcv_wnd
    }

    /// Window bytes of `held` segments' worth of free buffer (Linux `tcp_space`).
    fn free_space(&self, held: u64) -> u64 {
        win_from_space(self.ratio, self.rcvbuf.saturating_sub(held * self.cfg.truesize as u64))
    }

    /// A data segment of `len` payload bytes arrived; `held` segments wait above
    /// a hole (this one among them if it is out of order). Returns whether the
    /// window grew (Linux `tcp_measure_rcv_mss` then `tcp_grow_window`): the
    /// receiver then acknowledges at once.
    pub fn on_segment(&mut self, len: u32, held: u64) -> bool {
        if !self.measured && len as u64 >= self.mss {
            // The first full-sized segment sets the ratio, and the clamp follows.
            self.measured = true;
            let ratio = ((len as u64) << RMEM_TO_WIN_SCALE) / self.cfg.truesize.max(1) as u64;
            let ratio = ratio.clamp(1, 255);
            if ratio != self.ratio {
                self.ratio = ratio;
                self.set_window_clamp(win_from_space(ratio, self.rcvbuf));
                self.space = self.space.min(self.window_clamp);
            }
        }
        if len < GROW_MIN_LEN {
            return false;
        }
        let room = self.window_clamp.min(self.free_space(held)).saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        // Check #2: a segment whose truesize leaves its payload in the window
        // grows it by two segments (else Linux looks further; not reached with
        // the truesize of full segments).
        if win_from_space(self.ratio, self.cfg.truesize as u64) > len as u64 {
            return false;
        }
        let incr = (2 * self.advmss).max(2 * len as u64);
        self.rcv_ssthresh += room.min(incr);
        true
    }

    /// Linux `tcp_set_window_clamp`: a lower clamp lowers `rcv_ssthresh` too.
    fn set_window_clamp(&mut self, val: u64) {
        let old = self.window_clamp;
        self.window_clamp = val;
        if val < old {
            self.rcv_ssthresh = self.rcv_ssthresh.min(val);
        }
    }

    /// The application has read `read` bytes in all at `now`; `rtt` is the
    /// receiver's RTT estimate, ps (0: none yet). Linux `tcp_rcv_space_adjust`.
    pub fn on_read(&mut self, now: Time, read: u64, rtt: Time) {
        if rtt == 0 || now.saturating_sub(self.space_time) < rtt {
            return;
        }
        let copied = read - self.space_seq;
        if copied > self.space {
            let mut rcvwin = 2 * copied + 16 * self.advmss;
            let grow = (rcvwin as u128 * (copied - self.space) as u128 / self.space.max(1) as u128) as u64;
            rcvwin = rcvwin.saturating_add(grow.saturating_mul(2));
            let rcvbuf = space_from_win(self.ratio, rcvwin).min(self.cfg.rmem_max);
            if rcvbuf > self.rcvbuf {
                self.rcvbuf = rcvbuf;
                self.set_window_clamp(win_from_space(self.ratio, rcvbuf));
            }
            self.space = copied;
        }
        self.space_seq = read;
        self.space_time = now;
    }

    /// The window field of an ACK sent with `rcv_nxt` (bytes) and `held`
    /// segments above a hole (Linux `tcp_select_window`); also returns whether
    /// the receiver is short of buffer (`__tcp_select_window` then leaves
    /// quick-ACK mode).
    pub fn advertise(&mut self, rcv_nxt: u64, held: u64) -> (u16, bool) {
        let mut free = self.free_space(held);
        let allowed = win_from_space(self.ratio, self.rcvbuf);
        let short = free < self.window_clamp.min(allowed) / 2;
        if short {
            // Short of buffer: offer what is free in whole scale units, or
            // nothing below a segment or a sixteenth of the buffer's window.
            free = free >> self.wscale << self.wscale;
            if free < allowed >> 4 || free < self.mss {
                free = 0;
            }
        }
        let mut win = align_up(free.min(self.rcv_ssthresh), self.wscale);
        // Never shrink: what is left of the last window stays offered.
        let left = (self.rcv_wup + self.rcv_wnd).saturating_sub(rcv_nxt);
        if win < left {
            win = align_up(left, self.wscale);
        }
        let field = (win >> self.wscale).min(u16::MAX as u64);
        self.rcv_wnd = field << self.wscale;
        self.rcv_wup = rcv_nxt;
        (field as u16, short)
    }

    /// `(rcv_ssthresh, window_clamp, rcvbuf)`, for tests and traces.
    pub fn state(&self) -> (u64, u64, u64) {
        (self.rcv_ssthresh, self.window_clamp, self.rcvbuf)
    }
}

/// Linux `tcp_win_from_space`.
fn win_from_space(ratio: u64, space: u64) -> u64 {
    (space * ratio) >> RMEM_TO_WIN_SCALE
}

/// Linux `tcp_space_from_win`.
fn space_from_win(ratio: u64, win: u64) -> u64 {
    (win << RMEM_TO_WIN_SCALE) / ratio.max(1)
}

fn align_up(v: u64, wscale: u32) -> u64 {
    let unit = 1u64 << wscale;
    v.div_ceil(unit) * unit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::PS_PER_MS;

    const MSS: u32 = 1448;

    fn linux() -> RcvWindow {
        RcvWindow::new(RcvBufConfig::LINUX, MSS, None)
    }

    // tcp_select_initial_window / tcp_init_buffer_space with tcp_rmem[1] =
    // 131072 and the default ratio 128: full space 65536, ten segments
    // (14,480, as measured), clamp 65536 − 1460 = 64076, scale
    // ilog2(32 MiB) − 15 = 10.
    #[test]
    fn opens_with_ten_segments() {
        let w = linux();
        assert_eq!(w.initial_window(), 14_480);
        assert_eq!(w.state(), (14_480, 64_076, 131_072));
        assert_eq!(w.wscale, 10);
        assert_eq!(w.space, 14_480);
    }

    // The first full segment sets the ratio to 1448·256/2304 = 160 and the
    // clamp to 131072·160/256 = 81,920; each segment then adds
    // max(2·1460, 2·1448) = 2920 up to it.
    #[test]
    fn each_segment_grows_the_window_by_two_segments_up_to_the_clamp() {
        let mut w = linux();
        assert!(w.on_segment(MSS, 0));
        assert_eq!(w.state(), (14_480 + 2_920, 81_920, 131_072));
        let mut grew = 1;
        while w.on_segment(MSS, 0) {
            grew += 1;
        }
        // (81920 − 14480) / 2920 = 23.1: 23 full steps and a last partial one.
        assert_eq!(grew, 24);
        assert_eq!(w.state().0, 81_920);
        assert!(!w.on_segment(MSS, 0), "at the clamp the window stops growing");
        assert!(!w.on_segment(100, 0), "short segments never grow it");
    }

    // tcp_rcv_space_adjust: 40 segments read in one RTT against a measure of
    // 10: rcvwin = 2·57920 + 16·1460 = 139,200, grow = 139200·(57920 −
    // 14480)/14480 = 417,600, rcvwin = 974,400, rcvbuf = 974400·256/160 =
    // 1,559,040, clamp 974,400.
    #[test]
    fn autotuning_sizes_the_buffer_from_what_was_read_in_an_rtt() {
        let mut w = linux();
        w.on_segment(MSS, 0);
        let rtt = 40 * PS_PER_MS;
        w.on_read(rtt / 2, 20 * MSS as u64, rtt);
        assert_eq!(w.state().2, 131_072, "less than an RTT since the last measure");
        w.on_read(rtt, 40 * MSS as u64, rtt);
        assert_eq!(w.state(), (14_480 + 2_920, 974_400, 1_559_040));
        assert_eq!(w.space, 57_920);
        // Reading less than the last measure keeps the buffer.
        w.on_read(2 * rtt, 60 * MSS as u64, rtt);
        assert_eq!(w.state().2, 1_559_040);
        assert_eq!(w.space, 57_920);
        // No RTT estimate yet: nothing is measured.
        let mut w = linux();
        w.on_read(rtt, 40 * MSS as u64, 0);
        assert_eq!(w.state().2, 131_072);
    }

    // TCP_WINDOW_CLAMP of 400,000 bytes: the first clamp 64076 stays (it is
    // smaller); the scale is ilog2(400000) − 15 = 3, so the window field
    // carries at most 65535·8 = 524,280 bytes.
    #[test]
    fn a_user_clamp_sets_the_window_scale() {
        let w = RcvWindow::new(RcvBufConfig::LINUX, MSS, Some(400_000));
        assert_eq!(w.wscale, 3);
        assert_eq!(w.state(), (14_480, 64_076, 131_072));
        let w = RcvWindow::new(RcvBufConfig::LINUX, MSS, Some(20_000));
        assert_eq!(w.state().1, 20_000);
    }

    #[test]
    fn autotuning_stops_at_tcp_rmem_max() {
        let mut w = RcvWindow::new(RcvBufConfig { rmem_max: 400_000, ..RcvBufConfig::LINUX }, MSS, None);
        w.on_segment(MSS, 0);
        let rtt = 40 * PS_PER_MS;
        w.on_read(rtt, 400 * MSS as u64, rtt);
        assert_eq!(w.state().1..=w.state().2, 250_000..=400_000);
    }

    // The window offered is rcv_ssthresh, rounded up to 1024 (scale 10), and
    // never less than what is left of the last one.
    #[test]
    fn the_advertised_window_never_shrinks() {
        let mut w = linux();
        w.on_segment(MSS, 0);
        let (f, short) = w.advertise(MSS as u64, 0);
        assert!(!short);
        assert_eq!(f as u64, (14_480u64 + 2_920).div_ceil(1024));
        // 40 segments held above a hole: free space 131072 − 40·2304 = 38,912
        // bytes of buffer, 24,320 of window; the last window's right edge stays.
        let edge = MSS as u64 + (f as u64) * 1024;
        let (g, short) = w.advertise(2 * MSS as u64, 40);
        assert!(short, "less than half the buffer free");
        assert!(2 * MSS as u64 + (g as u64) * 1024 >= edge);
    }
}
