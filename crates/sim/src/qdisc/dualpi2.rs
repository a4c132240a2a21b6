//! DualPI2, the DualQ Coupled AQM with a PI2 base, RFC 9332 (K. De Schepper,
//! B. Briscoe, G. White), as in Linux `net/sched/sch_dualpi2.c` (De Schepper
//! et al., "PI²: A linearized AQM for both Classic and Scalable TCP", CoNEXT
//! 2016).
//!
//! ```text
//!  arrival ──► classify (dualpi2_skb_classify): ECN & ecn_mask ≠ 0 ──► L queue ─┐
//!                                               otherwise ─────────► C queue ─┤ scheduler ──► link
//!                                                                              │ (WRR credit or
//!  every tupdate: p' += α·(qdelay − target) + β·(qdelay − qdelay_old)          │  time-shifted FIFO)
//!                 qdelay = max(L head age, C head age)                         │
//!  at dequeue (must_drop, do_step_aqm):                                        │
//!    C: drop (Not-ECT, or any packet on overload) or CE-mark with p_C = p'²    │
//!    L: CE-mark with p_CL = k·p', and CE-mark when its own sojourn > step_thresh
//!       overload (k·p' > 1): drop with p'², CE-mark the rest
//! ```
//!
//! * Classifier (RFC 9332 §2.3, RFC 9331; Linux `dualpi2_skb_classify`
//!   with the default `l4s_ect` mask 1): ECT(1) and CE go to the L queue,
//!   Not-ECT and ECT(0) to the C queue; `any_ect` (mask 3) sends ECT(0) to L
//!   too. Linux's tc-filter classes (and its "LLLL" class) have no
//!   counterpart here.
//! * Base probability (RFC 9332 §2.4, Appendix A; Linux `calculate_probability`)
//!   in Linux's integer arithmetic: p' in units of 1/(2³² − 1), gains
//!   given in Hz and rounded to Linux's netlink unit of 1/256 Hz, scaled by
//!   `dualpi2_scale_alpha_beta`, and the sum divided by 64 with truncation.
//!   The queue delay is the larger head age of the two queues (0 for an
//!   empty one). Linux runs it from an hrtimer every tupdate; here it runs
//!   lazily at the next enqueue or dequeue for every tupdate boundary passed,
//!   reading the head ages at that boundary. Neither queue changes between
//!   two calls, so the result equals a timer's. Where Linux's u32/s64
//!   arithmetic would wrap (a delay error of seconds with large gains), the
//!   probability saturates at 0 or 1 as Linux's bounds intend.
//! * Coupling (RFC 9332 §2.1, §2.4): Classic packets see p_C = p'² (two
//!   independent draws, Linux `dualpi2_classic_marking`), L packets
//!   p_CL = k·p' (`dualpi2_scalable_marking`), and the L queue's native AQM
//!   is Linux's step: CE when the packet's own sojourn exceeds step_thresh
//!   (`do_step_aqm`). Linux applies the coupled draw and the step one after
//!   the other, the union of the two events; RFC 9332's example takes
//!   max(p'_L, p_CL) with a ramp as native AQM. A packet is marked at most
//!   once here, where Linux counts a coupled and a step mark on the same
//!   packet twice.
//! * No PI decision while both queues hold less than 2 MTU (Linux
//!   `must_drop`, `2 * psched_mtu`), counting without the packet decided on.
//! * Overload (RFC 9332 §4.2.3; Linux `drop_on_overload`, the default): once
//!   k·p' > 1, Classic ECN packets are dropped instead of marked and L
//!   packets are dropped with p'², the rest marked. With `overflow`
//!   (drop_on_overload = false) p' is capped at 1/k and L packets are only
//!   marked; the shared buffer then tail-drops.
//! * Scheduler (RFC 9332 §2.4, §4.2.2): Linux's credit WRR (`dequeue_packet`):
//!   the credit starts at MTU·(wc − wl) (−121 120 B with wc = 10 %); L is
//!   served while the credit is ≤ 0 (or C is empty), each L packet sent while
//!   C waits adds wc·len, each C packet sent while L waits subtracts wl·len,
//!   and the credit resets once both queues are empty, so a backlogged C gets
//!   wc % of the bytes. Or the time-shifted FIFO RFC 9332 describes: serve
//!   the head whose enqueue time, L's moved earlier by tshift, is older.
//! * Decisions at dequeue by default (Linux `drop_dequeue`); `drop_enqueue`
//!   takes the PI decision on arrival instead. The step test is always at
//!   dequeue. Both queues share the port's limit (Linux's `limit`, 10 000
//!   packets by default; its memory limit, 2·MTU of skb truesize per packet,
//!   has no counterpart).
//!
//! Random draws come from the port's generator (Linux `dualpi2_roll`:
//! a uniform 32-bit draw ≤ p).

use super::books::{Cx, DropReason};
use super::discipline::{Discipline, Env, QdiscKind, MAX_STATE};
use super::params::{
    bytes, ns, p, DefaultValue as D, Fields, ParamType as T, QdiscInfo, QdiscParam, Unit, MAX_PARAM_NS,
};
use super::queue::QueueLimit;
use crate::event::{Time, PS_PER_MS, PS_PER_NS};
use crate::packet::{PacketId, PacketView, ECN_NOT_ECT};
use crate::rng::Rng;
use std::collections::VecDeque;

/// Probability 1 (Linux `MAX_PROB`, `U32_MAX`).
pub const MAX_PROB: u32 = u32::MAX;

/// Linux `ALPHA_BETA_SHIFT`: netlink gives the gains in 1/256 Hz.
const ALPHA_BETA_SHIFT: u32 = 8;
/// Linux `ALPHA_BETA_GRANULARITY`: internal gains carry 2⁶ more resolution,
/// removed from each update's sum.
const ALPHA_BETA_GRANULARITY: u32 = 6;
/// Largest gain in netlink units (Linux `ALPHA_BETA_MAX`, the policy's max).
const ALPHA_BETA_MAX: u32 = (1 << 31) - 1;

/// Linux `MAX_WC`: the WRR weights are percentages, wc + wl = 100.
const MAX_WC: u32 = 100;

/// A gain in Hz as Linux's netlink carries it, Hz × 256 rounded to the
/// nearest integer (so the defaults 0.16 and 3.2 give the kernel's own 41
/// and 819; tc truncates instead).
pub fn netlink_alpha_beta(hz: f64) -> u32 {
    (hz * f64::from(1u32 << ALPHA_BETA_SHIFT)).round().clamp(1.0, f64::from(ALPHA_BETA_MAX)) as u32
}

