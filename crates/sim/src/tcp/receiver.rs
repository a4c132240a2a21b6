//! The TCP receiver: cumulative ACKs with up to three SACK blocks (RFC 2018,
//! most recently changed block first) and Linux's delayed-ACK engine: quick
//! ACKs for the first 16 segments, then an ACK for every second full segment
//! or when the adaptive delayed-ACK timer (ato, 40–200 ms) expires;
//! out-of-order data, duplicates and hole fills are acknowledged at once.
//!
//! ECN echo, three ways (RFC 3168 §6.1.3; RFC 8257 §3.2; RFC 9768):
//! - classic: a CE mark sets ECE on every ACK until a data segment arrives
//!   with CWR; the first CE of an episode also acknowledges the next two
//!   segments at once (Linux `__tcp_ecn_check_ce` → quick-ACK mode);
//! - accurate (DCTCP, Linux `dctcp_ece_ack_update`): ECE on each ACK says
//!   whether the segments it covers were CE-marked; when the CE state of the
//!   arriving segment differs from the previous one, any delayed ACK is sent
//!   first with the old state and the new segment is acknowledged at once;
//! - AccECN (RFC 9768, Linux `tcp_ecn_received_counters`): counters of CE
//!   packets and of payload bytes per codepoint; every ACK carries the CE
//!   count's low 3 bits in its ACE field (AE, CWR, ECE) and, with the option
//!   on, the byte counters' low 24 bits in the AccECN option (shortened, or
//!   left out beside three SACK blocks, to fit the 40 bytes of TCP options:
//!   SACK comes first). A segment
//!   whose ECN codepoint differs from the previous one's is acknowledged at
//!   once (Linux `ecn_edge`), and so is the one that makes 6 CE marks wait
//!   for feedback (`TCP_ACCECN_ACE_MAX_DELTA`), so ACE cannot wrap between
//!   two ACKs.
//!
//! With Linux's receive window ([`RcvWindow`], `[tcp] receive_window =
//! "linux"`) every ACK carries the window and each segment that grows it is
//! acknowledged at once (`tcp_grow_window`'s `icsk_ack.quick |= 1`), as
//! Linux's receiver does through a connection's first round trips; without
//! it the window is left out and only the rules above decide.

use super::accecn::{self, Counters};
use super::rcvwnd::RcvWindow;
use crate::event::{Time, PS_PER_MS};
use crate::packet::{AccEcnOption, Packet, ECN_NOT_ECT, MAX_SACK};

/// Linux `TCP_MAX_QUICKACKS`.
const MAX_QUICKACKS: u32 = 16;
/// Linux `TCP_ATO_MIN` = `TCP_DELACK_MIN` = HZ/25.
const ATO_MIN: Time = 40 * PS_PER_MS;
/// Linux `TCP_DELACK_MAX` = HZ/5.
const DELACK_MAX: Time = 200 * PS_PER_MS;
/// The receiver's own RTO before any sample (Linux `TCP_TIMEOUT_INIT`):
/// a gap in arrivals longer than this re-enters quick-ACK mode.
const RCV_RTO: Time = 1_000 * PS_PER_MS;

pub struct Receiver {
    pub id: u32,
    mss: u32,
    ack_bytes: u32,
    total_bytes: Option<u64>,
    /// Next segment expected.
    rcv_nxt: u64,
    /// Out-of-order ranges [start, end) above rcv_nxt, sorted, with the
    /// order in which they last changed (for SACK block order).
    ooo: Vec<(u64, u64, u64)>,
    change_stamp: u64,
    /// Segments received since the last ACK.
    unacked: u32,
    quick: u32,
    ato: Time,
    last_recv: Option<Time>,
    /// Echo each CE change at once (DCTCP) instead of RFC 3168's ECE-until-CWR.
    pub accurate_ecn: bool,
    /// ECE is set on outgoing ACKs (Linux `TCP_ECN_DEMAND_CWR`).
    demand_cwr: bool,
    /// CE state of the last segment received (accurate echo).
    ce_state: bool,
    /// AccECN feedback was negotiated (RFC 9768).
    pub accecn: bool,
    /// With AccECN, ACKs carry the AccECN option.
    pub accecn_option: bool,
    /// AccECN counters (r.cep, r.e0b, r.ceb, r.e1b).
    pub counters: Counters,
    /// CE marks received since the last ACK (Linux `received_ce_pending`).
    ce_pending: u32,
    /// ECN codepoint of the last segment received (Linux `prev_ecnfield`).
    prev_codepoint: u8,
    last_hdr: cc::CcHeader,
    /// Delayed-ACK deadline (0 = not armed), ps.
    pub delack: Time,
    /// Most ACKs held (`tcp_comp_sack_nr`); 0: SACK compression is off
    /// (Linux 4.18+; see the module doc).
    comp_sack_nr: u32,
    /// The compressed-ACK timer's delay: min(`tcp_comp_sack_delay_ns`, RTT/20), ps.
    comp_sack_delay: Time,
    /// ACKs held since the last ACK sent (Linux `compressed_ack`).
    compressed_ack: u32,
    /// Immediate duplicate ACKs at `comp_rcv_nxt` (Linux `dup_ack_counter`).
    dup_acks: u32,
    /// Linux `compressed_ack_rcv_nxt`.
    comp_rcv_nxt: u64,
    /// `rcv_nxt` when the last ACK left (Linux `rcv_wup`; kept with compression only).
    rcv_wup: u64,
    /// Compressed-ACK deadline (0 = not armed), ps. It shares the simulator's
    /// receiver timer with `delack` (which is set to the earlier of the two):
    /// whichever fires, an ACK leaves and both are cleared, as in Linux.
    comp_at: Time,
    /// Linux's receive window; `None`: no window is advertised.
    pub window: Option<Box<RcvWindow>>,
    /// The receiver's RTT estimate, ps, kept current by the engine while
    /// `window` is on (see [`RcvWindow`]).
    pub rtt_estimate: Time,
    /// ACKs ready to leave, drained by the simulator.
    pub out: Vec<Packet>,
    pub acks_sent: u64,
}

