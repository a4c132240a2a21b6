//! Packets and the arena that holds them.
//!
//! A packet is plain data; it lives in a slot of the [`PacketArena`] from the
//! moment a host creates it until it is consumed or dropped, and components
//! pass its [`PacketId`]. Slots are reused through a free list, so after the
//! first window the hot path allocates nothing.

use crate::event::Time;
use cc::CcHeader;

pub type PacketId = u32;

/// The IP header's ECN codepoints (RFC 3168 §5; ECT(1) is L4S's identifier, RFC 9331 §4).
pub const ECN_NOT_ECT: u8 = 0;
pub const ECN_ECT1: u8 = 1;
pub const ECN_ECT0: u8 = 2;
pub const ECN_CE: u8 = 3;

/// What a queue discipline may read and write of a packet, so that the
/// simulator's arena and the emulator's slots share the disciplines' code.
pub trait PacketView {
    fn wire_len(&self, id: PacketId) -> u32;
    /// Time the packet entered this queue, ps.
    fn enqueued_at(&self, id: PacketId) -> Time;
    /// ECN-capable transport (ECT(0) or ECT(1)).
    fn ect(&self, id: PacketId) -> bool;
    /// The IP header's ECN field (RFC 3168 §5, RFC 9331): 0 Not-ECT,
    /// 1 ECT(1), 2 ECT(0), 3 CE. By default ECT(0) for an ECN-capable
    /// packet; a view that knows more says so.
    fn codepoint(&self, id: PacketId) -> u8 {
        if self.ect(id) {
            ECN_ECT0
        } else {
            ECN_NOT_ECT
        }
    }
    /// Sets CE.
    fn set_ce(&mut self, id: PacketId);
    /// Flow identity for FQ-CoDel's hash.
    fn flow_key(&self, id: PacketId) -> u64;
    /// The congestion header (XCP); none by default.
    fn cc_header(&self, _id: PacketId) -> CcHeader {
        CcHeader::default()
    }
    /// The congestion header, for the XCP router to write its feedback.
    fn cc_header_mut(&mut self, _id: PacketId) -> Option<&mut CcHeader> {
        None
    }
    /// A small number naming the flow a data packet belongs to (distinct
    /// for distinct flows); `None` for ACKs (and by default).
    fn data_flow(&self, _id: PacketId) -> Option<u32> {
        None
    }
}

/// The AccECN option on an ACK (RFC 9768 §3.2.3), in order 1 (kind 174,
/// AccECN1: EE1B, ECEB, EE0B), as Linux writes it (`tcp_options_write`).
/// Each field is the low 24 bits of a receiver byte counter. A packet holds
/// it in the TCP option space it shares with the SACK blocks (see
/// [`Packet::accecn_option`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccEcnOption {
    /// Option length in bytes: 0 when the ACK carries no option, else
    /// 2 + 3·n with n = 0…3 fields present (2, 5, 8, 11).
    pub len: u8,
    /// Payload bytes received ECT(1), plus 1 (first field).
    pub ee1b: u32,
    /// Payload bytes received CE (second field).
    pub eceb: u32,
    /// Payload bytes received ECT(0), plus 1 (third field).
    pub ee0b: u32,
}

impl AccEcnOption {
    /// Fields present (0 to 3).
    #[inline]
    pub fn fields(&self) -> u8 {
        if self.len < 2 {
            0
        } else {
            (self.len - 2) / 3
        }
    }

    /// Fields that fit beside `nsack` SACK blocks in the 40 bytes of TCP
    /// options, 12 of them taken by timestamps (the simulator's 52-byte
    /// header): 3 with up to one block (11 bytes, 12 aligned), 2 with two
    /// (8 bytes), none with three (the SACK blocks fill the space).
    #[inline]
    pub fn fields_that_fit(nsack: u8) -> u8 {
        match nsack {
            0 | 1 => 3,
            2 => 2,
            _ => 0,
        }
    }
}

/// Low 24 bits: an AccECN option field.
const FIELD24: u64 = (1 << 24) - 1;

/// Maximum SACK blocks carried by an ACK (RFC 2018 with timestamps: 3).
pub const MAX_SACK: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Data,
    Ack,
    /// Unresponsive datagram; `flow` is the UDP source index.
    Udp,
}