/// Linux `dualpi2_scale_alpha_beta`: a netlink gain (Hz × 256) to the
/// internal one, probability units (2³² − 1) × 64 per ns of delay:
/// ((g · MAX_PROB) >> 2) / 10⁹. 41 → 44, 819 → 879.
pub fn scale_alpha_beta(netlink: u32) -> u32 {
    (((u64::from(netlink) * u64::from(MAX_PROB)) >> (ALPHA_BETA_SHIFT - ALPHA_BETA_GRANULARITY)) / 1_000_000_000) as u32
}

/// Which queue the scheduler serves next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// Linux's credit-based weighted round robin (`classic_protection`).
    Wrr,
    /// RFC 9332's time-shifted FIFO (`tshift`).
    Tshift,
}

/// DualPI2 parameters, named after tc-dualpi2's.
#[derive(Clone, Debug, PartialEq)]
pub struct DualPi2Config {
    pub target_ns: u64,
    pub tupdate_ns: u64,
    /// Integral gain, Hz.
    pub alpha: f64,
    /// Proportional gain, Hz.
    pub beta: f64,
    /// k.
    pub coupling_factor: u32,
    pub step_thresh_ns: u64,
    /// Packets the L queue must hold (before the arrival) for the step to apply.
    pub min_qlen_step: u64,
    /// wc, percent.
    pub classic_protection: u32,
    pub drop_on_overload: bool,
    pub drop_enqueue: bool,
    /// ECN bits that select the L queue: 1 (`l4s_ect`) or 3 (`any_ect`).
    pub ecn_mask: u8,
    pub scheduler: Scheduler,
    pub tshift_ns: u64,
    pub mtu_bytes: u64,
}

impl Default for DualPi2Config {
    /// Linux `dualpi2_reset_default`.
    fn default() -> DualPi2Config {
        DualPi2Config {
            target_ns: 15_000_000,
            tupdate_ns: 16_000_000,
            alpha: 0.16,
            beta: 3.2,
            coupling_factor: 2,
            step_thresh_ns: 1_000_000,
            min_qlen_step: 0,
            classic_protection: 10,
            drop_on_overload: true,
            drop_enqueue: false,
            ecn_mask: 1,
            scheduler: Scheduler::Wrr,
            tshift_ns: 50_000_000,
            mtu_bytes: 1514,
        }
    }
}

const ECN_MASKS: [(&str, u8); 2] = [("l4s_ect", 1), ("any_ect", 3)];
const SCHEDULERS: [(&str, Scheduler); 2] = [("wrr", Scheduler::Wrr), ("tshift", Scheduler::Tshift)];

impl QdiscKind for DualPi2Config {
    type Qdisc = DualPi2;
    const KIND: &'static str = "dualpi2";

    fn info() -> QdiscInfo {
        let gain_min = 1.0 / 256.0;
        let gain_max = f64::from(ALPHA_BETA_MAX) / 256.0;
        QdiscInfo {
        name: Self::KIND,
        summary: "DualQ Coupled AQM (L4S): ECT(1)/CE in a low-latency queue, the rest in a Classic queue; one PI2 controller on the larger head delay gives p', Classic packets see p'^2, L packets k*p' plus a 1 ms sojourn step; WRR keeps 10 % for Classic.",
        source: "RFC 9332 (§2.1, §2.3, §2.4, §4.2, Appendix A); Linux net/sched/sch_dualpi2.c (dualpi2_reset_default, calculate_probability, must_drop, dualpi2_classic_marking, dualpi2_scalable_marking, do_step_aqm, dequeue_packet); iproute2 tc/q_dualpi2.c",
        params: vec![
            ns("target_ns", 15_000_000, "PI2 target queue delay (RFC 9332 Appendix A.1: 15 ms; Linux default 15 ms)."),
            p("tupdate_ns", T::Int, D::Int(16_000_000), Some(1e3), Some(MAX_PARAM_NS), "Period of the p' update (Linux default 16 ms; RFC 9332 Appendix A.1's example: 15 ms). At least 1 us, Linux's unit for it. alpha and beta apply once per update, unscaled by tupdate (tc-dualpi2), so changing it changes the loop gain.").unit(Unit::Ns),
            p("alpha", T::Float, D::Float(0.16), Some(gain_min), Some(gain_max), "Integral gain, Hz, rounded to Linux's 1/256 Hz (Linux default 41/256 = 0.16; RFC 9332 Appendix A.1: 0.1*tupdate/RTT_max^2 = 0.15 for 100 ms). Applied as Linux's integer gain 44 (2^-32/64 per ns of delay), 0.160071 Hz."),
            p("beta", T::Float, D::Float(3.2), Some(gain_min), Some(gain_max), "Proportional gain, Hz, rounded to Linux's 1/256 Hz (Linux default 819/256 = 3.2; RFC 9332 Appendix A.1: 0.3/RTT_max = 3 for 100 ms). Applied as Linux's integer gain 879 (2^-32/64 per ns of delay), 3.197783 Hz."),
            p("coupling_factor", T::Int, D::Int(2), Some(1.0), Some(255.0), "k: L packets see k*p' (RFC 9332 §2.1: 2; Linux default 2, a u8)."),
            p("step_thresh_ns", T::Int, D::Int(1_000_000), Some(0.0), Some(MAX_PARAM_NS), "L queue's native AQM: CE-mark an L packet whose own sojourn exceeds this (Linux step_thresh, default 1 ms; the packet-count form is not offered).").unit(Unit::Ns),
            p("min_qlen_step", T::Int, D::Int(0), Some(0.0), Some(4294967295.0), "Packets the L queue must hold when one arrives for the step to apply to it (Linux default 0: always)."),
            p("classic_protection", T::Int, D::Int(10), Some(0.0), Some(100.0), "wc, percent of the bytes guaranteed to the C queue by the WRR scheduler while both are backlogged (Linux default 10; L gets 100 - wc)."),
            p("drop_on_overload", T::Bool, D::Bool(true), None, None, "Once k*p' > 1, drop Classic ECN packets and drop L packets with p'^2 (Linux drop_on_overload, the default); false: Linux 'overflow', p' capped at 1/k, L packets only marked, the buffer tail-drops."),
            p("drop_enqueue", T::Bool, D::Bool(false), None, None, "Take the PI2 mark/drop decision at enqueue (Linux drop_enqueue); false: at dequeue (Linux drop_dequeue, the default). The step always acts at dequeue."),
            QdiscParam { choices: &["l4s_ect", "any_ect"], ..p("ecn_mask", T::Str, D::Str("l4s_ect"), None, None, "ECN codepoints classified into L: l4s_ect (ECT(1) and CE, RFC 9331; Linux default) or any_ect (ECT(0) too).") },
            QdiscParam { choices: &["wrr", "tshift"], ..p("scheduler", T::Str, D::Str("wrr"), None, None, "wrr: Linux's credit-based weighted round robin with classic_protection; tshift: RFC 9332's time-shifted FIFO, serving L unless the C head has waited tshift longer.") },
            ns("tshift_ns", 50_000_000, "Time shift of the tshift scheduler. [UNCONFIRMED] 50 ms is the ns-3 port's value; RFC 9332's example value was not re-read."),
            bytes("mtu_bytes", 1514, "Linux psched_mtu: no PI2 decision with less than 2 of them queued, and the WRR credit's scale."),
        ],
    }
    }

