//! AccECN feedback (RFC 9768, "More Accurate ECN Feedback in TCP"), as
//! Linux implements it (`include/net/tcp_ecn.h`, `net/ipv4/tcp_input.c`
//! `__tcp_accecn_process`, `tcp_update_ecn_bytes`).
//!
//! The receiver counts CE-marked packets (r.cep) and the payload bytes that
//! arrived with each ECN codepoint (r.e0b, r.ceb, r.e1b). Every ACK carries
//! the low 3 bits of r.cep in the ACE field (the AE, CWR and ECE header
//! bits) and, when the option is on, the low 24 bits of the byte counters in
//! the AccECN option. The sender turns the change of ACE into the number of
//! newly CE-marked packets, using the byte counters to resolve a wrap of the
//! 3-bit field when one ACK acknowledges more than 7 packets.
//!
//! ```text
//!  receiver                                   sender
//!  r.cep = 5 (+1 per CE packet)  ── ACE = r.cep mod 8 ──►  delta = (ACE − 5 − delivered_ce) mod 8
//!  r.ceb, r.e0b, r.e1b           ── option (24 bits) ──►   d_ceb = newly reported CE bytes
//!                                                         d ≤ 7: delta;  else a multiple of 8 more,
//!                                                         judged from d_ceb (see `Mirror::process`)
//! ```
//!
//! The handshake is not simulated: the mode is chosen from the two ends'
//! settings ([`super::sender::negotiate_ecn`]). The failure cases (ACE or option
//! zeroed by a middlebox) are not modelled.

use crate::packet::{AccEcnOption, ECN_CE, ECN_ECT0, ECN_ECT1};

/// Linux `TCP_ACCECN_CEP_INIT_OFFSET`: r.cep starts at 5, so that a zeroed
/// ACE field is detectable.
pub const CEP_INIT: u32 = 5;
/// Linux `TCP_ACCECN_E0B_INIT_OFFSET` / `TCP_ACCECN_E1B_INIT_OFFSET` /
/// `TCP_ACCECN_CEB_INIT_OFFSET`.
pub const E0B_INIT: u32 = 1;
pub const E1B_INIT: u32 = 1;
pub const CEB_INIT: u32 = 0;
/// Linux `TCP_ACCECN_CEP_ACE_MASK`: the ACE field's 3 bits.
pub const ACE_MASK: u32 = 7;
/// Linux `TCP_ACCECN_ACE_MAX_DELTA`: the receiver ACKs at once when this
/// many CE marks wait for feedback, so the ACE field cannot wrap between ACKs.
pub const ACE_MAX_DELTA: u32 = 6;
/// Option fields are 24 bits.
const FIELD_MASK: u32 = (1 << 24) - 1;
/// Linux `TCP_ACCECN_SAFETY_SHIFT`: the safety factor 2 of the heuristic.
const SAFETY_SHIFT: u32 = 1;

/// The receiver's counters (RFC 9768 §3.2; Linux `received_ce`,
/// `received_ecn_bytes`), counted from zero; the initial offsets are added
/// on the wire, as Linux does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Packets arriving CE (r.cep − 5).
    pub cep: u64,
    /// Payload bytes arriving ECT(0), CE, ECT(1).
    pub e0b: u64,
    pub ceb: u64,
    pub e1b: u64,
    /// Option fields needed (order 1: EE1B, ECEB, EE0B): the furthest field
    /// whose counter ever changed (Linux `accecn_minlen`).
    pub fields: u8,
}

impl Counters {
    /// Counts one arriving segment (Linux `tcp_ecn_received_counters`).
    #[inline]
    pub fn count(&mut self, codepoint: u8, payload: u32) {
        let b = payload as u64;
        let field = match codepoint {
            ECN_CE => {
                self.cep += 1;
                self.ceb += b;
                2
            }
            ECN_ECT1 => {
                self.e1b += b;
                1
            }
            ECN_ECT0 => {
                self.e0b += b;
                3
            }
            _ => 0,
        };
        if b > 0 {
            self.fields = self.fields.max(field);
        }
    }

    /// The ACE field: r.cep mod 8 (Linux `tcp_accecn_set_ace`).
    #[inline]
    pub fn ace(&self) -> u8 {
        ((self.cep + CEP_INIT as u64) & ACE_MASK as u64) as u8
    }

    /// The AccECN option with the fields needed, at most `max_fields`
    /// (trailing fields are left out when the option space is short).
    #[inline]
    pub fn option(&self, max_fields: u8) -> AccEcnOption {
        AccEcnOption {
            len: 2 + 3 * self.fields.min(max_fields),
            ee1b: (self.e1b as u32).wrapping_add(E1B_INIT) & FIELD_MASK,
            eceb: (self.ceb as u32).wrapping_add(CEB_INIT) & FIELD_MASK,
            ee0b: (self.e0b as u32).wrapping_add(E0B_INIT) & FIELD_MASK,
        }
    }
}

