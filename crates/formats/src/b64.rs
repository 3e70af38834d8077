//! Minimal standard base64 (RFC 4648, with padding), used to store
//! attachment bytes in JSON and to decode MIME base64 bodies.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Encodes bytes as padded standard base64, without line breaks.
pub(crate) fn encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let symbols = chunk.len() + 1;
        for i in 0..4 {
            if i < symbols {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn value(c: u8) -> Option<u32> {
    match c {
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Strict decoding: only alphabet characters, then at most two `=` at the
/// end; padding is optional. Returns `None` on anything else.
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    let body = text.trim_end_matches('=');
    if text.len() - body.len() > 2 {
        return None;
    }
    let mut values = Vec::with_capacity(body.len());
    for c in body.bytes() {
        values.push(value(c)?);
    }
    if values.len() % 4 == 1 {
        return None;
    }
    Some(decode_values(&values))
}

/// Lenient MIME decoding: skips line breaks and any other character outside
/// the alphabet, stops at the first `=`.
pub(crate) fn decode_lenient(data: &[u8]) -> Vec<u8> {
    let values: Vec<u32> = data
        .iter()
        .take_while(|&&c| c != b'=')
        .filter_map(|&c| value(c))
        .collect();
    decode_values(&values)
}

fn decode_values(values: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() / 4 * 3 + 2);
    for chunk in values.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, v)| acc | (v << (18 - 6 * i)));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let keep = match chunk.len() {
            4 => 3,
            3 => 2,
            2 => 1,
            _ => 0,
        };
        out.extend_from_slice(&bytes[..keep]);
    }
    out
}

/// `#[serde(with = "crate::b64::serde_bytes")]`: bytes as a base64 string.
pub(crate) mod serde_bytes {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub(crate) fn serialize<S: Serializer>(data: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::encode(data))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        super::decode(&text).ok_or_else(|| {
            D::Error::custom("attachment data is not valid base64 (standard alphabet, A-Z a-z 0-9 + /, optional = padding)")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(plain.as_bytes()), coded);
            assert_eq!(decode(coded).unwrap(), plain.as_bytes());
        }
        assert_eq!(decode("Zm9vYg").unwrap(), b"foob");
        assert_eq!(decode_lenient(b"Zm9v\r\nYmFy\r\n"), b"foobar");
    }

    #[test]
    fn rejects_garbage() {
        assert!(decode("Zm9v!").is_none());
        assert!(decode("Z").is_none());
        assert!(decode("Zg===").is_none());
        assert!(decode("Zm 9v").is_none());
    }

    proptest! {
        #[test]
        fn round_trip(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            let coded = encode(&data);
            prop_assert_eq!(decode(&coded).unwrap(), data.clone());
            prop_assert_eq!(decode_lenient(coded.as_bytes()), data);
        }

        #[test]
        fn decode_never_panics(s in "\\PC{0,40}") {
            let _ = decode(&s);
            let _ = decode_lenient(s.as_bytes());
        }
    }
}