    fn fields(&mut self, f: &mut Fields) -> Result<(), String> {
        f.int("target_ns", &mut self.target_ns)?;
        f.int("tupdate_ns", &mut self.tupdate_ns)?;
        f.float("alpha", &mut self.alpha)?;
        f.float("beta", &mut self.beta)?;
        f.int32("coupling_factor", &mut self.coupling_factor)?;
        f.int("step_thresh_ns", &mut self.step_thresh_ns)?;
        f.int("min_qlen_step", &mut self.min_qlen_step)?;
        f.int32("classic_protection", &mut self.classic_protection)?;
        f.flag("drop_on_overload", &mut self.drop_on_overload)?;
        f.flag("drop_enqueue", &mut self.drop_enqueue)?;
        f.choice("ecn_mask", &mut self.ecn_mask, &ECN_MASKS)?;
        f.choice("scheduler", &mut self.scheduler, &SCHEDULERS)?;
        f.int("tshift_ns", &mut self.tshift_ns)?;
        f.int("mtu_bytes", &mut self.mtu_bytes)
    }

    fn build(&self, env: Env) -> DualPi2 {
        DualPi2::new(self.clone(), env.limit, env.rng)
    }
}

/// A packet of the L queue and whether the step applies to it (Linux
/// `dualpi2_skb_cb.apply_step`, decided at enqueue).
#[derive(Clone, Copy, Debug)]
struct LPacket {
    id: PacketId,
    apply_step: bool,
}

/// The PI2 verdict on one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Pass,
    Marked,
    Drop,
}

#[derive(Debug)]
pub struct DualPi2 {
    pub cfg: DualPi2Config,
    limit: QueueLimit,
    l: VecDeque<LPacket>,
    c: VecDeque<PacketId>,
    /// Linux `pi2_alpha`, `pi2_beta`: probability units × 64 per ns.
    alpha: u32,
    beta: u32,
    /// p', in units of 1/MAX_PROB (Linux `pi2_prob`).
    pub prob: u32,
    /// Queue delay at the last update, ns (Linux `last_qdelay`).
    pub last_qdelay_ns: u64,
    tupdate: Time,
    next_update: Time,
    step_thresh: Time,
    tshift: Time,
    /// WRR credit, bytes × percent; ≤ 0 serves L (Linux `c_protection_credit`).
    pub credit: i64,
    credit_init: i64,
    /// Sojourn of the last packet to leave each queue (sent or dropped), ps.
    l_sojourn: Time,
    c_sojourn: Time,
    /// CE marks and AQM drops by queue since the start.
    pub l_marks: u64,
    pub c_marks: u64,
    pub l_drops: u64,
    pub c_drops: u64,
    rng: Rng,
}

impl DualPi2 {
    pub fn new(cfg: DualPi2Config, limit: QueueLimit, rng: Rng) -> DualPi2 {
        let wc = i64::from(cfg.classic_protection.min(MAX_WC));
        let wl = i64::from(MAX_WC) - wc;
        let tupdate = cfg.tupdate_ns * PS_PER_NS;
        let credit_init = cfg.mtu_bytes as i64 * (wc - wl);
        DualPi2 {
            limit,
            l: VecDeque::with_capacity(1024),
            c: VecDeque::with_capacity(1024),
            alpha: scale_alpha_beta(netlink_alpha_beta(cfg.alpha)),
            beta: scale_alpha_beta(netlink_alpha_beta(cfg.beta)),
            prob: 0,
            last_qdelay_ns: 0,
            tupdate,
            next_update: tupdate,
            step_thresh: cfg.step_thresh_ns.saturating_mul(PS_PER_NS),
            tshift: cfg.tshift_ns.saturating_mul(PS_PER_NS),
            credit: credit_init,
            credit_init,
            l_sojourn: 0,
            c_sojourn: 0,
            l_marks: 0,
            c_marks: 0,
            l_drops: 0,
            c_drops: 0,
            rng,
            cfg,
        }
    }

    /// The internal gains (Linux `pi2_alpha`, `pi2_beta`).
    pub fn gains(&self) -> (u32, u32) {
        (self.alpha, self.beta)
    }

    /// p' as a fraction.
    pub fn base_prob(&self) -> f64 {
        f64::from(self.prob) / f64::from(MAX_PROB)
    }

    /// One update of p' from the queue delay `qdelay_ns` (Linux
    /// `calculate_probability`).
    pub fn calculate_probability(&mut self, qdelay_ns: u64) {
        let q = i128::from(qdelay_ns);
        let delta = (q - i128::from(self.cfg.target_ns)) * i128::from(self.alpha)
            + (q - i128::from(self.last_qdelay_ns)) * i128::from(self.beta);
        self.last_qdelay_ns = qdelay_ns;
        let step = delta.abs() >> ALPHA_BETA_GRANULARITY;
        let prob = i128::from(self.prob);
        let new = if delta > 0 { (prob + step).min(i128::from(MAX_PROB)) } else { (prob - step).max(0) } as u32;
        // Linux: without drop_on_overload, cap k·p' at 1 to keep window fairness.
        self.prob = if self.cfg.drop_on_overload { new } else { new.min(MAX_PROB / self.cfg.coupling_factor) };
    }

    /// Runs the updates due at every tupdate boundary up to `now`, each with
    /// the head ages at its boundary (Linux `get_queue_delays`).
    #[inline]
    fn catch_up<P: PacketView>(&mut self, cx: &Cx<'_, P>) {
        while cx.now >= self.next_update {
            let t = self.next_update;
            let (l_head, c_head) = (self.l.front().map(|p| p.id), self.c.front().copied());
            if l_head.is_none() && c_head.is_none() && self.prob == 0 && self.last_qdelay_ns == 0 {
                // Empty queues at p' = 0: every update until the next call
                // leaves p' and the last delay at 0.
                self.next_update = t + ((cx.now - t) / self.tupdate + 1) * self.tupdate;
                return;
            }
            let age = |head: Option<PacketId>| head.map_or(0, |id| (t - cx.enqueued_at(id)) / PS_PER_NS);
            self.calculate_probability(age(l_head).max(age(c_head)));
            self.next_update = t + self.tupdate;
        }
    }

