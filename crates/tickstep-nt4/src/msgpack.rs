//! The `MessagePack` subset NT4 binary frames use (docs/nt4.md §3.1): nil, booleans, integers,
//! 32- and 64-bit floats, strings, binary and arrays. Maps and extension types are refused.
//!
//! An own codec rather than a crate: the subset is small, and a decoder of our own can refuse
//! what a hostile client sends (a length past the frame's end, nesting) before allocating.

/// One decoded `MessagePack` value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Msg {
    Nil,
    Bool(bool),
    Int(i64),
    UInt(u64),
    F32(f32),
    F64(f64),
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Msg>),
}

/// Why a frame could not be decoded.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct DecodeError(pub(crate) &'static str);

/// Arrays nest at most this deep: an NT4 message is an array holding at most one array.
const MAX_DEPTH: usize = 2;

pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or(DecodeError("a length runs past the end of the frame"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn be<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn len(&mut self, bytes: usize) -> Result<usize, DecodeError> {
        let n = match bytes {
            1 => u64::from(self.u8()?),
            2 => u64::from(u16::from_be_bytes(self.be()?)),
            _ => u64::from(u32::from_be_bytes(self.be()?)),
        };
        usize::try_from(n).map_err(|_| DecodeError("length too large"))
    }

    /// Decodes the next value.
    pub(crate) fn value(&mut self) -> Result<Msg, DecodeError> {
        self.value_at(0)
    }

    fn value_at(&mut self, depth: usize) -> Result<Msg, DecodeError> {
        let m = self.u8()?;
        Ok(match m {
            0x00..=0x7f => Msg::UInt(u64::from(m)),
            0xe0..=0xff => Msg::Int(i64::from(i8::from_be_bytes([m]))),
            0xc0 => Msg::Nil,
            0xc2 => Msg::Bool(false),
            0xc3 => Msg::Bool(true),
            0xcc => Msg::UInt(u64::from(self.u8()?)),
            0xcd => Msg::UInt(u64::from(u16::from_be_bytes(self.be()?))),
            0xce => Msg::UInt(u64::from(u32::from_be_bytes(self.be()?))),
            0xcf => Msg::UInt(u64::from_be_bytes(self.be()?)),
            0xd0 => Msg::Int(i64::from(i8::from_be_bytes([self.u8()?]))),
            0xd1 => Msg::Int(i64::from(i16::from_be_bytes(self.be()?))),
            0xd2 => Msg::Int(i64::from(i32::from_be_bytes(self.be()?))),
            0xd3 => Msg::Int(i64::from_be_bytes(self.be()?)),
            0xca => Msg::F32(f32::from_be_bytes(self.be()?)),
            0xcb => Msg::F64(f64::from_be_bytes(self.be()?)),
            0xa0..=0xbf => self.str(usize::from(m & 0x1f))?,
            0xd9 => {
                let n = self.len(1)?;
                self.str(n)?
            }
            0xda => {
                let n = self.len(2)?;
                self.str(n)?
            }
            0xdb => {
                let n = self.len(4)?;
                self.str(n)?
            }
            0xc4..=0xc6 => {
                let n = self.len(1 << (m - 0xc4))?;
                Msg::Bin(self.take(n)?.to_vec())
            }
            0x90..=0x9f => self.array(usize::from(m & 0x0f), depth)?,
            0xdc => {
                let n = self.len(2)?;
                self.array(n, depth)?
            }
            0xdd => {
                let n = self.len(4)?;
                self.array(n, depth)?
            }
            _ => {
                return Err(DecodeError(
                    "a MessagePack map or extension, which NT4 does not use",
                ));
            }
        })
    }

    fn str(&mut self, n: usize) -> Result<Msg, DecodeError> {
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec())
            .map(Msg::Str)
            .map_err(|_| DecodeError("a string that is not UTF-8"))
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<Msg, DecodeError> {
        if depth >= MAX_DEPTH {
            return Err(DecodeError("arrays nested too deep"));
        }
        // Every element takes at least one byte: a claimed length past the frame is refused
        // before anything is allocated for it.
        if n > self.buf.len() - self.pos {
            return Err(DecodeError("a length runs past the end of the frame"));
        }
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(self.value_at(depth + 1)?);
        }
        Ok(Msg::Array(items))
    }
}