impl Receiver {
    pub fn new(id: u32, mss: u32, ack_bytes: u32, total_bytes: Option<u64>) -> Receiver {
        Receiver {
            id,
            mss,
            ack_bytes,
            total_bytes,
            rcv_nxt: 0,
            ooo: Vec::new(),
            change_stamp: 0,
            unacked: 0,
            quick: MAX_QUICKACKS,
            ato: ATO_MIN,
            last_recv: None,
            accurate_ecn: false,
            demand_cwr: false,
            ce_state: false,
            accecn: false,
            accecn_option: true,
            counters: Counters::default(),
            ce_pending: 0,
            prev_codepoint: ECN_NOT_ECT,
            last_hdr: cc::CcHeader::default(),
            delack: 0,
            comp_sack_nr: 0,
            comp_sack_delay: 0,
            compressed_ack: 0,
            dup_acks: 0,
            comp_rcv_nxt: 0,
            rcv_wup: 0,
            comp_at: 0,
            window: None,
            rtt_estimate: 0,
            out: Vec::new(),
            acks_sent: 0,
        }
    }

    /// Reuses this receiver's buffers for a new connection.
    pub fn reinit(&mut self, id: u32, mss: u32, ack_bytes: u32, total_bytes: Option<u64>) {
        let mut ooo = std::mem::take(&mut self.ooo);
        let mut out = std::mem::take(&mut self.out);
        ooo.clear();
        out.clear();
        *self = Receiver { ooo, out, ..Receiver::new(id, mss, ack_bytes, total_bytes) };
    }

    /// Turns on Linux's SACK compression: at most `nr` ACKs held
    /// (`tcp_comp_sack_nr`), each hold at most min(`delay`,
    /// `rtt`/20) (`tcp_comp_sack_delay_ns`, 5 % of the RTT; `rtt` is the
    /// flow's base RTT, see the module doc). `nr` = 0 leaves it off.
    pub fn set_sack_compression(&mut self, nr: u32, delay: Time, rtt: Time) {
        self.comp_sack_nr = nr;
        self.comp_sack_delay = delay.min(rtt / 20);
    }

    /// Whether SACK compression is on.
    #[inline]
    fn compresses(&self) -> bool {
        self.comp_sack_nr > 0
    }

    /// Linux `__tcp_ack_snd_check`'s SACK-compression branch, for an ACK due
    /// while data are held above a hole: returns whether the ACK is held.
    fn hold_compressed(&mut self, now: Time) -> bool {
        // More than one full segment in order since the last ACK, or `nr`
        // held already: send now.
        if self.rcv_nxt - self.rcv_wup >= 2 || self.compressed_ack >= self.comp_sack_nr {
            return false;
        }
        if self.comp_rcv_nxt != self.rcv_nxt {
            self.comp_rcv_nxt = self.rcv_nxt;
            self.dup_acks = 0;
        }
        // TCP_FASTRETRANS_THRESH duplicate ACKs at once, for fast retransmit.
        if self.dup_acks < 3 {
            self.dup_acks += 1;
            return false;
        }
        self.compressed_ack += 1;
        if self.comp_at == 0 {
            self.comp_at = (now + self.comp_sack_delay).max(1);
            if self.delack == 0 || self.comp_at < self.delack {
                self.delack = self.comp_at;
            }
        }
        true
    }

