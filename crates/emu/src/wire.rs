//! Just enough of IPv4 and TCP to classify a packet read from a TUN device
//! (`IFF_TUN | IFF_NO_PI`: the buffer starts with the IP header) and to follow
//! a TCP connection's sequence and acknowledgement numbers.

/// TCP flag bits (RFC 9293 §3.1).
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;
pub const ECE: u8 = 0x40;
pub const CWR: u8 = 0x80;

const PROTO_TCP: u8 = 6;

/// What the emulator needs to know about one packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// An IPv4 packet whose header could be read.
    pub ipv4: bool,
    /// A TCP segment (IPv4, protocol 6, first fragment, header complete).
    pub tcp: bool,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// TCP payload bytes (SYN and FIN excluded).
    pub payload: u32,
}

#[inline]
fn be16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

#[inline]
fn be32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// The ECN field of an IPv4 packet (RFC 3168 §5: 0 Not-ECT, 2 ECT(0),
/// 1 ECT(1), 3 CE); 0 for anything shorter than an IPv4 header.
pub fn ecn(b: &[u8]) -> u8 {
    if b.len() < 20 || b[0] >> 4 != 4 {
        return 0;
    }
    b[1] & 0x03
}

/// Sets CE in an IPv4 header and updates its checksum incrementally
/// (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')).
pub fn set_ce(b: &mut [u8]) {
    if b.len() < 20 || b[0] >> 4 != 4 {
        return;
    }
    let old = be16(b, 0);
    b[1] |= 0x03;
    let new = be16(b, 0);
    let mut sum = (!be16(b, 10) as u32) + (!old as u32 & 0xffff) + new as u32;
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let hc = !(sum as u16);
    b[10..12].copy_from_slice(&hc.to_be_bytes());
}

/// Parses the IPv4 and TCP headers at the start of `b`. Anything that is not
/// a well-formed IPv4 packet gives `ipv4 = false`; IPv4 that is not a whole
/// TCP header gives `tcp = false`.
pub fn parse(b: &[u8]) -> Meta {
    let mut m = Meta::default();
    if b.len() < 20 || b[0] >> 4 != 4 {
        return m;
    }
    let ihl = ((b[0] & 0x0f) as usize) * 4;
    let total = be16(b, 2) as usize;
    if ihl < 20 || total < ihl || total > b.len() {
        return m;
    }
    m.ipv4 = true;
    let frag_offset = be16(b, 6) & 0x1fff;
    if b[9] != PROTO_TCP || frag_offset != 0 || total < ihl + 20 {
        return m;
    }
    let t = &b[ihl..total];
    let doff = ((t[12] >> 4) as usize) * 4;
    if doff < 20 || doff > t.len() {
        return m;
    }
    m.tcp = true;
    m.sport = be16(t, 0);
    m.dport = be16(t, 2);
    m.seq = be32(t, 4);
    m.ack = be32(t, 8);
    m.flags = t[13];
    m.payload = (t.len() - doff) as u32;
    m
}

/// The header a TUN device opened with `IFF_VNET_HDR` puts before every
/// packet (`struct virtio_net_hdr` of linux/virtio_net.h, little-endian on
/// this host): how the kernel left the packet's checksum and, for a TSO
/// "super-packet", the segment size its TCP chose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub hdr_len: u16,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

pub const VNET_HDR_LEN: usize = 10;
/// `flags`: the checksum at `csum_start + csum_offset` holds only the
/// pseudo-header sum; the rest is left to the device.
pub const VNET_F_NEEDS_CSUM: u8 = 1;
/// `gso_type` values: none, TCP over IPv4, and the ECN bit (the first
/// segment carries CWR).
pub const VNET_GSO_NONE: u8 = 0;
pub const VNET_GSO_TCPV4: u8 = 1;
pub const VNET_GSO_ECN: u8 = 0x80;

impl VnetHdr {
    pub fn parse(b: &[u8]) -> Option<VnetHdr> {
        if b.len() < VNET_HDR_LEN {
            return None;
        }
        let le = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        Some(VnetHdr {
            flags: b[0],
            gso_type: b[1],
            hdr_len: le(2),
            gso_size: le(4),
            csum_start: le(6),
            csum_offset: le(8),
        })
    }

