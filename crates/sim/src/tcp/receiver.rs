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

use super::accecn::{self, Counters};
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
        if k == self.rcv_nxt {
            self.rcv_nxt += 1;
            if let Some(&(s, e, _)) = self.ooo.first() {
                if s == self.rcv_nxt {
                    self.rcv_nxt = e;
                    self.ooo.remove(0);
                }
                // A hole was filled, or data remain above one: ACK at once.
                immediate = true;
            }
        } else if k > self.rcv_nxt {
            self.add_ooo(k);
            immediate = true;
        } else {
            immediate = true;
        }
        self.unacked += 1;
        if immediate || self.quick > 0 || self.unacked >= 2 {
            if self.quick > 0 {
                self.quick -= 1;
            }
            self.send_ack();
        } else if self.delack == 0 {
            self.delack = now + self.ato.clamp(ATO_MIN, DELACK_MAX);
        }
    }

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

    // tcp-core.md TV-C9: data every 30 ms drive ato towards 60 ms.
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