    /// Where segment `k` (above `rcv_nxt`) lands in the SACK blocks, most
    /// recently changed first: the rank of the block it extends, the number
    /// of blocks if it starts a new one, 0 for a duplicate. Linux
    /// (`tcp_sack_new_ofo_skb`, `TCP_SACK_BLOCKS_EXPECTED` = 2) sends the
    /// held ACK first when this is 2 or more, so that no SACK block goes
    /// unreported.
    fn sack_block_rank(&self, k: u64) -> usize {
        let i = self.ooo.partition_point(|&(_, e, _)| e < k);
        let rank = |j: usize| {
            let st = self.ooo[j].2;
            self.ooo.iter().filter(|r| r.2 > st).count()
        };
        match self.ooo.get(i) {
            Some(r) if r.0 <= k && k < r.1 => 0,
            Some(r) if r.1 == k => {
                let mut best = rank(i);
                if matches!(self.ooo.get(i + 1), Some(n) if n.0 == k + 1) {
                    best = best.min(rank(i + 1));
                }
                best
            }
            Some(r) if r.0 == k + 1 => rank(i),
            _ => self.ooo.len(),
        }
    }

    /// In-order bytes delivered to the application.
    pub fn delivered_bytes(&self) -> u64 {
        let b = self.rcv_nxt * self.mss as u64;
        match self.total_bytes {
            Some(t) => b.min(t),
            None => b,
        }
    }

    /// Linux `tcp_event_data_recv`: adapt the delayed-ACK timeout to the
    /// spacing of arriving data.
    fn adapt_ato(&mut self, now: Time) {
        match self.last_recv {
            None => {
                self.quick = MAX_QUICKACKS;
                self.ato = ATO_MIN;
            }
            Some(prev) => {
                let m = now - prev;
                if m <= ATO_MIN / 2 {
                    self.ato = self.ato / 2 + ATO_MIN / 2;
                } else if m < self.ato {
                    self.ato = (self.ato / 2 + m).min(RCV_RTO);
                } else if m > RCV_RTO {
                    self.quick = MAX_QUICKACKS;
                }
            }
        }
        self.last_recv = Some(now);
    }

    fn add_ooo(&mut self, k: u64) -> bool {
        self.change_stamp += 1;
        let st = self.change_stamp;
        let i = self.ooo.partition_point(|&(_, e, _)| e < k);
        if let Some(r) = self.ooo.get_mut(i) {
            if r.0 <= k && k < r.1 {
                return false; // duplicate
            }
            if r.1 == k {
                r.1 = k + 1;
                r.2 = st;
                if let Some(&(ns, ne, _)) = self.ooo.get(i + 1) {
                    if ns == k + 1 {
                        self.ooo[i].1 = ne;
                        self.ooo.remove(i + 1);
                    }
                }
                return true;
            }
            if r.0 == k + 1 {
                r.0 = k;
                r.2 = st;
                return true;
            }
        }
        self.ooo.insert(i, (k, k + 1, st));
        true
    }

    /// ECN bookkeeping for an arriving data segment (before it is
    /// acknowledged); returns whether it must be acknowledged at once.
    fn ecn_on_data(&mut self, pkt: &Packet) -> bool {
        if self.accecn {
            let cp = pkt.codepoint();
            self.counters.count(cp, pkt.payload);
            self.ce_pending += pkt.ce as u32;
            let edge = cp != self.prev_codepoint;
            self.prev_codepoint = cp;
            return edge || self.ce_pending >= accecn::ACE_MAX_DELTA;
        }
        if self.accurate_ecn {
            if pkt.ce == self.ce_state {
                return false;
            }
            // The segments held for a delayed ACK carry the old CE state.
            if self.unacked > 0 {
                self.send_ack();
            }
            self.ce_state = pkt.ce;
            self.demand_cwr = pkt.ce;
            return true;
        }
        if pkt.cwr {
            self.demand_cwr = false;
        }
        if pkt.ce && !self.demand_cwr {
            self.demand_cwr = true;
            self.quick = self.quick.max(2);
            self.ato = ATO_MIN;
        }
        false
    }