/// Appends `MessagePack` encodings to a buffer.
pub(crate) fn write_uint(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=0x7f => out.push(v as u8),
        0x80..=0xff => out.extend_from_slice(&[0xcc, v as u8]),
        0x100..=0xffff => {
            out.push(0xcd);
            out.extend_from_slice(&(v as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(0xce);
            out.extend_from_slice(&(v as u32).to_be_bytes());
        }
        _ => {
            out.push(0xcf);
            out.extend_from_slice(&v.to_be_bytes());
        }
    }
}

pub(crate) fn write_int(out: &mut Vec<u8>, v: i64) {
    if let Ok(u) = u64::try_from(v) {
        write_uint(out, u);
    } else if v >= -32 {
        out.push(v as u8);
    } else if let Ok(b) = i8::try_from(v) {
        out.extend_from_slice(&[0xd0, b as u8]);
    } else if let Ok(s) = i16::try_from(v) {
        out.push(0xd1);
        out.extend_from_slice(&s.to_be_bytes());
    } else if let Ok(w) = i32::try_from(v) {
        out.push(0xd2);
        out.extend_from_slice(&w.to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&v.to_be_bytes());
    }
}

pub(crate) fn write_bool(out: &mut Vec<u8>, v: bool) {
    out.push(if v { 0xc3 } else { 0xc2 });
}

pub(crate) fn write_f64(out: &mut Vec<u8>, v: f64) {
    out.push(0xcb);
    out.extend_from_slice(&v.to_be_bytes());
}

pub(crate) fn write_f32(out: &mut Vec<u8>, v: f32) {
    out.push(0xca);
    out.extend_from_slice(&v.to_be_bytes());
}

fn write_len(out: &mut Vec<u8>, n: usize, fix: Option<(u8, usize)>, markers: [u8; 3]) {
    match fix {
        Some((base, max)) if n <= max => out.push(base | n as u8),
        _ if n <= 0xff && markers[0] != 0 => out.extend_from_slice(&[markers[0], n as u8]),
        _ if n <= 0xffff => {
            out.push(markers[1]);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        _ => {
            out.push(markers[2]);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
    }
}

pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    write_len(out, s.len(), Some((0xa0, 31)), [0xd9, 0xda, 0xdb]);
    out.extend_from_slice(s.as_bytes());
}

pub(crate) fn write_bin(out: &mut Vec<u8>, b: &[u8]) {
    write_len(out, b.len(), None, [0xc4, 0xc5, 0xc6]);
    out.extend_from_slice(b);
}

pub(crate) fn write_array_len(out: &mut Vec<u8>, n: usize) {
    write_len(out, n, Some((0x90, 15)), [0, 0xdc, 0xdd]);
}

pub(crate) fn write_map_len(out: &mut Vec<u8>, n: usize) {
    write_len(out, n, Some((0x80, 15)), [0, 0xde, 0xdf]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_double_example_is_seventeen_bytes() {
        // docs/nt4.md §3.1: [50, 120 s, 1, 0.1234]
        let mut out = Vec::new();
        write_array_len(&mut out, 4);
        write_uint(&mut out, 50);
        write_uint(&mut out, 120_000_000);
        write_uint(&mut out, 1);
        write_f64(&mut out, 0.1234);
        assert_eq!(out.len(), 17);
        assert_eq!(&out[..7], &[0x94, 0x32, 0xce, 0x07, 0x27, 0x0e, 0x00]);
    }

    #[test]
    fn values_round_trip() {
        let ints = [
            0i64,
            1,
            -1,
            -32,
            -33,
            127,
            128,
            -129,
            40_000,
            -40_000,
            i64::MIN,
            i64::MAX,
        ];
        for v in ints {
            let mut out = Vec::new();
            write_int(&mut out, v);
            let got = Reader::new(&out).value().unwrap();
            let back = match got {
                Msg::Int(i) => i,
                Msg::UInt(u) => i64::try_from(u).unwrap(),
                other => panic!("{other:?}"),
            };
            assert_eq!(back, v);
        }
        let long = "x".repeat(300);
        for s in ["", "abc", long.as_str()] {
            let mut out = Vec::new();
            write_str(&mut out, s);
            assert_eq!(Reader::new(&out).value().unwrap(), Msg::Str(s.to_owned()));
        }
    }

    #[test]
    fn hostile_lengths_are_refused_before_allocating() {
        // An array claiming 2^32-1 elements in a six-byte frame.
        let frame = [0xdd, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert!(Reader::new(&frame).value().is_err());
        let bin = [0xc6, 0xff, 0xff, 0xff, 0xff];
        assert!(Reader::new(&bin).value().is_err());
        assert!(Reader::new(&[0x91, 0x91, 0x91, 0x01]).value().is_err()); // too deep
        assert!(Reader::new(&[0x80]).value().is_err()); // a map
    }
}
