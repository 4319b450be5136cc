//! The compact byte encoding both spilling frontiers store queued requests in:
//! LEB128 varints and length-prefixed strings. Decoding never panics on damaged
//! bytes; it answers `None` and the caller names the error.

/// Appends `v` as a LEB128 varint (7 bits a byte, low bits first).
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `s` as a varint length and its bytes.
pub(crate) fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// Takes a varint off the front of `bytes`; `None` if it is truncated or longer
/// than 64 bits.
pub(crate) fn get_varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = bytes.split_first()?;
        *bytes = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

/// Takes `len` bytes off the front of `bytes`; `None` if fewer are left.
pub(crate) fn get_bytes<'a>(bytes: &mut &'a [u8], len: u64) -> Option<&'a [u8]> {
    let len = usize::try_from(len)
        .ok()
        .filter(|&len| len <= bytes.len())?;
    let (taken, rest) = bytes.split_at(len);
    *bytes = rest;
    Some(taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_damage() {
        let mut out = Vec::new();
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            put_varint(&mut out, v);
        }
        put_str(&mut out, "héllo");
        let mut bytes = out.as_slice();
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(get_varint(&mut bytes), Some(v));
        }
        let len = get_varint(&mut bytes).unwrap();
        assert_eq!(get_bytes(&mut bytes, len), Some("héllo".as_bytes()));
        assert!(bytes.is_empty());
        assert_eq!(get_varint(&mut &[0x80u8, 0x80][..]), None);
        assert_eq!(get_varint(&mut &[0xffu8; 11][..]), None);
        assert_eq!(get_bytes(&mut &b"ab"[..], 3), None);
    }
}