    pub fn on_data(&mut self, now: Time, pkt: &Packet) {
        let k = pkt.seg;
        self.adapt_ato(now);
        let ecn_now = self.ecn_on_data(pkt);
        // XCP: one ACK covering several packets carries the sum of their
        // feedback, so a delayed ACK loses none of the routers' allocation.
        let fb = if self.unacked > 0 { self.last_hdr.feedback } else { 0 };
        self.last_hdr = pkt.hdr;
        self.last_hdr.feedback = self.last_hdr.feedback.saturating_add(fb);
        let mut immediate = ecn_now;
        // The ACK is due because data are held above a hole (what SACK
        // compression may hold back).
        let mut ofo = false;
        if k == self.rcv_nxt {
            self.rcv_nxt += 1;
            if let Some(&(s, e, _)) = self.ooo.first() {
                if s == self.rcv_nxt {
                    self.rcv_nxt = e;
                    self.ooo.remove(0);
                }
                // A hole was filled, or data remain above one: ACK at once.
                immediate = true;
                ofo = !self.ooo.is_empty();
            }
        } else if k > self.rcv_nxt {
            if self.compresses() && self.compressed_ack > 0 && self.sack_block_rank(k) >= 2 {
                // Linux tcp_sack_new_ofo_skb → tcp_sack_compress_send_ack.
                self.send_ack();
            }
            self.add_ooo(k);
            immediate = true;
            ofo = true;
        } else {
            immediate = true;
        }
        self.unacked += 1;
        if self.window.is_some() {
            self.window_grows(pkt.payload);
        }
        self.acknowledge(now, immediate, ofo, ecn_now);
        if self.window.is_some() {
            self.window_read(now);
        }
    }

    /// Linux's window meets a segment of `len` bytes: a growth asks for an immediate ACK.
    #[inline(never)]
    fn window_grows(&mut self, len: u32) {
        let held = self.held_segments();
        if let Some(w) = self.window.as_mut() {
            if w.on_segment(len, held) {
                self.quick |= 1;
            }
        }
    }

    /// The application reads what is in order as it arrives (autotuning's measure).
    #[inline(never)]
    fn window_read(&mut self, now: Time) {
        let read = self.rcv_nxt * self.mss as u64;
        if let Some(w) = self.window.as_mut() {
            w.on_read(now, read, self.rtt_estimate);
        }
    }

    /// Segments held above a hole.
    fn held_segments(&self) -> u64 {
        self.ooo.iter().map(|&(s, e, _)| e - s).sum()
    }

    /// The window field of the ACK being sent (Linux `tcp_select_window`).
    #[inline(never)]
    fn window_field(&mut self) -> u16 {
        let held = self.held_segments();
        let rcv_nxt = self.rcv_nxt * self.mss as u64;
        let Some(w) = self.window.as_mut() else { return 0 };
        let (field, short) = w.advertise(rcv_nxt, held);
        if short {
            self.quick = 0; // __tcp_select_window: short of buffer, no quick ACKs
        }
        field
    }

    /// Linux `__tcp_ack_snd_check` for the segment just received.
    #[inline(always)]
    fn acknowledge(&mut self, now: Time, immediate: bool, ofo: bool, ecn_now: bool) {
        if self.compresses() && ofo && !ecn_now && self.quick == 0 && self.hold_compressed(now) {
            return;
        }
        if immediate || self.quick > 0 || self.unacked >= 2 {
            if self.quick > 0 {
                self.quick -= 1;
            }
            self.send_ack();
        } else if self.delack == 0 {
            self.delack = now + self.ato.clamp(ATO_MIN, DELACK_MAX);
        }
    }

    /// The receiver's timer: the delayed-ACK timer or, with SACK
    /// compression, the compressed-ACK timer (Linux
    /// `tcp_compressed_ack_kick`); either way the held segments are
    /// acknowledged with the current SACK blocks.
    pub fn on_delack_timer(&mut self, _now: Time) {
        if self.unacked > 0 {
            self.send_ack();
        }
    }