    /// Linux `dualpi2_roll`: true with probability `prob`/MAX_PROB.
    #[inline]
    fn roll(&mut self, prob: u32) -> bool {
        (self.rng.next_u64() >> 32) as u32 <= prob
    }

    /// Linux `must_drop`: the PI2 decision on packet `id` of queue L (`in_l`)
    /// or C, with `backlog` bytes held besides it. Marks are made here.
    #[inline]
    fn must_drop<P: PacketView>(&mut self, id: PacketId, in_l: bool, backlog: u64, cx: &mut Cx<'_, P>) -> Verdict {
        if backlog < 2 * self.cfg.mtu_bytes {
            return Verdict::Pass;
        }
        let prob = self.prob;
        let l_prob = u64::from(prob) * u64::from(self.cfg.coupling_factor);
        let overload = l_prob > u64::from(MAX_PROB);
        let not_ect = cx.codepoint(id) == ECN_NOT_ECT;
        let verdict = if !in_l {
            // dualpi2_classic_marking: p_C = p'² as two draws.
            if self.roll(prob) && self.roll(prob) {
                if overload || not_ect {
                    Verdict::Drop
                } else {
                    Verdict::Marked
                }
            } else {
                Verdict::Pass
            }
        } else if overload {
            // dualpi2_scalable_marking on overload: Classic drop first, then mark.
            if self.cfg.drop_on_overload && self.roll(prob) && self.roll(prob) {
                Verdict::Drop
            } else {
                Verdict::Marked
            }
        } else if self.roll(l_prob as u32) {
            if not_ect {
                Verdict::Drop
            } else {
                Verdict::Marked
            }
        } else {
            Verdict::Pass
        };
        if verdict == Verdict::Marked {
            self.mark(id, in_l, cx);
        }
        verdict
    }

    #[inline]
    fn mark<P: PacketView>(&mut self, id: PacketId, in_l: bool, cx: &mut Cx<'_, P>) {
        cx.mark(id);
        if in_l {
            self.l_marks += 1;
        } else {
            self.c_marks += 1;
        }
    }

    #[inline]
    fn count_drop(&mut self, in_l: bool) {
        if in_l {
            self.l_drops += 1;
        } else {
            self.c_drops += 1;
        }
    }

    /// Linux `dequeue_packet` (or the time-shifted FIFO): the next head, its
    /// queue, whether the step applies, and the credit change should it be sent.
    #[inline]
    fn select<P: PacketView>(&mut self, cx: &Cx<'_, P>) -> Option<(PacketId, bool, bool, i64)> {
        let (l_len, c_len) = (self.l.len(), self.c.len());
        let serve_l = match (self.l.front(), self.c.front()) {
            (None, None) => {
                self.credit = self.credit_init;
                return None;
            }
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(&c)) => match self.cfg.scheduler {
                Scheduler::Wrr => self.credit <= 0,
                // Serve L unless C's head arrived more than tshift before L's.
                Scheduler::Tshift => cx.enqueued_at(c) + self.tshift > cx.enqueued_at(l.id),
            },
        };
        let wc = i64::from(self.cfg.classic_protection.min(MAX_WC));
        if serve_l {
            let p = self.l.pop_front()?;
            let change = if c_len > 0 { wc * i64::from(cx.wire_len(p.id)) } else { 0 };
            Some((p.id, true, p.apply_step, change))
        } else {
            let id = self.c.pop_front()?;
            let change = if l_len > 0 { -(i64::from(MAX_WC) - wc) * i64::from(cx.wire_len(id)) } else { 0 };
            Some((id, false, false, change))
        }
    }
}

impl Discipline for DualPi2 {
    #[inline]
    fn enqueue<P: PacketView>(&mut self, id: PacketId, cx: &mut Cx<'_, P>) -> Result<(), DropReason> {
        self.catch_up(cx);
        if !self.limit.fits(cx.pkts(), cx.bytes(), cx.wire_len(id)) {
            return Err(DropReason::Overflow);
        }
        let in_l = cx.codepoint(id) & self.cfg.ecn_mask != 0;
        if self.cfg.drop_enqueue && self.must_drop(id, in_l, cx.bytes(), cx) == Verdict::Drop {
            self.count_drop(in_l);
            return Err(DropReason::Aqm);
        }
        if in_l {
            let apply_step = self.l.len() as u64 >= self.cfg.min_qlen_step;
            self.l.push_back(LPacket { id, apply_step });
        } else {
            self.c.push_back(id);
        }
        Ok(())
    }

    #[inline]
    fn dequeue<P: PacketView>(&mut self, cx: &mut Cx<'_, P>) -> Option<PacketId> {
        self.catch_up(cx);
        while let Some((id, in_l, apply_step, change)) = self.select(cx) {
            let len = cx.wire_len(id);
            let sojourn = cx.now.saturating_sub(cx.enqueued_at(id));
            if in_l {
                self.l_sojourn = sojourn;
            } else {
                self.c_sojourn = sojourn;
            }
            let mut verdict = Verdict::Pass;
            if !self.cfg.drop_enqueue {
                verdict = self.must_drop(id, in_l, cx.bytes() - u64::from(len), cx);
            }
            // do_step_aqm: the L queue's own step on the packet's sojourn.
            if verdict == Verdict::Pass && apply_step && sojourn > self.step_thresh {
                if cx.codepoint(id) == ECN_NOT_ECT {
                    verdict = Verdict::Drop;
                } else {
                    self.mark(id, in_l, cx);
                }
            }
            if verdict == Verdict::Drop {
                self.count_drop(in_l);
                cx.drop(id, DropReason::Aqm);
                continue;
            }
            self.credit += change;
            return Some(id);
        }
        None
    }