/// The sender's mirror of the receiver's counters (Linux `delivered_ce`,
/// `delivered_ecn_bytes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mirror {
    /// CE-marked packets counted so far (s.cep − 5).
    pub delivered_ce: u64,
    /// Payload bytes reported ECT(0), CE, ECT(1).
    pub e0b: u64,
    pub ceb: u64,
    pub e1b: u64,
}

/// What the sender knows about one ACK besides its ACE field and option.
#[derive(Clone, Copy, Debug)]
pub struct AckFacts {
    /// Packets newly delivered (cumulatively or selectively acknowledged).
    pub delivered_pkts: u32,
    /// Payload bytes newly delivered.
    pub delivered_bytes: u64,
    pub mss: u32,
    /// SACK is in use, or the connection is in Open or CWR (Linux:
    /// `tcp_is_sack(tp) || ca_state ∈ {Open, CWR}`).
    pub sack_or_open: bool,
}

/// Linux `tcp_update_ecn_bytes`: the change of a 24-bit field read as a
/// signed 24-bit value, added to the stored counter; returns the change.
#[inline]
pub fn update_bytes(stored: &mut u64, field: u32, init: u32) -> i64 {
    let diff = (field.wrapping_sub(init).wrapping_sub(*stored as u32)) & FIELD_MASK;
    // Bit 23 is the sign.
    let delta = if diff & (1 << 23) != 0 { diff as i64 - (1 << 24) } else { diff as i64 };
    *stored = (*stored as i64).wrapping_add(delta) as u64;
    delta
}