    pub fn to_bytes(self) -> [u8; VNET_HDR_LEN] {
        let mut b = [0u8; VNET_HDR_LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[2..4].copy_from_slice(&self.hdr_len.to_le_bytes());
        b[4..6].copy_from_slice(&self.gso_size.to_le_bytes());
        b[6..8].copy_from_slice(&self.csum_start.to_le_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_le_bytes());
        b
    }
}

/// One's-complement sum of `b` as big-endian 16-bit words (RFC 1071), added
/// to `sum` and not yet folded.
fn sum16(b: &[u8], mut sum: u64) -> u64 {
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        sum += (w >> 48) + ((w >> 32) & 0xffff) + ((w >> 16) & 0xffff) + (w & 0xffff);
    }
    let rest = chunks.remainder();
    let mut words = rest.chunks_exact(2);
    for c in &mut words {
        sum += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = words.remainder() {
        sum += (*last as u64) << 8;
    }
    sum
}

fn fold(mut sum: u64) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// Finishes a checksum the sender left to the device (`VNET_F_NEEDS_CSUM`):
/// the field at `start + offset` already holds the pseudo-header sum, so the
/// checksum is the complement of the sum of everything from `start` on
/// (what a NIC's checksum offload does). False if the offsets lie outside `b`.
pub fn complete_checksum(b: &mut [u8], start: usize, offset: usize) -> bool {
    let field = start + offset;
    if field + 2 > b.len() {
        return false;
    }
    let c = !fold(sum16(&b[start..], 0));
    b[field..field + 2].copy_from_slice(&c.to_be_bytes());
    true
}

/// The IPv4 header checksum, written into the header.
fn set_ip_checksum(ip: &mut [u8]) {
    ip[10] = 0;
    ip[11] = 0;
    let c = !fold(sum16(ip, 0));
    ip[10..12].copy_from_slice(&c.to_be_bytes());
}

/// The sum of the TCP pseudo-header (RFC 9293 §3.1) for IPv4 header `ip`
/// and `tcp_len` bytes of TCP header and payload, not yet folded.
fn pseudo_header_sum(ip: &[u8], tcp_len: usize) -> u64 {
    let mut pseudo = [0u8; 12];
    pseudo[..8].copy_from_slice(&ip[12..20]);
    pseudo[9] = PROTO_TCP;
    pseudo[10..12].copy_from_slice(&(tcp_len as u16).to_be_bytes());
    sum16(&pseudo, 0)
}

/// The TCP checksum of a segment (IPv4 header `ip`, then TCP header and
/// payload in `tcp`), written into the TCP header.
fn set_tcp_checksum(ip: &[u8], tcp: &mut [u8]) {
    tcp[16] = 0;
    tcp[17] = 0;
    let c = !fold(sum16(tcp, pseudo_header_sum(ip, tcp.len())));
    tcp[16..18].copy_from_slice(&c.to_be_bytes());
}

/// (IP header length, IP + TCP header length) of a packet the caller knows
/// to be TCP/IPv4 with whole headers.
fn header_lens(b: &[u8]) -> (usize, usize) {
    let ihl = ((b[0] & 0x0f) as usize) * 4;
    (ihl, ihl + ((b[ihl + 12] >> 4) as usize) * 4)
}

/// [`header_lens`] of `b` if it starts with an IPv4 header of TCP and both
/// headers are whole in it.
fn tcp_header_lens(b: &[u8]) -> Option<(usize, usize)> {
    if b.len() < 40 || b[0] >> 4 != 4 || b[9] != PROTO_TCP {
        return None;
    }
    let ihl = ((b[0] & 0x0f) as usize) * 4;
    if ihl < 20 || b.len() < ihl + 20 {
        return None;
    }
    let (_, hdr) = header_lens(b);
    (hdr >= ihl + 20 && hdr <= b.len()).then_some((ihl, hdr))
}

/// How a TCP/IPv4 super-packet `b` (a TSO/GSO packet with segment payload
/// `gso_size`) splits: (IP header length, IP + TCP header length, segments).
/// None if it is not one.
pub fn tso_layout(b: &[u8], gso_size: usize) -> Option<(usize, usize, usize)> {
    if gso_size == 0 {
        return None;
    }
    let (ihl, hdr) = tcp_header_lens(b)?;
    // The IP length of a super-packet may be anything (Linux writes the
    // first segment's or 0 for large ones): the buffer's length counts.
    let payload = b.len() - hdr;
    Some((ihl, hdr, payload.div_ceil(gso_size).max(1)))
}

/// Writes segment `k` of the super-packet `b` into `out` and returns its
/// length: what Linux's software GSO (`inet_gso_segment`, `tcp_gso_segment`)
/// would put on the wire. The headers are copied with the IP length, IP ID
/// (incremented per segment), sequence number and both checksums made the
/// segment's own; CWR stays on the first segment only, FIN and PSH on the
/// last only. `layout` is [`tso_layout`]'s.
pub fn tso_segment(b: &[u8], gso_size: usize, layout: (usize, usize, usize), k: usize, out: &mut [u8]) -> usize {
    let (ihl, hdr, n) = layout;
    let from = hdr + k * gso_size;
    let to = (from + gso_size).min(b.len());
    let len = hdr + (to - from);
    out[..hdr].copy_from_slice(&b[..hdr]);
    out[hdr..len].copy_from_slice(&b[from..to]);
    let (ip, tcp) = out[..len].split_at_mut(ihl);
    ip[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    let id = be16(ip, 4).wrapping_add(k as u16);
    ip[4..6].copy_from_slice(&id.to_be_bytes());
    set_ip_checksum(ip);
    let seq = be32(tcp, 4).wrapping_add((k * gso_size) as u32);
    tcp[4..8].copy_from_slice(&seq.to_be_bytes());
    if k > 0 {
        tcp[13] &= !CWR;
    }
    if k + 1 < n {
        tcp[13] &= !(FIN | PSH);
    }
    set_tcp_checksum(ip, tcp);
    len
}

/// Whether TCP/IPv4 segment `b` continues segment `a` so that a receiver
/// may take both as one (the rules of Linux's GRO, `inet_gro_receive` and
/// `tcp_gro_receive`): same addresses, ports, TOS (so the same ECN mark), TTL
/// and IP options; `b` starts where `a`'s payload ends; the same
/// acknowledgement, window and TCP options (timestamps included); no flags
/// beyond ACK and PSH, and no PSH on `a` (a push ends a coalesced run).
/// `a` must carry a payload, and `b` no more than `a`.
pub fn continues(a: &[u8], b: &[u8]) -> bool {
    let (Some(ma), Some(mb)) = (tcp_parts(a), tcp_parts(b)) else {
        return false;
    };
    let (ihl, hdr, pa) = ma;
    if ihl != mb.0 || hdr != mb.1 || pa == 0 || mb.2 == 0 || mb.2 > pa {
        return false;
    }
    let (ta, tb) = (&a[ihl..hdr], &b[ihl..hdr]);
    let same_ip = a[0..2] == b[0..2] && a[6..10] == b[6..10] && a[12..ihl] == b[12..ihl];
    let flags_ok = ta[13] == ACK && (tb[13] & !PSH) == ACK;
    same_ip
        && flags_ok
        && ta[0..4] == tb[0..4]
        && be32(ta, 4).wrapping_add(pa as u32) == be32(tb, 4)
        && ta[8..13] == tb[8..13]
        && ta[14..16] == tb[14..16]
        && ta[18..] == tb[18..]
}

/// (IP header length, IP + TCP header length, payload length) of a whole
/// TCP/IPv4 packet `b`.
fn tcp_parts(b: &[u8]) -> Option<(usize, usize, usize)> {
    let (ihl, hdr) = tcp_header_lens(b)?;
    // Not a fragment, and the IP length is the buffer's.
    (be16(b, 6) & 0x3fff == 0 && be16(b, 2) as usize == b.len()).then_some((ihl, hdr, b.len() - hdr))
}

/// Appends `b`'s payload to the coalesced packet in `out[..len]` (which
/// starts as a copy of the first segment) and returns the new length; the
/// PSH flag carries over. Call only when [`continues`] held for the last
/// segment appended and `b`.
pub fn append_segment(out: &mut [u8], len: usize, b: &[u8]) -> usize {
    let (ihl, hdr) = header_lens(b);
    let add = b.len() - hdr;
    out[len..len + add].copy_from_slice(&b[hdr..]);
    out[ihl + 13] |= b[ihl + 13] & PSH;
    len + add
}

/// Makes the coalesced packet `out` (of `n` segments of `gso_size` payload
/// bytes each, the last possibly shorter) ready to hand to a receiving
/// device: its IP length and checksum, the TCP checksum field holding the
/// pseudo-header sum, and the header telling the device so
/// (`VNET_F_NEEDS_CSUM`, as Linux's GRO leaves a coalesced packet).
pub fn finish_coalesced(out: &mut [u8], gso_size: usize) -> VnetHdr {
    let (ihl, hdr) = header_lens(out);
    let len = out.len();
    out[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    set_ip_checksum(&mut out[..ihl]);
    let partial = fold(pseudo_header_sum(out, len - ihl));
    out[ihl + 16..ihl + 18].copy_from_slice(&partial.to_be_bytes());
    VnetHdr {
        flags: VNET_F_NEEDS_CSUM,
        gso_type: VNET_GSO_TCPV4,
        hdr_len: hdr as u16,
        gso_size: gso_size as u16,
        csum_start: ihl as u16,
        csum_offset: 16,
    }
}

/// `a` is after `b` in sequence space (RFC 1982 serial arithmetic).
#[inline]
pub fn seq_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// `a` is at or before `b` in sequence space.
#[inline]
pub fn seq_le(a: u32, b: u32) -> bool {
    !seq_gt(a, b)
}

/// Builds an IPv4/TCP packet with the given fields (for tests): 20-byte IP
/// header, 32-byte TCP header (timestamps option space), `payload` zero bytes.
pub fn build_tcp(sport: u16, dport: u16, seq: u32, ack: u32, flags: u8, payload: usize) -> Vec<u8> {
    let total = 20 + 32 + payload;
    let mut b = vec![0u8; total];
    b[0] = 0x45;
    b[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    b[8] = 64;
    b[9] = PROTO_TCP;
    b[12..16].copy_from_slice(&[10, 77, 0, 1]);
    b[16..20].copy_from_slice(&[10, 77, 0, 2]);
    let t = &mut b[20..];
    t[0..2].copy_from_slice(&sport.to_be_bytes());
    t[2..4].copy_from_slice(&dport.to_be_bytes());
    t[4..8].copy_from_slice(&seq.to_be_bytes());
    t[8..12].copy_from_slice(&ack.to_be_bytes());
    t[12] = 8 << 4;
    t[13] = flags;
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tcp_fields() {
        let b = build_tcp(40000, 5001, 0xffff_fff0, 7, ACK, 1448);
        assert_eq!(b.len(), 1500);
        let m = parse(&b);
        assert!(m.ipv4 && m.tcp);
        assert_eq!((m.sport, m.dport, m.seq, m.ack, m.flags, m.payload), (40000, 5001, 0xffff_fff0, 7, ACK, 1448));
    }

    #[test]
    fn rejects_short_and_non_ipv4() {
        assert!(!parse(&[0x60; 40]).ipv4);
        assert!(!parse(&[0x45; 10]).ipv4);
        let mut b = build_tcp(1, 2, 3, 4, 0, 0);
        b[9] = 17; // UDP
        let m = parse(&b);
        assert!(m.ipv4 && !m.tcp);
        let mut b = build_tcp(1, 2, 3, 4, 0, 0);
        b[2..4].copy_from_slice(&2000u16.to_be_bytes()); // length beyond the buffer
        assert!(!parse(&b).ipv4);
    }

    /// RFC 1071 checksum of an IPv4 header: 0 when the header is intact.
    fn header_sum(b: &[u8]) -> u16 {
        let ihl = ((b[0] & 0x0f) as usize) * 4;
        let mut s: u32 = b[..ihl].chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32).sum();
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    #[test]
    fn ce_mark_keeps_the_header_checksum_valid() {
        let mut b = build_tcp(40000, 5001, 1, 7, ACK, 100);
        b[1] = 0x02; // ECT(0)
                     // Recompute the checksum for the ECT(0) header first.
        b[10] = 0;
        b[11] = 0;
        let hc = header_sum(&b);
        b[10..12].copy_from_slice(&hc.to_be_bytes());
        assert_eq!(header_sum(&b), 0);
        assert_eq!(ecn(&b), 2);
        set_ce(&mut b);
        assert_eq!(ecn(&b), 3);
        assert_eq!(header_sum(&b), 0);
        assert_eq!(parse(&b).payload, 100);
    }

    #[test]
    fn serial_arithmetic_wraps() {
        assert!(seq_gt(5, 0xffff_fff0));
        assert!(seq_le(0xffff_fff0, 5));
        assert!(seq_le(7, 7));
        assert!(!seq_gt(7, 7));
    }

    /// RFC 1071 sum over a whole TCP segment and its pseudo-header: 0xffff
    /// (so the complement is 0) when the TCP checksum is right.
    fn tcp_sum_ok(b: &[u8]) -> bool {
        let ihl = ((b[0] & 0x0f) as usize) * 4;
        let mut words: Vec<u32> = b[12..20].chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32).collect();
        words.push(PROTO_TCP as u32);
        words.push((b.len() - ihl) as u32);
        let mut t = b[ihl..].to_vec();
        if t.len() % 2 == 1 {
            t.push(0);
        }
        words.extend(t.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32));
        let mut s: u32 = words.iter().sum();
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        s == 0xffff
    }

    /// A super-packet with CWR, PSH and FIN and a payload that is not a
    /// multiple of the segment size splits like Linux's GSO: consecutive
    /// sequence numbers and IP IDs, CWR on the first segment, PSH and FIN on
    /// the last, valid IP and TCP checksums, and the payload intact.
    #[test]
    fn tso_segments_are_what_the_wire_would_carry() {
        let mut b = build_tcp(40000, 5001, 0xffff_f000, 9, ACK | PSH | FIN | CWR, 3 * 1448 + 100);
        b[4..6].copy_from_slice(&0xfffeu16.to_be_bytes());
        for (i, x) in b[52..].iter_mut().enumerate() {
            *x = (i * 7 % 251) as u8;
        }
        let layout = tso_layout(&b, 1448).unwrap();
        assert_eq!(layout, (20, 52, 4));
        let mut payload = Vec::new();
        for k in 0..4 {
            let mut out = vec![0u8; 2000];
            let n = tso_segment(&b, 1448, layout, k, &mut out);
            let s = &out[..n];
            let m = parse(s);
            assert!(m.tcp);
            assert_eq!(m.seq, 0xffff_f000u32.wrapping_add(1448 * k as u32));
            assert_eq!(m.payload, if k < 3 { 1448 } else { 100 });
            assert_eq!(be16(s, 4), 0xfffeu16.wrapping_add(k as u16));
            assert_eq!(header_sum(s), 0, "IP checksum of segment {k}");
            assert!(tcp_sum_ok(s), "TCP checksum of segment {k}");
            assert_eq!(m.flags & CWR != 0, k == 0);
            assert_eq!(m.flags & (PSH | FIN) != 0, k == 3);
            payload.extend_from_slice(&s[52..]);
        }
        assert_eq!(payload, b[52..]);
    }

    /// A checksum left to the device (the pseudo-header sum in the field)
    /// is completed into the one a full computation gives.
    #[test]
    fn a_partial_checksum_is_completed() {
        let mut b = build_tcp(40000, 5001, 1, 2, ACK, 333);
        for (i, x) in b[52..].iter_mut().enumerate() {
            *x = i as u8;
        }
        let mut pseudo = [0u8; 12];
        pseudo[..8].copy_from_slice(&b[12..20]);
        pseudo[9] = PROTO_TCP;
        pseudo[10..12].copy_from_slice(&((b.len() - 20) as u16).to_be_bytes());
        b[36..38].copy_from_slice(&fold(sum16(&pseudo, 0)).to_be_bytes());
        assert!(!tcp_sum_ok(&b));
        assert!(complete_checksum(&mut b, 20, 16));
        assert!(tcp_sum_ok(&b));
        assert!(!complete_checksum(&mut b, 20, 400));
    }

    /// What may coalesce: the next segment of the same flow with the same
    /// headers; not a gap, another flow, another ECN mark, other options, or
    /// anything after a PSH; the coalesced packet keeps the last PSH.
    #[test]
    fn only_continuing_segments_coalesce() {
        let a = build_tcp(40000, 5001, 1, 2, ACK, 1448);
        let b = build_tcp(40000, 5001, 1449, 2, ACK | PSH, 1448);
        assert!(continues(&a, &b));
        assert!(!continues(&a, &build_tcp(40000, 5001, 1450, 2, ACK, 1448)));
        assert!(!continues(&a, &build_tcp(40001, 5001, 1449, 2, ACK, 1448)));
        assert!(!continues(&a, &build_tcp(40000, 5001, 1449, 3, ACK, 1448)));
        assert!(!continues(&b, &build_tcp(40000, 5001, 2897, 2, ACK, 1448)));
        assert!(!continues(&a, &build_tcp(40000, 5001, 1449, 2, ACK | FIN, 1448)));
        let mut ce = b.clone();
        ce[1] = 3;
        assert!(!continues(&a, &ce));
        let mut ts = b.clone();
        ts[45] = 1; // a different timestamp option
        assert!(!continues(&a, &ts));
        let mut out = vec![0u8; 4000];
        out[..a.len()].copy_from_slice(&a);
        let n = append_segment(&mut out, a.len(), &b);
        let h = finish_coalesced(&mut out[..n], 1448);
        assert_eq!((h.gso_size, h.hdr_len, h.csum_start, h.csum_offset), (1448, 52, 20, 16));
        let m = parse(&out[..n]);
        assert_eq!((m.seq, m.payload, m.flags), (1, 2896, ACK | PSH));
        assert_eq!(header_sum(&out[..n]), 0);
        // The field holds the pseudo-header sum: completing it gives a valid checksum.
        assert!(complete_checksum(&mut out[..n], 20, 16));
        assert!(tcp_sum_ok(&out[..n]));
    }
}