/// One packet. Sequence numbers are in segments (segment k covers bytes
/// [k·MSS, (k+1)·MSS)); the sender turns them into bytes where needed.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: u32,
    pub kind: Kind,
    /// Bytes on the wire (payload + headers).
    pub wire_len: u32,
    /// Payload bytes (0 for a pure ACK).
    pub payload: u32,
    /// Data: segment index. ACK: cumulative ACK (next segment expected).
    pub seg: u64,
    /// ACK: SACK blocks [start, end) in segments, most recent first.
    pub sack: [(u64, u64); MAX_SACK],
    pub nsack: u8,
    /// Data: this is a retransmission.
    pub retrans: bool,
    /// ECN: sender is ECN-capable (ECT).
    pub ect: bool,
    /// ECN: the ECT codepoint is ECT(1), the L4S identifier (RFC 9331);
    /// meaningful only with `ect`.
    pub ect1: bool,
    /// ECN: congestion experienced, set by a router.
    pub ce: bool,
    /// ACK: ECN echo. With AccECN, the low bit of the ACE field.
    pub ece: bool,
    /// Data: congestion window reduced (RFC 3168 CWR), ends the receiver's
    /// echo. With AccECN, the middle bit of an ACK's ACE field.
    pub cwr: bool,
    /// ACK: the AE header bit (the former NS bit), the high bit of the
    /// AccECN ACE field (RFC 9768: ACE = AE·4 + CWR·2 + ECE).
    pub ae: bool,
    /// Time the packet entered the current queue, ps.
    pub enqueued_at: u64,
    /// Links of its route the packet has crossed (its place on the route:
    /// the delay line it travels next is its flow's `hop`-th of that direction).
    pub hop: u8,
    /// ACK: the receive window, in units of 2^(the receiver's window scale)
    /// bytes (RFC 7323); read only by senders of flows whose receivers
    /// model Linux's window (`[tcp] receive_window = "linux"`).
    pub window: u16,
    /// Congestion header, written by the sender, rewritable by routers,
    /// echoed by the receiver.
    pub hdr: CcHeader,
}

impl Packet {
    pub fn data(flow: u32, seg: u64, payload: u32, wire_len: u32) -> Packet {
        Packet {
            flow,
            kind: Kind::Data,
            wire_len,
            payload,
            seg,
            sack: [(0, 0); MAX_SACK],
            nsack: 0,
            retrans: false,
            ect: false,
            ect1: false,
            ce: false,
            ece: false,
            cwr: false,
            ae: false,
            enqueued_at: 0,
            hop: 0,
            window: 0,
            hdr: CcHeader::default(),
        }
    }

    pub fn ack(flow: u32, cum: u64, wire_len: u32) -> Packet {
        Packet { kind: Kind::Ack, payload: 0, ..Packet::data(flow, cum, 0, wire_len) }
    }

    /// The IP header's ECN field (see [`PacketView::codepoint`]).
    #[inline]
    pub fn codepoint(&self) -> u8 {
        match (self.ce, self.ect, self.ect1) {
            (true, _, _) => ECN_CE,
            (false, true, true) => ECN_ECT1,
            (false, true, false) => ECN_ECT0,
            (false, false, _) => ECN_NOT_ECT,
        }
    }

    /// The AccECN ACE field: AE·4 + CWR·2 + ECE (RFC 9768).
    #[inline]
    pub fn ace(&self) -> u8 {
        (self.ae as u8) << 2 | (self.cwr as u8) << 1 | self.ece as u8
    }

    /// Writes the ACE field into the AE, CWR and ECE bits.
    #[inline]
    pub fn set_ace(&mut self, ace: u8) {
        self.ae = ace & 4 != 0;
        self.cwr = ace & 2 != 0;
        self.ece = ace & 1 != 0;
    }

    /// ACK: the AccECN option it carries (`len` 0: none). The option
    /// shares the TCP option space with the SACK blocks, and the packet
    /// keeps it where a third block would go (it cannot be there with three
    /// blocks), so a packet stays 120 bytes.
    #[inline]
    pub fn accecn_option(&self) -> AccEcnOption {
        if self.nsack as usize >= MAX_SACK {
            return AccEcnOption::default();
        }
        let (a, b) = self.sack[MAX_SACK - 1];
        AccEcnOption {
            len: (b >> 24) as u8,
            ee1b: (a & FIELD24) as u32,
            eceb: ((a >> 24) & FIELD24) as u32,
            ee0b: (b & FIELD24) as u32,
        }
    }

    /// ACK: writes the AccECN option, after the SACK blocks (at most two).
    #[inline]
    pub fn set_accecn_option(&mut self, o: AccEcnOption) {
        debug_assert!((self.nsack as usize) < MAX_SACK, "no option space beside three SACK blocks");
        let a = (o.ee1b as u64 & FIELD24) | (o.eceb as u64 & FIELD24) << 24;
        let b = (o.ee0b as u64 & FIELD24) | (o.len as u64) << 24;
        self.sack[MAX_SACK - 1] = (a, b);
    }
}

/// Slots for packets with a free list (htsim's PacketDB).
#[derive(Debug, Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
    live: u64,
    /// While the packet log is open: packets a discipline CE-marked, in
    /// order, for the simulator to log (see `crate::packet_log`).
    pub log_marks: bool,
    pub marked: Vec<PacketId>,
}