impl Mirror {
    /// Linux `__tcp_accecn_process`: packets newly CE-marked according to
    /// this ACK, added to `delivered_ce`. Call only for an ACK that
    /// delivers something (Linux `FLAG_FORWARD_PROGRESS`).
    ///
    /// ```text
    /// delta = ((ACE − 5) − delivered_ce) mod 8
    /// d ≤ 7: delta                          (the field cannot have wrapped)
    /// else safe = d − ((d − delta) mod 8)   (the largest count ≤ d that is ≡ delta mod 8)
    ///      with the option's CE bytes d_ceb:
    ///        d_ceb = 0 → delta
    ///        d ≥ 16 and (SACK or Open/CWR) → d_ceb ≥ delivered bytes: safe,
    ///            else min(safe, delta + ⌈d_ceb·d/bytes⌉ rounded down to a multiple of 8)
    ///        d_ceb > delta·mss → safe;  d_ceb < safe·mss/2 → delta
    ///      no option → safe
    /// ```
    pub fn process(&mut self, ace: u8, opt: &AccEcnOption, ack: AckFacts) -> u32 {
        let old_ceb = self.ceb;
        let opt_valid = opt.len >= 2;
        if opt_valid {
            let n = opt.fields();
            if n >= 1 {
                update_bytes(&mut self.e1b, opt.ee1b, E1B_INIT);
            }
            if n >= 2 {
                update_bytes(&mut self.ceb, opt.eceb, CEB_INIT);
            }
            if n >= 3 {
                update_bytes(&mut self.e0b, opt.ee0b, E0B_INIT);
            }
        }
        let d = ack.delivered_pkts;
        let corrected = (ace as u32).wrapping_sub(CEP_INIT);
        let delta = corrected.wrapping_sub(self.delivered_ce as u32) & ACE_MASK;
        let result = if d <= ACE_MASK {
            delta
        } else {
            let safe = d - ((d - delta) & ACE_MASK);
            let d_ceb = self.ceb.wrapping_sub(old_ceb);
            let mss = ack.mss as u64;
            if !opt_valid {
                safe
            } else if d_ceb == 0 {
                delta
            } else if d >= (ACE_MASK + 1) * 2 && ack.sack_or_open {
                if ack.delivered_bytes <= d_ceb {
                    safe
                } else {
                    let est = (d_ceb * d as u64).div_ceil(ack.delivered_bytes);
                    safe.min(delta + (est as u32 & !ACE_MASK))
                }
            } else if d_ceb > delta as u64 * mss {
                safe
            } else if d_ceb < (safe as u64 * mss) >> SAFETY_SHIFT {
                delta
            } else {
                safe
            }
        };
        self.delivered_ce += result as u64;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn facts(d: u32) -> AckFacts {
        AckFacts { delivered_pkts: d, delivered_bytes: d as u64 * MSS as u64, mss: MSS, sack_or_open: true }
    }

    fn no_opt() -> AccEcnOption {
        AccEcnOption::default()
    }

    /// An option reporting `ceb` CE bytes in total (order 1, 2 fields).
    fn opt_ceb(ceb: u64) -> AccEcnOption {
        let c = Counters { ceb, fields: 2, ..Default::default() };
        c.option(3)
    }

    // Worked by hand from RFC 9768's r.cep (initial value 5, Linux
    // TCP_ACCECN_CEP_INIT_OFFSET) and ACE = r.cep mod 8 (Linux
    // tcp_accecn_set_ace): ACE over successive CE arrivals from r.cep = 5.
    #[test]
    fn av3_ace_sequence() {
        let mut c = Counters::default();
        let mut seen = vec![c.ace()];
        for _ in 0..9 {
            c.count(ECN_CE, 1448);
            seen.push(c.ace());
        }
        assert_eq!(seen, vec![5, 6, 7, 0, 1, 2, 3, 4, 5, 6]);
    }

    // Linux __tcp_accecn_process, worked by hand: delivered_ce = 10 (last
    // ACE seen 7), ACK with ACE 2, d = 4: delta = (−3 − 10) mod 8 = 3;
    // delivered_ce → 13 (13 + 5 = 18 ≡ 2).
    #[test]
    fn av4_small_ack() {
        let mut m = Mirror { delivered_ce: 10, ..Default::default() };
        assert_eq!(m.process(2, &no_opt(), facts(4)), 3);
        assert_eq!(m.delivered_ce, 13);
    }

    // Linux __tcp_accecn_process, worked by hand: d = 10, delta = 1:
    // safe = 10 − (9 mod 8) = 9. With the option and MSS 1448: d_ceb = 1448
    // → 1 (1448 < 9·1448/2); d_ceb = 13 032 → 9; no option → 9. d = 20,
    // delta = 2 → safe 18.
    #[test]
    fn av5_wrap_resolved_by_bytes() {
        let ace_for = |ce: u64| ((ce + 5) & 7) as u8;
        // delta = 1: the receiver's count moved by 1 (mod 8).
        let run = |opt: AccEcnOption, d: u32| {
            let mut m = Mirror::default();
            m.process(ace_for(1), &opt, AckFacts { sack_or_open: false, ..facts(d) })
        };
        assert_eq!(run(opt_ceb(1448), 10), 1);
        assert_eq!(run(opt_ceb(13_032), 10), 9);
        assert_eq!(run(no_opt(), 10), 9);
        let mut m = Mirror::default();
        assert_eq!(m.process(ace_for(2), &no_opt(), facts(20)), 18);
        // A zero CE-byte change says the field did not wrap.
        let mut m = Mirror { ceb: 5000, ..Default::default() };
        assert_eq!(m.process(ace_for(1), &opt_ceb(5000), facts(10)), 1);
    }

    // The d ≥ 16 branch: 20 packets of 1448 bytes, 11 marked (ACE moved by 3):
    // est = ⌈11·1448·20/(20·1448)⌉ = 11 → delta + 8 = 11 (safe 19).
    #[test]
    fn large_ack_estimates_from_bytes() {
        let mut m = Mirror::default();
        let got = m.process(((11 + 5) & 7) as u8, &opt_ceb(11 * 1448), facts(20));
        assert_eq!(got, 11);
        assert_eq!(m.delivered_ce, 11);
        // Every byte CE: the safe value.
        let mut m = Mirror::default();
        assert_eq!(m.process(((20 + 5) & 7) as u8, &opt_ceb(20 * 1448), facts(20)), 20);
    }

    // Linux tcp_update_ecn_bytes, worked by hand: 24-bit wrap: stored CE
    // bytes 0xFFF000, ECEB field 0x000010 → Δ = 0x001010 = 4112, stored →
    // 16 777 232.
    #[test]
    fn av6_byte_counter_wrap() {
        let mut stored = 0xFF_F000u64;
        assert_eq!(update_bytes(&mut stored, 0x00_0010, CEB_INIT), 4112);
        assert_eq!(stored, 16_777_232);
        // A field that went backwards (reordered ACK) reads as negative.
        let mut stored = 100u64;
        assert_eq!(update_bytes(&mut stored, 40, CEB_INIT), -60);
    }

    // The receiver's option: order 1, as many fields as the counters that
    // ever changed need; initial offsets on the wire.
    #[test]
    fn option_fields_as_needed() {
        let mut c = Counters::default();
        assert_eq!(c.option(3).len, 2);
        c.count(ECN_ECT1, 1000);
        assert_eq!(c.option(3), AccEcnOption { len: 5, ee1b: 1001, eceb: 0, ee0b: 1 });
        c.count(ECN_CE, 1000);
        assert_eq!(c.option(3).len, 8);
        c.count(ECN_ECT0, 10);
        assert_eq!(c.option(3), AccEcnOption { len: 11, ee1b: 1001, eceb: 1000, ee0b: 11 });
        c.count(0, 10);
        assert_eq!(c.option(3).len, 11, "Not-ECT bytes are not counted");
        assert_eq!(c.option(2).len, 8, "EE0B left out beside two SACK blocks");
    }
}
