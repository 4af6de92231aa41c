//! The echo canceller's input, written as AEC3 gets it and read back: what a hands-free session heard and played,
//! in the order of the calls, so that a self-trigger on the rig (which comes and goes with the machine's timing) can
//! be run again, the same way, through the canceller and the VAD (`cargo run -p hermes-voice --example aec_replay`).
//!
//! The format: `HERMES-AEC-DUMP 1\n`, then one record per call: `r` (the playback) or `c` (the microphone), the
//! sample count as a little-endian u32, and the 16 kHz mono samples as little-endian i16.

use std::io::{self, BufWriter, Write};
use std::path::Path;

const MAGIC: &[u8] = b"HERMES-AEC-DUMP 1\n";

/// Which of the canceller's two inputs a block went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// The playback (the far end).
    Render,
    /// The microphone (the near end).
    Capture,
}

/// Writes a dump; buffered, flushed when dropped.
#[derive(Debug)]
pub struct Writer(BufWriter<std::fs::File>);

impl Writer {
    pub fn create(path: &Path) -> io::Result<Self> {
        let mut w = BufWriter::new(std::fs::File::create(path)?);
        w.write_all(MAGIC)?;
        Ok(Writer(w))
    }

    pub fn write(&mut self, call: Call, block: &[i16]) -> io::Result<()> {
        let n = u32::try_from(block.len()).map_err(|_| io::Error::other("block too long"))?;
        self.0.write_all(match call {
            Call::Render => b"r",
            Call::Capture => b"c",
        })?;
        self.0.write_all(&n.to_le_bytes())?;
        let bytes: Vec<u8> = block.iter().flat_map(|s| s.to_le_bytes()).collect();
        self.0.write_all(&bytes)
    }
}

/// Reads a dump: its calls in order. A dump cut short (the app was killed mid-write) gives its whole records.
pub fn read(bytes: &[u8]) -> Result<Vec<(Call, Vec<i16>)>, String> {
    let mut rest = bytes.strip_prefix(MAGIC).ok_or("not an echo canceller dump")?;
    let mut calls = Vec::new();
    while let [kind, a, b, c, d, tail @ ..] = rest {
        let call = match kind {
            b'r' => Call::Render,
            b'c' => Call::Capture,
            k => return Err(format!("unknown record {k:#04x} after {} calls", calls.len())),
        };
        let n = u32::from_le_bytes([*a, *b, *c, *d]) as usize;
        let Some(samples) = tail.get(..n * 2) else { break };
        calls.push((call, samples.chunks_exact(2).map(|p| i16::from_le_bytes([p[0], p[1]])).collect()));
        rest = &tail[n * 2..];
    }
    Ok(calls)
}

/// Runs a dump's calls through `aec` (a fresh one gives what the session's gave): `cleaned` gets each microphone
/// block's cleaned samples (possibly none) and the canceller's state after it.
pub fn replay(
    calls: &[(Call, Vec<i16>)],
    aec: &mut super::EchoCanceller,
    mut cleaned: impl FnMut(&[i16], super::AecStats),
) {
    let mut out = Vec::new();
    for (call, block) in calls {
        match call {
            Call::Render => aec.render(block),
            Call::Capture => {
                out.clear();
                aec.capture(block, &mut out);
                cleaned(&out, aec.stats());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_reads_back_as_written_and_a_torn_one_to_its_last_whole_call() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.dump");
        let mut w = Writer::create(&path).unwrap();
        w.write(Call::Render, &[1, -2, i16::MAX]).unwrap();
        w.write(Call::Capture, &[]).unwrap();
        w.write(Call::Capture, &[i16::MIN, 7]).unwrap();
        drop(w);
        let bytes = std::fs::read(&path).unwrap();
        let want =
            vec![(Call::Render, vec![1, -2, i16::MAX]), (Call::Capture, vec![]), (Call::Capture, vec![i16::MIN, 7])];
        assert_eq!(read(&bytes).unwrap(), want);
        assert_eq!(read(&bytes[..bytes.len() - 1]).unwrap(), want[..2]);
        assert!(read(b"RIFF....").is_err());
        let mut bad = bytes.clone();
        bad[MAGIC.len()] = b'x';
        assert!(read(&bad).unwrap_err().contains("unknown record"));
    }
}