impl PacketArena {
    pub fn new() -> PacketArena {
        PacketArena {
            slots: Vec::with_capacity(4096),
            free: Vec::with_capacity(4096),
            live: 0,
            log_marks: false,
            marked: Vec::new(),
        }
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = p;
                id
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.live -= 1;
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Packets currently allocated.
    pub fn live(&self) -> u64 {
        self.live
    }
}

impl PacketView for PacketArena {
    #[inline]
    fn wire_len(&self, id: PacketId) -> u32 {
        self.get(id).wire_len
    }
    #[inline]
    fn enqueued_at(&self, id: PacketId) -> u64 {
        self.get(id).enqueued_at
    }
    #[inline]
    fn ect(&self, id: PacketId) -> bool {
        self.get(id).ect
    }
    #[inline]
    fn codepoint(&self, id: PacketId) -> u8 {
        self.get(id).codepoint()
    }
    #[inline]
    fn set_ce(&mut self, id: PacketId) {
        let p = &mut self.slots[id as usize];
        if self.log_marks && !p.ce {
            self.marked.push(id);
        }
        p.ce = true;
    }
    /// FQ-CoDel's flow identity: the slot or UDP source index and the packet
    /// kind (data, ACK, datagram), so a flow's data and its ACKs and a UDP
    /// source and a TCP slot of the same index hash apart.
    #[inline]
    fn flow_key(&self, id: PacketId) -> u64 {
        let p = self.get(id);
        ((p.flow as u64) << 2) | p.kind as u64
    }
    #[inline]
    fn cc_header(&self, id: PacketId) -> CcHeader {
        self.get(id).hdr
    }
    #[inline]
    fn cc_header_mut(&mut self, id: PacketId) -> Option<&mut CcHeader> {
        Some(&mut self.get_mut(id).hdr)
    }
    /// TCP data by slot (even numbers), UDP datagrams by source (odd); ACKs none.
    #[inline]
    fn data_flow(&self, id: PacketId) -> Option<u32> {
        let p = self.get(id);
        match p.kind {
            Kind::Data => Some(p.flow << 1),
            Kind::Udp => Some(p.flow << 1 | 1),
            Kind::Ack => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3168 §5 and RFC 9331 §4: the two ECT codepoints, and CE whatever
    /// the sender wrote.
    #[test]
    fn codepoints() {
        let mut a = PacketArena::new();
        let mut p = Packet::data(0, 0, 1448, 1500);
        let not_ect = a.alloc(p);
        p.ect = true;
        let ect0 = a.alloc(p);
        p.ect1 = true;
        let ect1 = a.alloc(p);
        let got: Vec<u8> = [not_ect, ect0, ect1].iter().map(|&id| a.codepoint(id)).collect();
        assert_eq!(got, [ECN_NOT_ECT, ECN_ECT0, ECN_ECT1]);
        assert!(a.ect(ect0) && a.ect(ect1) && !a.ect(not_ect));
        a.set_ce(ect1);
        a.set_ce(ect0);
        assert_eq!((a.codepoint(ect0), a.codepoint(ect1)), (ECN_CE, ECN_CE));
    }

    // RFC 9768: ACE = AE·4 + CWR·2 + ECE, so 5 (r.cep's initial value) is (1,0,1).
    #[test]
    fn ace_field_round_trips() {
        let mut p = Packet::ack(0, 0, 52);
        for ace in 0..8 {
            p.set_ace(ace);
            assert_eq!(p.ace(), ace);
        }
        p.set_ace(5);
        assert_eq!((p.ae, p.cwr, p.ece), (true, false, true));
        let o = AccEcnOption { len: 8, ..Default::default() };
        assert_eq!(o.fields(), 2);
        assert_eq!(AccEcnOption::default().fields(), 0);
    }

    // The AccECN option round-trips beside up to two SACK blocks, and a
    // fresh ACK has none.
    #[test]
    fn accecn_option_beside_sack_blocks() {
        let mut p = Packet::ack(0, 10, 52);
        assert_eq!(p.accecn_option(), AccEcnOption::default());
        p.sack[0] = (12, 14);
        p.sack[1] = (16, 20);
        p.nsack = 2;
        let o = AccEcnOption { len: 8, ee1b: 0xFF_FFFF, eceb: 0x12_3456, ee0b: 1 };
        p.set_accecn_option(o);
        assert_eq!(p.accecn_option(), o);
        assert_eq!((p.sack[0], p.sack[1]), ((12, 14), (16, 20)));
        p.nsack = 3;
        assert_eq!(p.accecn_option().len, 0, "three SACK blocks leave no room");
        assert_eq!(
            [0, 1, 2, 3].map(AccEcnOption::fields_that_fit),
            [3, 3, 2, 0],
            "11 bytes (12 aligned) beside one block, 8 beside two"
        );
    }

    /// A packet stays small and plain (it is copied into the arena, into
    /// queues and out of the hosts): 120 bytes, as before AccECN; 16 more
    /// cost about 10 % of the engine's packets per second.
    #[test]
    fn packet_is_small() {
        assert_eq!(std::mem::size_of::<Packet>(), 120);
    }
}