    fn send_ack(&mut self) {
        let mut p = Packet::ack(self.id, self.rcv_nxt, self.ack_bytes);
        // SACK blocks: the most recently changed ranges first (RFC 2018 §4).
        let mut n = 0usize;
        let mut taken = [usize::MAX; MAX_SACK];
        while n < MAX_SACK && n < self.ooo.len() {
            let mut best = usize::MAX;
            for (i, r) in self.ooo.iter().enumerate() {
                if !taken[..n].contains(&i) && (best == usize::MAX || r.2 > self.ooo[best].2) {
                    best = i;
                }
            }
            taken[n] = best;
            p.sack[n] = (self.ooo[best].0, self.ooo[best].1);
            n += 1;
        }
        p.nsack = n as u8;
        if self.accecn {
            p.set_ace(self.counters.ace());
            let fit = AccEcnOption::fields_that_fit(p.nsack);
            if self.accecn_option && fit > 0 {
                p.set_accecn_option(self.counters.option(fit));
            }
            self.ce_pending = 0;
        } else {
            p.ece = self.demand_cwr;
        }
        p.hdr = self.last_hdr;
        if self.window.is_some() {
            p.window = self.window_field();
        }
        if self.compresses() {
            // Linux tcp_event_ack_sent: no ACK held any more, timer cancelled.
            self.compressed_ack = 0;
            self.comp_at = 0;
            self.rcv_wup = self.rcv_nxt;
        }
        self.unacked = 0;
        self.delack = 0;
        self.acks_sent += 1;
        self.out.push(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(k: u64) -> Packet {
        Packet::data(0, k, 1448, 1500)
    }

    // With Linux's window, each segment that grows it is acknowledged at once
    // (tcp_grow_window's quick |= 1), until rcv_ssthresh reaches the clamp
    // (81,920 bytes once the first segment sets the ratio: 24 growths from
    // 14,480). Setting the low bit of the quick-ACK count and taking one off
    // per ACK (tcp_dec_quickack_mode) leaves the first 16 quick ACKs unspent
    // meanwhile, so 16 more follow; then one ACK per two segments. Each ACK
    // carries the window, in units of 2^10 bytes.
    #[test]
    fn each_segment_that_grows_the_window_is_acknowledged_at_once() {
        use crate::tcp::rcvwnd::RcvBufConfig;
        // Segments `ks` in order, one a millisecond.
        let deliver = |r: &mut Receiver, ks: std::ops::Range<u64>| {
            for k in ks {
                r.on_data((k + 1) * PS_PER_MS, &data(k));
            }
        };
        let mut r = Receiver::new(0, 1448, 52, None);
        r.window = Some(Box::new(RcvWindow::new(RcvBufConfig::LINUX, 1448, None)));
        deliver(&mut r, 0..24);
        assert_eq!(r.acks_sent, 24, "one ACK per segment while the window grows");
        deliver(&mut r, 24..40);
        assert_eq!(r.acks_sent, 40, "the 16 quick ACKs, still unspent");
        deliver(&mut r, 40..50);
        assert_eq!(r.acks_sent, 45, "then one ACK per two segments");
        let last = r.out.last().unwrap();
        assert_eq!(last.window as u64, 81_920u64.div_ceil(1024));
        // Without the window: 16 quick ACKs, then one per two segments, no window.
        let mut r = Receiver::new(0, 1448, 52, None);
        deliver(&mut r, 0..24);
        assert_eq!(r.acks_sent, 20);
        assert_eq!(r.out.last().unwrap().window, 0);
    }

    #[test]
    fn quick_acks_then_every_second_segment() {
        let mut r = Receiver::new(0, 1448, 52, None);
        let mut t = 0;
        for k in 0..16 {
            t += PS_PER_MS;
            r.on_data(t, &data(k));
        }
        assert_eq!(r.acks_sent, 16, "quick-ACK mode acknowledges each of the first 16 segments");
        for k in 16..26 {
            t += PS_PER_MS;
            r.on_data(t, &data(k));
        }
        assert_eq!(r.acks_sent, 21, "then one ACK per two segments");
        t += PS_PER_MS;
        r.on_data(t, &data(26));
        assert_eq!(r.acks_sent, 21);
        assert!(r.delack > t, "a lone segment arms the delayed-ACK timer");
        r.on_delack_timer(r.delack);
        assert_eq!(r.acks_sent, 22);
        assert_eq!(r.out.last().unwrap().seg, 27);
    }

    #[test]
    fn out_of_order_acked_at_once_with_sack() {
        let mut r = Receiver::new(0, 1448, 52, None);
        r.quick = 0;
        r.on_data(1, &data(0));
        r.on_data(2, &data(1));
        let before = r.acks_sent;
        r.on_data(3, &data(3));
        r.on_data(4, &data(4));
        r.on_data(5, &data(7));
        assert_eq!(r.acks_sent, before + 3);
        let a = r.out.last().unwrap();
        assert_eq!(a.seg, 2);
        assert_eq!(a.nsack, 2);
        assert_eq!(a.sack[0], (7, 8), "most recent block first");
        assert_eq!(a.sack[1], (3, 5));
        r.on_data(6, &data(2));
        let a = r.out.last().unwrap();
        assert_eq!(a.seg, 5, "hole filled: cumulative ACK jumps over the range");
        assert_eq!(a.nsack, 1);
        assert_eq!(r.delivered_bytes(), 5 * 1448);
    }

    fn marked(k: u64, ce: bool, cwr: bool) -> Packet {
        let mut p = data(k);
        p.ce = ce;
        p.cwr = cwr;
        p
    }

    // RFC 3168 §6.1.3: after a CE mark every ACK carries ECE until a segment
    // with CWR arrives; the first mark of an episode is acknowledged at once.
    #[test]
    fn classic_echo_until_cwr() {
        let mut r = Receiver::new(0, 1448, 52, None);
        let mut t = PS_PER_MS;
        r.on_data(t, &marked(0, false, false));
        r.quick = 0;
        for k in 1..4 {
            t += PS_PER_MS;
            r.on_data(t, &marked(k, false, false));
        }
        assert!(r.out.iter().all(|a| !a.ece));
        assert_eq!(r.unacked, 1, "one segment held for a delayed ACK");
        r.out.clear();
        t += PS_PER_MS;
        r.on_data(t, &marked(4, true, false));
        assert_eq!(r.out.len(), 1, "the CE segment completes a pair");
        t += PS_PER_MS;
        r.on_data(t, &marked(5, false, false));
        assert_eq!(r.out.len(), 2, "quick-ACK mode: the next segment at once");
        t += PS_PER_MS;
        r.on_data(t, &marked(6, false, false));
        assert_eq!(r.out.len(), 2, "quick-ACK mode spent: the next segment waits");
        for k in 7..10 {
            t += PS_PER_MS;
            r.on_data(t, &marked(k, false, false));
        }
        r.on_delack_timer(t);
        assert!(r.out.iter().all(|a| a.ece), "ECE on every ACK until CWR");
        r.out.clear();
        t += PS_PER_MS;
        r.on_data(t, &marked(10, false, true));
        t += PS_PER_MS;
        r.on_data(t, &marked(11, false, false));
        assert!(!r.out.is_empty());
        assert!(r.out.iter().all(|a| !a.ece), "CWR ends the echo");
    }

    // RFC 8257 §3.2 (Linux dctcp_ece_ack_update): ECE reflects the CE state
    // of the segments an ACK covers; a change of state flushes the delayed
    // ACK with the old state and acknowledges the new segment at once.
    #[test]
    fn accurate_echo_follows_each_change() {
        let mut r = Receiver::new(0, 1448, 52, None);
        r.accurate_ecn = true;
        r.on_data(1, &marked(0, false, false));
        r.quick = 0;
        r.out.clear();
        let acks = |r: &mut Receiver| r.out.drain(..).map(|a| (a.seg, a.ece)).collect::<Vec<_>>();
        r.on_data(2, &marked(1, false, false)); // held for a delayed ACK
        assert_eq!(acks(&mut r), vec![]);
        r.on_data(3, &marked(2, true, false));
        assert_eq!(acks(&mut r), vec![(2, false), (3, true)], "old state flushed, new one at once");
        r.on_data(4, &marked(3, true, false));
        r.on_data(5, &marked(4, true, false));
        assert_eq!(acks(&mut r), vec![(5, true)], "no change: delayed ACKs as usual");
        r.on_data(6, &marked(5, false, true));
        assert_eq!(acks(&mut r), vec![(6, false)], "CWR does not matter, the CE state does");
    }

    fn coded(k: u64, codepoint: u8) -> Packet {
        let mut p = data(k);
        p.ect = codepoint != ECN_NOT_ECT;
        p.ect1 = codepoint == crate::packet::ECN_ECT1;
        p.ce = codepoint == crate::packet::ECN_CE;
        p
    }

    // RFC 9768 (Linux tcp_ecn_received_counters, tcp_accecn_set_ace): CE
    // packets counted in ACE from 5, bytes per codepoint in the option; a
    // change of codepoint is acknowledged at once.
    #[test]
    fn accecn_counts_and_acks_on_each_change() {
        use crate::packet::{ECN_CE, ECN_ECT1};
        let mut r = Receiver::new(0, 1448, 52, None);
        r.accecn = true;
        r.on_data(1, &coded(0, ECN_ECT1));
        r.quick = 0;
        r.out.clear();
        let acks = |r: &mut Receiver| r.out.drain(..).map(|a| (a.seg, a.ace())).collect::<Vec<_>>();
        r.on_data(2, &coded(1, ECN_ECT1));
        assert_eq!(acks(&mut r), vec![], "no change: delayed");
        r.on_data(3, &coded(2, ECN_CE));
        assert_eq!(acks(&mut r), vec![(3, 6)], "CE: at once, ACE 5 → 6, covering the held segment");
        r.on_data(4, &coded(3, ECN_CE));
        r.on_data(5, &coded(4, ECN_CE));
        assert_eq!(acks(&mut r), vec![(5, 0)], "two more CE: a delayed ACK, ACE wraps 7 → 0");
        r.on_data(6, &coded(5, ECN_ECT1));
        let a = *r.out.last().unwrap();
        assert_eq!((a.seg, a.ace()), (6, 0), "back to ECT(1): at once");
        assert_eq!(r.counters.cep, 3);
        let o = a.accecn_option();
        assert_eq!(o.len, 8, "EE1B and ECEB");
        assert_eq!((o.ee1b, o.eceb), (3 * 1448 + 1, 3 * 1448));
        // Without the option the ACK carries ACE only.
        r.accecn_option = false;
        r.on_data(7, &coded(6, ECN_CE));
        assert_eq!(r.out.last().unwrap().accecn_option().len, 0);
        assert_eq!(r.out.last().unwrap().ace(), 1);
    }

    // Linux TCP_ACCECN_ACE_MAX_DELTA: with ACKs held back (here: every
    // segment CE, so no codepoint change), the 6th pending mark forces an ACK.
    #[test]
    fn accecn_acks_before_ace_can_wrap() {
        use crate::packet::ECN_CE;
        let mut r = Receiver::new(0, 1448, 52, None);
        r.accecn = true;
        r.on_data(1, &coded(0, ECN_CE));
        r.quick = 0;
        r.out.clear();
        r.ce_pending = 5;
        r.on_data(2, &coded(1, ECN_CE));
        assert_eq!(r.out.len(), 1, "6 marks pending: ACK now, not after a second segment");
        assert_eq!(r.ce_pending, 0);
    }

    /// A receiver with SACK compression (nr 44, 1 ms) that has acknowledged
    /// segment 0 and left quick-ACK mode.
    fn compressing(rtt_ms: u64) -> Receiver {
        let mut r = Receiver::new(0, 1448, 52, None);
        r.set_sack_compression(44, PS_PER_MS, rtt_ms * PS_PER_MS);
        r.on_data(1, &data(0));
        r.quick = 0;
        r.out.clear();
        r
    }

    // Linux __tcp_ack_snd_check: three duplicate ACKs per rcv_nxt at once,
    // then held until the compressed-ACK timer, min(1 ms, RTT/20).
    #[test]
    fn sack_compression_holds_after_three_dupacks() {
        let mut r = compressing(40);
        // Segment 1 lost; 2.. arrive.
        for k in 2..5 {
            r.on_data(10 + k, &data(k));
        }
        assert_eq!(r.out.len(), 3, "three duplicate ACKs at once");
        assert!(r.out.iter().all(|a| a.seg == 1));
        r.out.clear();
        let t0 = 100;
        for k in 5..15 {
            r.on_data(t0 + k, &data(k));
        }
        assert!(r.out.is_empty(), "later ones are held");
        assert_eq!(r.compressed_ack, 10);
        assert_eq!(r.delack, t0 + 5 + PS_PER_MS, "timer armed by the first held ACK, 1 ms (< 5 % of 40 ms)");
        r.on_delack_timer(r.delack);
        assert_eq!(r.out.len(), 1, "one ACK when the timer fires");
        let a = r.out[0];
        assert_eq!((a.seg, a.nsack, a.sack[0]), (1, 1, (2, 15)), "with the current SACK blocks");
        assert_eq!((r.compressed_ack, r.comp_at, r.delack), (0, 0, 0));
        // Same rcv_nxt: the duplicate-ACK count is not reset by the ACK.
        r.out.clear();
        r.on_data(2 * PS_PER_MS, &data(16));
        assert!(r.out.is_empty(), "still past three duplicates at this rcv_nxt");
        assert_eq!(r.delack, 2 * PS_PER_MS + PS_PER_MS);
    }

    #[test]
    fn sack_compression_delay_is_five_percent_of_a_short_rtt() {
        let mut r = compressing(10);
        for k in 2..6 {
            r.on_data(10, &data(k));
        }
        assert_eq!(r.out.len(), 3);
        assert_eq!(r.delack, 10 + PS_PER_MS / 2, "5 % of 10 ms = 0.5 ms < 1 ms");
    }

    #[test]
    fn sack_compression_holds_at_most_nr() {
        let mut r = compressing(40);
        for k in 2..5 {
            r.on_data(2, &data(k));
        }
        r.out.clear();
        for k in 5..49 {
            r.on_data(3, &data(k));
        }
        assert!(r.out.is_empty());
        assert_eq!(r.compressed_ack, 44);
        r.on_data(4, &data(49));
        assert_eq!(r.out.len(), 1, "the 45th goes out at once");
        assert_eq!(r.out[0].sack[0], (2, 50));
        assert_eq!((r.compressed_ack, r.comp_at), (0, 0), "and clears the held count and the timer");
        r.on_data(5, &data(50));
        assert_eq!(r.out.len(), 1, "holding starts again");
        assert_eq!(r.delack, 5 + PS_PER_MS);
    }

    #[test]
    fn sack_compression_hole_fill_resets() {
        let mut r = compressing(40);
        // Holes at 1 and 6.
        for k in [2, 3, 4, 5, 7, 8] {
            r.on_data(2, &data(k));
        }
        assert_eq!(r.out.len(), 3);
        assert_eq!(r.compressed_ack, 3);
        // The retransmission of 1 fills the first hole: sent at once (a
        // jump of more than one segment), with 7..9 still held above 6.
        r.on_data(3, &data(1));
        assert_eq!(r.out.len(), 4);
        assert_eq!(r.out[3].seg, 6);
        assert_eq!((r.compressed_ack, r.comp_at), (0, 0));
        // rcv_nxt moved: three duplicate ACKs at once again, then held.
        for k in 9..13 {
            r.on_data(4, &data(k));
        }
        assert_eq!(r.out.len(), 7);
        assert_eq!(r.compressed_ack, 1);
        // Filling the last hole: at once, with no SACK block.
        r.on_data(5, &data(6));
        assert_eq!(r.out.len(), 8);
        assert_eq!((r.out[7].seg, r.out[7].nsack), (13, 0));
        assert_eq!((r.compressed_ack, r.comp_at), (0, 0));
    }

    // An in-order segment that moves rcv_nxt by one with data still above a
    // hole goes through the compression rule: sent at once, as the first of
    // the three duplicate ACKs at the new rcv_nxt.
    #[test]
    fn sack_compression_one_segment_advance_counts_as_first_dupack() {
        let mut r = compressing(40);
        r.on_data(2, &data(3)); // holes at 1, 2
        r.on_data(3, &data(1)); // rcv_nxt 1 -> 2, 3 above: at once
        r.on_data(4, &data(4));
        r.on_data(5, &data(5));
        assert_eq!(r.out.len(), 4);
        r.on_data(6, &data(6));
        assert_eq!(r.out.len(), 4, "the advance used one of the three");
        assert_eq!(r.compressed_ack, 1);
    }

    // Linux tcp_sack_new_ofo_skb: a new third SACK block flushes held ACKs
    // (with the old blocks) before the segment is counted.
    #[test]
    fn sack_compression_flushes_before_a_third_block() {
        let mut r = compressing(40);
        for k in [2, 3, 4, 5, 6] {
            r.on_data(2, &data(k));
        }
        assert_eq!((r.out.len(), r.compressed_ack), (3, 2));
        r.on_data(3, &data(8)); // second block: extends nothing, rank 1: held
        assert_eq!((r.out.len(), r.compressed_ack), (3, 3));
        r.on_data(4, &data(9)); // extends the newest block: held
        assert_eq!((r.out.len(), r.compressed_ack), (3, 4));
        r.on_data(5, &data(11)); // a third block: the held ACK leaves first
        assert_eq!(r.out.len(), 4);
        let a = r.out[3];
        assert_eq!((a.nsack, a.sack[0], a.sack[1]), (2, (8, 10), (2, 7)), "without the new block");
        assert_eq!(r.compressed_ack, 1, "the new segment is held");
        r.on_data(6, &data(7)); // extends (2,7)..(8,10), rank 1 and 2: held
        assert_eq!((r.out.len(), r.compressed_ack), (4, 2));
    }

    #[test]
    fn without_sack_compression_every_out_of_order_segment_is_acked() {
        for nr in [None, Some(0)] {
            let mut r = Receiver::new(0, 1448, 52, None);
            if let Some(nr) = nr {
                r.set_sack_compression(nr, PS_PER_MS, 40 * PS_PER_MS); // tcp_comp_sack_nr = 0: off
            }
            r.on_data(1, &data(0));
            r.quick = 0;
            r.out.clear();
            for k in 2..60 {
                r.on_data(2, &data(k));
            }
            assert_eq!(r.out.len(), 58, "{nr:?}");
            assert!(r.out.iter().all(|a| a.seg == 1));
            assert_eq!(r.delack, 0);
        }
    }

    // Linux's ATO adaptation (net/ipv4/tcp_input.c tcp_event_data_recv),
    // worked by hand: data every 30 ms drive ato towards 60 ms.
    #[test]
    fn ato_adapts_to_arrival_spacing() {
        let mut r = Receiver::new(0, 1448, 52, None);
        let mut t = 0;
        for k in 0..40 {
            r.on_data(t, &data(k));
            t += 30 * PS_PER_MS;
        }
        let ato_ms = r.ato as f64 / PS_PER_MS as f64;
        assert!((ato_ms - 60.0).abs() < 0.5, "ato {ato_ms} ms");
    }
}
