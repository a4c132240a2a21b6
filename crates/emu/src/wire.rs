//! Just enough of IPv4 and TCP to classify a packet read from a TUN device
//! (`IFF_TUN | IFF_NO_PI`: the buffer starts with the IP header) and to follow
//! a TCP connection's sequence and acknowledgement numbers.

/// TCP flag bits (RFC 9293 §3.1).
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const ACK: u8 = 0x10;

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
}
