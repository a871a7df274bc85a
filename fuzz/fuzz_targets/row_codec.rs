//! The store's row codec with arbitrary bytes in every column: each of the 38 columns gets a
//! NULL, an integer, a real, raw bytes as TEXT (not necessarily UTF-8) or a BLOB. A row either
//! fails to decode (an error naming the column, never a panic) or decodes into a row the engine
//! then loads — catch-up at open on arbitrary stored state — and ticks through.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tickstep_schedules::fuzzing::{COLUMNS, Column, load_row};

fn take<'a>(data: &mut &'a [u8], n: usize) -> &'a [u8] {
    let n = n.min(data.len());
    let (head, rest) = data.split_at(n);
    *data = rest;
    head
}

fn int(data: &mut &[u8]) -> i64 {
    take(data, 8)
        .iter()
        .fold(0i64, |n, &b| (n << 8) | i64::from(b))
}

fuzz_target!(|data: &[u8]| {
    let mut data = data;
    let now = int(&mut data) as u64;
    let columns: Vec<Column> = (0..COLUMNS)
        .map(|_| {
            let tag = take(&mut data, 1).first().copied().unwrap_or(0);
            match tag % 6 {
                0 => Column::Null,
                1 => Column::Int(int(&mut data)),
                2 => Column::Int(i64::from(tag >> 3)),
                3 => Column::Real(f64::from_bits(int(&mut data) as u64)),
                4 => {
                    let len = usize::from(take(&mut data, 1).first().copied().unwrap_or(0) % 64);
                    Column::Text(take(&mut data, len).to_vec())
                }
                _ => {
                    let len = usize::from(take(&mut data, 1).first().copied().unwrap_or(0) % 64);
                    Column::Blob(take(&mut data, len).to_vec())
                }
            }
        })
        .collect();
    let _ = load_row(&columns, now);
});