    /// p'; the sojourn of the last packet to leave each queue, ms; CE marks
    /// and AQM drops per queue since the start (cumulative counts).
    fn state_names(&self) -> &'static [&'static str] {
        &[
            "dualpi2_prob",
            "dualpi2_l_delay_ms",
            "dualpi2_c_delay_ms",
            "dualpi2_l_marks",
            "dualpi2_c_marks",
            "dualpi2_l_drops",
            "dualpi2_c_drops",
        ]
    }

    fn state(&self) -> [f64; 2] {
        [self.base_prob(), self.l_sojourn as f64 / PS_PER_MS as f64]
    }

    fn state_all(&self) -> [f64; MAX_STATE] {
        let ms = |t: Time| t as f64 / PS_PER_MS as f64;
        [
            self.base_prob(),
            ms(self.l_sojourn),
            ms(self.c_sojourn),
            self.l_marks as f64,
            self.c_marks as f64,
            self.l_drops as f64,
            self.c_drops as f64,
            f64::NAN,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::books::Books;
    use super::super::testkit::Pkts;
    use super::super::Qdisc;
    use super::*;
    use crate::packet::{ECN_CE, ECN_ECT0, ECN_ECT1};

    const MS: Time = 1_000_000_000;
    const US: Time = 1_000_000;
    const MTU: u32 = 1514;

    /// `n` packets of one MTU with the ECN field `cp`.
    fn pkts(n: usize, cp: u8) -> Pkts {
        Pkts::with_codepoint(n, MTU, cp)
    }

    fn dualpi2(cfg: DualPi2Config) -> Qdisc<DualPi2> {
        Qdisc::around(DualPi2::new(cfg, QueueLimit::Packets(10_000), Rng::new(7, 1)))
    }

    fn prob(p: f64) -> u32 {
        (p * f64::from(MAX_PROB)) as u32
    }

    // Linux dualpi2_scale_alpha_beta on the defaults of dualpi2_reset_default:
    // 0.16 Hz → 41/256 → ((41·(2³²−1)) >> 2)/10⁹ = 44; 3.2 Hz → 819 → 879.
    #[test]
    fn gains_in_linux_integers() {
        assert_eq!((netlink_alpha_beta(0.16), netlink_alpha_beta(3.2)), (41, 819));
        assert_eq!((scale_alpha_beta(41), scale_alpha_beta(819)), (44, 879));
        let q = DualPi2::new(DualPi2Config::default(), QueueLimit::Packets(10), Rng::new(1, 1));
        assert_eq!(q.gains(), (44, 879));
        // Effective gains: 44/64·10⁹/2³² = 0.160071 Hz, 879/64·10⁹/2³² = 3.197783 Hz.
        let hz = |g: u32| f64::from(g) / 64.0 * 1e9 / 4294967296.0;
        assert!((hz(44) - 0.160071).abs() < 1e-6 && (hz(879) - 3.197783).abs() < 1e-6);
        // RFC 9332 Appendix A.1's 0.15 Hz and 3 Hz: 38/256 and 768/256.
        assert_eq!((netlink_alpha_beta(0.15), netlink_alpha_beta(3.0)), (38, 768));
    }

    // Linux calculate_probability, integer arithmetic, step by step.
    #[test]
    fn probability_updates_are_linux_exact() {
        let mut q = DualPi2::new(DualPi2Config::default(), QueueLimit::Packets(10), Rng::new(1, 1));
        // p' 0, qdelay 20 ms, last 15 ms: (5·10⁶·44 + 5·10⁶·879)/64 = 72 109 375.
        q.last_qdelay_ns = 15_000_000;
        q.calculate_probability(20_000_000);
        assert_eq!(q.prob, 72_109_375);
        assert!((q.base_prob() - 0.016789).abs() < 1e-6);
        // Then qdelay 20 ms, last 20 ms: + 5·10⁶·44/64 = 3 437 500.
        q.calculate_probability(20_000_000);
        assert_eq!(q.prob, 75_546_875);
        assert!((q.base_prob() - 0.017590).abs() < 1e-6);
        // Then qdelay 10 ms, last 20 ms: −(2.2·10⁸ + 8.79·10⁹)/64 = −140 781 250 > p': 0.
        q.calculate_probability(10_000_000);
        assert_eq!(q.prob, 0);
        assert_eq!(q.last_qdelay_ns, 10_000_000);
    }

    // A constant 25 ms head age from p' = 0, last = 0: the first update
    // adds (10⁷·44 + 2.5·10⁷·879)/64 = 350 234 375, each later one 6 875 000.
    #[test]
    fn probability_ramp_at_constant_delay() {
        let mut q = DualPi2::new(DualPi2Config::default(), QueueLimit::Packets(10), Rng::new(1, 1));
        let mut got = vec![];
        for _ in 0..10 {
            q.calculate_probability(25_000_000);
            got.push(q.prob);
        }
        assert_eq!(got[0], 350_234_375);
        assert_eq!(got[1], 357_109_375);
        assert_eq!(got[4], 377_734_375);
        assert_eq!(got[9], 412_109_375);
        for (i, want) in [(0, 0.081545), (1, 0.083146), (4, 0.087948), (9, 0.095952)] {
            assert!((f64::from(got[i]) / f64::from(MAX_PROB) - want).abs() < 1e-6, "{i}");
        }
        // Without drop_on_overload p' stops at MAX_PROB/k.
        let cfg = DualPi2Config { drop_on_overload: false, ..DualPi2Config::default() };
        let mut q = DualPi2::new(cfg, QueueLimit::Packets(10), Rng::new(1, 1));
        for _ in 0..200 {
            q.calculate_probability(1_000_000_000);
        }
        assert_eq!(q.prob, MAX_PROB / 2);
    }

    // The lazy update equals a timer every tupdate reading the head ages at
    // its instant: one C packet enqueued at 1 ms, the next call at 50 ms runs
    // the updates of 16, 32 and 48 ms with head ages 15, 31 and 47 ms.
    #[test]
    fn lazy_updates_equal_a_timer() {
        let mut q = dualpi2(DualPi2Config::default());
        let mut pk = pkts(4, ECN_ECT0);
        pk.enq[0] = MS;
        assert!(q.enqueue(0, MS, &mut pk));
        pk.enq[1] = 50 * MS;
        assert!(q.enqueue(1, 50 * MS, &mut pk));
        let mut want = DualPi2::new(DualPi2Config::default(), QueueLimit::Packets(10), Rng::new(1, 1));
        for age_ms in [15, 31, 47] {
            want.calculate_probability(age_ms * 1_000_000);
        }
        assert_eq!(q.discipline().prob, want.prob);
        assert_eq!(q.discipline().last_qdelay_ns, 47_000_000);
        assert_eq!(q.discipline().next_update, 64 * MS);
        // The L head's age counts when it is the older: an L packet from
        // 40 ms is younger than C's head (1 ms), so the 64 ms update reads 63 ms.
        pk.cp[2] = ECN_ECT1;
        pk.enq[2] = 60 * MS;
        assert!(q.enqueue(2, 60 * MS, &mut pk));
        pk.enq[3] = 65 * MS;
        assert!(q.enqueue(3, 65 * MS, &mut pk));
        want.calculate_probability(63_000_000);
        assert_eq!(q.discipline().prob, want.prob);
    }

    // An idle queue at p' = 0 skips its updates in one step, and lands on the
    // same boundary the loop would.
    #[test]
    fn idle_updates_are_skipped_exactly() {
        let mut q = dualpi2(DualPi2Config::default());
        let mut pk = pkts(1, ECN_ECT0);
        pk.enq[0] = 1000 * MS + 5;
        assert!(q.enqueue(0, 1000 * MS + 5, &mut pk));
        assert_eq!(q.discipline().next_update, 1008 * MS);
        assert_eq!(q.discipline().prob, 0);
    }

    /// Fractions of `n` packets of codepoint `cp` marked and dropped by the
    /// PI2 decision at p' = `p`, with 10 full packets queued besides.
    fn decide(p: f64, cp: u8, cfg: DualPi2Config, n: u32) -> (f64, f64) {
        let in_l = cp & cfg.ecn_mask != 0;
        let mut q = DualPi2::new(cfg, QueueLimit::Packets(10), Rng::new(3, 1));
        q.prob = prob(p);
        let mut pk = pkts(n as usize, cp);
        let (mut books, mut dropped) = (Books::default(), Vec::new());
        let mut cx = Cx::new(0, &mut pk, &mut books, &mut dropped);
        let (mut marks, mut drops) = (0, 0);
        for id in 0..n {
            match q.must_drop(id, in_l, 10 * u64::from(MTU), &mut cx) {
                Verdict::Marked => marks += 1,
                Verdict::Drop => drops += 1,
                Verdict::Pass => {}
            }
        }
        (f64::from(marks) / f64::from(n), f64::from(drops) / f64::from(n))
    }

    // RFC 9332 §2.1: p' = 0.1 gives p_C = p'² = 0.01 and p_CL = k·p' =
    // 0.2; Not-ECT Classic packets are dropped instead of marked. 200 000
    // draws each: the tolerance is 4 standard deviations of the fraction.
    #[test]
    fn squared_and_linear_coupling() {
        let n = 200_000;
        let tol = |p: f64| 4.0 * (p * (1.0 - p) / f64::from(n)).sqrt();
        let d = DualPi2Config::default;
        let (m, x) = decide(0.1, ECN_ECT0, d(), n);
        println!("p' 0.1: C ECT(0) marked {m:.5}");
        assert!((m - 0.01).abs() < tol(0.01) && x == 0.0, "C ECT(0): {m} {x}");
        let (m, x) = decide(0.1, ECN_NOT_ECT, d(), n);
        assert!((x - 0.01).abs() < tol(0.01) && m == 0.0, "C Not-ECT: {m} {x}");
        let (m, x) = decide(0.1, ECN_ECT1, d(), n);
        println!("p' 0.1: L ECT(1) marked {m:.5}");
        assert!((m - 0.2).abs() < tol(0.2) && x == 0.0, "L ECT(1): {m} {x}");
        let (m, x) = decide(0.1, ECN_CE, d(), n);
        assert!((m - 0.2).abs() < tol(0.2) && x == 0.0, "L CE: {m} {x}");
        // k = 3: p_CL = 0.3.
        let (m, _) = decide(0.1, ECN_ECT1, DualPi2Config { coupling_factor: 3, ..d() }, n);
        assert!((m - 0.3).abs() < tol(0.3), "k = 3: {m}");
    }

    // RFC 9332 §4.2.3 / Linux drop_on_overload: k·p' = 1 exactly
    // (p' = MAX_PROB/2) is not overload, every L packet is marked; p' = 0.51
    // is: Classic ECN packets are dropped with p'² = 0.2601 instead of
    // marked, L packets dropped with p'² and the rest all marked. With
    // `overflow` L packets are only ever marked.
    #[test]
    fn overload_switches_to_drop() {
        let n = 200_000;
        let tol = 4.0 * (0.2601f64 * 0.7399 / f64::from(n)).sqrt();
        let d = DualPi2Config::default;
        let (m, x) = decide(0.5, ECN_ECT1, d(), n);
        assert!(m > 0.99999 && x == 0.0, "L at k·p' = 1: {m} {x}");
        let (m, x) = decide(0.5, ECN_ECT0, d(), n);
        assert!((m - 0.25).abs() < tol && x == 0.0, "C at k·p' = 1: {m} {x}");
        let (m, x) = decide(0.51, ECN_ECT0, d(), n);
        assert!((x - 0.2601).abs() < tol && m == 0.0, "C on overload: {m} {x}");
        let (m, x) = decide(0.51, ECN_ECT1, d(), n);
        println!("p' 0.51: L ECT(1) dropped {x:.5}, marked {m:.5}");
        assert!((x - 0.2601).abs() < tol && (m + x - 1.0).abs() < 1e-12, "L on overload: {m} {x}");
        let (m, x) = decide(0.51, ECN_ECT1, DualPi2Config { drop_on_overload: false, ..d() }, n);
        assert!(m == 1.0 && x == 0.0, "L with overflow: {m} {x}");
    }

    // Linux must_drop: no PI decision with less than 2 MTU queued besides
    // the packet (2 900 B < 3 028 B), whatever p'.
    #[test]
    fn no_decision_below_two_mtu() {
        let mut q = DualPi2::new(DualPi2Config::default(), QueueLimit::Packets(10), Rng::new(3, 1));
        q.prob = MAX_PROB;
        let mut pk = pkts(2, ECN_NOT_ECT);
        pk.cp[1] = ECN_ECT1;
        let (mut books, mut dropped) = (Books::default(), Vec::new());
        let mut cx = Cx::new(0, &mut pk, &mut books, &mut dropped);
        for _ in 0..1000 {
            assert_eq!(q.must_drop(0, false, 2900, &mut cx), Verdict::Pass);
            assert_eq!(q.must_drop(1, true, 2900, &mut cx), Verdict::Pass);
        }
        assert_eq!(q.must_drop(0, false, 3028, &mut cx), Verdict::Drop);
    }

    // RFC 9331 §5.1 / Linux dualpi2_skb_classify: ECT(1) and CE to L,
    // Not-ECT and ECT(0) to C; any_ect sends ECT(0) to L as well.
    #[test]
    fn classification_by_codepoint() {
        for (mask, want_l) in [("l4s_ect", vec![1, 3]), ("any_ect", vec![1, 2, 3])] {
            let cfg =
                QdiscConfig::from_params("dualpi2", &[("ecn_mask".into(), ParamValue::Str(mask.into()))]).unwrap();
            let QdiscConfig::DualPi2(cfg) = cfg else { unreachable!() };
            let mut q = dualpi2(cfg);
            let mut pk = pkts(4, 0);
            pk.cp = vec![ECN_NOT_ECT, ECN_ECT1, ECN_ECT0, ECN_CE];
            for id in 0..4 {
                assert!(q.enqueue(id, 0, &mut pk));
            }
            let l: Vec<PacketId> = q.discipline().l.iter().map(|p| p.id).collect();
            let c: Vec<PacketId> = q.discipline().c.iter().copied().collect();
            assert_eq!(l, want_l, "{mask}");
            assert_eq!(c, (0..4).filter(|i| !want_l.contains(i)).collect::<Vec<_>>(), "{mask}");
        }
    }

    use super::super::{ParamValue, QdiscConfig};

    // Linux do_step_aqm: an L packet whose sojourn exceeds step_thresh (1 ms)
    // is CE-marked at dequeue; 1.1 ms is marked, 0.9 ms and exactly 1 ms are
    // not, and a Classic packet never is (one packet queued: no PI decision).
    // At 100 Mbit/s 1 ms is 8.3 full packets.
    #[test]
    fn step_marks_above_one_ms() {
        for (cp, wait, marked) in [
            (ECN_ECT1, 1100 * US, true),
            (ECN_ECT1, 900 * US, false),
            (ECN_ECT1, MS, false),
            (ECN_ECT1, MS + 1, true),
            (ECN_ECT0, 1100 * US, false),
        ] {
            let mut q = dualpi2(DualPi2Config::default());
            let mut pk = pkts(1, cp);
            pk.enq[0] = MS;
            assert!(q.enqueue(0, MS, &mut pk));
            assert_eq!(q.dequeue(MS + wait, &mut pk), Some(0));
            assert_eq!(pk.cp[0] == ECN_CE, marked, "{cp} after {wait} ps");
            assert_eq!(q.marks(), marked as u64);
        }
        // min_qlen_step: the step applies only to packets arriving to at
        // least that many L packets.
        let mut q = dualpi2(DualPi2Config { min_qlen_step: 2, ..DualPi2Config::default() });
        let mut pk = pkts(3, ECN_ECT1);
        for id in 0..3 {
            assert!(q.enqueue(id, 0, &mut pk));
        }
        for id in 0..3 {
            assert_eq!(q.dequeue(2 * MS, &mut pk), Some(id));
        }
        assert_eq!(pk.cp, [ECN_ECT1, ECN_ECT1, ECN_CE]);
    }

    /// Fills both queues with `n` full-size packets each at time 0 and
    /// returns the order of the first `m` departures ('L' or 'C').
    fn serve(cfg: DualPi2Config, n: u32, m: usize) -> (String, Qdisc<DualPi2>, Pkts) {
        let mut q = dualpi2(cfg);
        let mut pk = pkts(2 * n as usize, ECN_ECT1);
        for id in 0..2 * n {
            pk.cp[id as usize] = if id.is_multiple_of(2) { ECN_ECT1 } else { ECN_ECT0 };
            assert!(q.enqueue(id, 0, &mut pk));
        }
        // Step and PI2 off the path: no sojourn passes 1 ms at time 0, p' = 0.
        let order = (0..m)
            .map(|_| if q.dequeue(0, &mut pk).unwrap().is_multiple_of(2) { 'L' } else { 'C' })
            .collect::<String>();
        (order, q, pk)
    }

    // Linux dequeue_packet with classic_protection 10 %: credit starts at
    // 1514·(10 − 90) = −121 120; nine L packets bring it to +15 140, one C
    // packet back to −121 120: LLLLLLLLLC repeated, bytes exactly 90 : 10.
    #[test]
    fn wrr_gives_classic_ten_percent() {
        let (order, q, _) = serve(DualPi2Config::default(), 4800, 5000);
        assert_eq!(q.discipline().credit_init, -121_120);
        assert_eq!(&order[..20], "LLLLLLLLLCLLLLLLLLLC");
        assert!(order == "LLLLLLLLLC".repeat(500), "{} C of 5000", order.matches('C').count());
        assert_eq!(q.discipline().credit, -121_120);
        // classic_protection 50: alternate.
        let (order, _, _) = serve(DualPi2Config { classic_protection: 50, ..DualPi2Config::default() }, 100, 20);
        assert_eq!(order, "LC".repeat(10));
        // Once L empties C is served alone, and the credit resets when both are empty.
        let (_, mut q, mut pk) = serve(DualPi2Config::default(), 10, 0);
        let order: String = std::iter::from_fn(|| q.dequeue(0, &mut pk))
            .map(|id| if id.is_multiple_of(2) { 'L' } else { 'C' })
            .collect();
        assert_eq!(order, "LLLLLLLLLCLCCCCCCCCC");
        assert_eq!(q.discipline().credit, -121_120);
    }

    // RFC 9332's time-shifted FIFO: L is served unless C's head has waited
    // more than tshift (50 ms) longer than L's.
    #[test]
    fn time_shifted_fifo() {
        let cfg = QdiscConfig::from_params("dualpi2", &[("scheduler".into(), ParamValue::Str("tshift".into()))]);
        let Ok(QdiscConfig::DualPi2(cfg)) = cfg else { unreachable!() };
        let mut q = dualpi2(cfg);
        let mut pk = pkts(4, ECN_ECT0);
        // C at 0 and 10 ms, L at 40 and 70 ms.
        for (id, t_ms, cp) in [(0, 0, ECN_ECT0), (1, 10, ECN_ECT0), (2, 40, ECN_ECT1), (3, 70, ECN_ECT1)] {
            pk.cp[id as usize] = cp;
            pk.enq[id as usize] = t_ms * MS;
            assert!(q.enqueue(id, t_ms * MS, &mut pk));
        }
        // L@40 − 50 < C@0: L; then L@70 − 50 = 20 > C@0: C, C@10: C; then L.
        let order: Vec<PacketId> = std::iter::from_fn(|| q.dequeue(70 * MS, &mut pk)).collect();
        assert_eq!(order, [2, 0, 1, 3]);
    }

    /// Drives `q` behind a `rate_bps` link with `load` × its rate of
    /// full-size `cp` packets, evenly spaced, for `secs`; returns the
    /// fraction of arrivals dropped by the AQM, by overflow, the fraction
    /// of departures marked and the mean p' over the second half.
    fn saturate(cfg: DualPi2Config, limit: u64, cp: u8, load: f64, secs: u64) -> (f64, f64, f64, f64) {
        let rate_bps = 10_000_000;
        let mut q = Qdisc::around(DualPi2::new(cfg, QueueLimit::Packets(limit), Rng::new(5, 1)));
        let tx = crate::event::PS_PER_S * u64::from(MTU) * 8 / rate_bps;
        let gap = (tx as f64 / load) as Time;
        let end = secs * crate::event::PS_PER_S;
        let n = (end / gap + 1) as usize;
        let mut pk = pkts(n, cp);
        let (mut next_arrival, mut link_free, mut id) = (0, 0, 0usize);
        let (mut sent, mut marked, mut p_sum, mut p_n) = (0u64, 0u64, 0.0, 0u64);
        while next_arrival < end || !q.is_empty() {
            if next_arrival < end && next_arrival <= link_free {
                pk.enq[id] = next_arrival;
                q.enqueue(id as PacketId, next_arrival, &mut pk);
                id += 1;
                next_arrival += gap;
            } else {
                let now = link_free.max(if q.is_empty() { next_arrival } else { 0 });
                if let Some(d) = q.dequeue(now, &mut pk) {
                    sent += 1;
                    marked += u64::from(pk.cp[d as usize] == ECN_CE);
                    link_free = now + tx;
                    if now > end / 2 && now < end {
                        p_sum += q.discipline().base_prob();
                        p_n += 1;
                    }
                } else {
                    link_free = now.max(next_arrival);
                }
                while q.pop_dropped().is_some() {}
            }
        }
        let b = q.books();
        assert_eq!(b.arrivals, b.departures + b.drops.iter().sum::<u64>());
        assert_eq!(b.departures, sent);
        let arrivals = b.arrivals as f64;
        (
            b.dropped(DropReason::Aqm) as f64 / arrivals,
            b.dropped(DropReason::Overflow) as f64 / arrivals,
            marked as f64 / sent as f64,
            p_sum / p_n as f64,
        )
    }

    // RFC 9332 §4.2.3, Linux drop_on_overload: unresponsive ECT(1) traffic
    // at 1.2 × the link can only be held by drops, which start once
    // k·p' > 1. p' settles near 0.5 (p'² ≈ 0.25 drops while over, none
    // below), the drops take the excess (1 − 1/1.2 = 1/6 of arrivals,
    // ±0.01) and the 10 000-packet buffer never overflows.
    #[test]
    fn overload_drops_unresponsive_l4s_traffic() {
        let (aqm, overflow, marked, p) = saturate(DualPi2Config::default(), 10_000, ECN_ECT1, 1.2, 30);
        println!("drop_on_overload: aqm drops {aqm:.4}, overflow {overflow:.4}, marked {marked:.4}, mean p' {p:.4}");
        assert!((aqm - 1.0 / 6.0).abs() < 0.01, "aqm drop fraction {aqm}");
        assert_eq!(overflow, 0.0);
        assert!((0.45..=0.55).contains(&p), "mean p' {p}");
        assert!(marked > 0.9, "marked {marked}");
        // `overflow`: no AQM drop, p' held at 1/k so every L packet is
        // marked, and the buffer tail-drops the excess but the 1 000
        // packets it holds (sent at the end): 1/6 − 1000/29 700 arrivals.
        let cfg = DualPi2Config { drop_on_overload: false, ..DualPi2Config::default() };
        let (aqm, overflow, marked, p) = saturate(cfg, 1000, ECN_ECT1, 1.2, 30);
        println!("overflow: aqm drops {aqm:.4}, overflow {overflow:.4}, marked {marked:.4}, mean p' {p:.4}");
        assert_eq!(aqm, 0.0);
        assert!((overflow - (1.0 / 6.0 - 1000.0 / 29_700.0)).abs() < 0.002, "overflow fraction {overflow}");
        assert!(marked > 0.999, "marked {marked}");
        assert!((p - 0.5).abs() < 1e-6, "p' {p}");
    }

    // Every packet offered is sent, dropped (and handed back exactly once)
    // or still held, with mixed codepoints, both schedulers and both drop
    // points, under overload.
    #[test]
    fn packets_are_conserved() {
        use std::collections::HashSet;
        for (sched, drop_enqueue) in [("wrr", false), ("wrr", true), ("tshift", false), ("tshift", true)] {
            let cfg = QdiscConfig::from_params(
                "dualpi2",
                &[
                    ("scheduler".into(), ParamValue::Str(sched.into())),
                    ("drop_enqueue".into(), ParamValue::Bool(drop_enqueue)),
                ],
            );
            let Ok(QdiscConfig::DualPi2(cfg)) = cfg else { unreachable!() };
            let mut q = Qdisc::around(DualPi2::new(cfg, QueueLimit::Packets(300), Rng::new(9, 1)));
            let n = 60_000;
            let mut pk = pkts(n, 0);
            let mut held = HashSet::new();
            let mut next = 0usize;
            for ms in 0..6000u64 {
                let now = ms * MS;
                for _ in 0..(ms * 7 % 13) {
                    let i = next;
                    next += 1;
                    pk.cp[i] = (i * 2654435761 % 4) as u8;
                    pk.len[i] = 64 + (i as u32 * 389) % 1451;
                    pk.enq[i] = now;
                    if q.enqueue(i as PacketId, now, &mut pk) {
                        held.insert(i as PacketId);
                    }
                }
                for _ in 0..5 {
                    if let Some(id) = q.dequeue(now, &mut pk) {
                        assert!(held.remove(&id));
                    }
                    while let Some(d) = q.pop_dropped() {
                        assert!(held.remove(&d), "{sched}: dropped {d} twice or never held");
                    }
                }
                let b = q.books();
                assert_eq!(b.arrivals, b.departures + b.drops.iter().sum::<u64>() + held.len() as u64);
                assert_eq!(q.len(), held.len());
                let d = q.discipline();
                assert_eq!(d.l.len() + d.c.len(), held.len());
            }
            while let Some(id) = q.dequeue(7000 * MS, &mut pk) {
                assert!(held.remove(&id));
                while let Some(d) = q.pop_dropped() {
                    assert!(held.remove(&d));
                }
            }
            while let Some(d) = q.pop_dropped() {
                assert!(held.remove(&d));
            }
            assert!(held.is_empty() && q.is_empty() && q.bytes() == 0, "{sched}");
            let (b, d) = (q.books(), q.discipline());
            assert_eq!(b.marks, d.l_marks + d.c_marks);
            assert_eq!(b.dropped(DropReason::Aqm), d.l_drops + d.c_drops);
            assert!(b.dropped(DropReason::Aqm) > 0 && b.marks > 0, "{sched} {drop_enqueue}: {b:?}");
        }
    }

    #[test]
    fn state_columns() {
        let q = dualpi2(DualPi2Config::default());
        let d = q.discipline();
        assert_eq!(d.state_names().len(), 7);
        let s = q.state();
        assert_eq!(&s[..7], &[0.0; 7]);
        assert!(s[7].is_nan());
        assert_eq!(d.state(), [0.0, 0.0]);
    }
}
