//! Audio: what a sound file is (duration, rate, channels) and the copy an agent hears.
//!
//! WAV is read with `hound` (its header says the duration); a WAV longer than
//! [`MAX_AUDIO_SECONDS`] is cut to its start and re-written, with a note. Compressed audio
//! (MP3, Ogg, FLAC) cannot be cut without a codec: it is passed as it is when it is at most
//! [`MAX_AUDIO_BYTES`], else described only, and its duration comes from ffprobe when that is
//! on PATH.

use std::io::Cursor;

use serde::{Deserialize, Serialize};

use crate::limits::{MAX_AUDIO_BYTES, MAX_AUDIO_SECONDS};
use crate::{MediaError, MediaType, invalid};

/// What is known of a sound file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AudioInfo {
    pub duration_seconds: Option<f64>,
    pub sample_rate: Option<u32>,
    pub channels: Option<u16>,
}

/// The copy of a sound an agent hears (`None` when it cannot be given), and notes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentAudio {
    pub info: AudioInfo,
    /// Crosses from the decoding process as one byte string (CBOR), not a list of numbers.
    #[serde(with = "serde_bytes")]
    pub bytes: Option<Vec<u8>>,
    pub mime_type: String,
    pub notes: Vec<String>,
}

/// Read a WAV in the calling process (call it inside [`crate::isolated::decode`]).
fn wav_in_process(file: &str, bytes: &[u8]) -> Result<AgentAudio, MediaError> {
    let mut r = hound::WavReader::new(Cursor::new(bytes))
        .map_err(|e| invalid(file, format!("not a readable WAV file: {e}")))?;
    let spec = r.spec();
    if spec.sample_rate == 0 || spec.channels == 0 {
        return Err(invalid(
            file,
            "the WAV header declares no samples per second or no channel",
        ));
    }
    let frames = u64::from(r.duration());
    let seconds = frames as f64 / f64::from(spec.sample_rate);
    let info = AudioInfo {
        duration_seconds: Some((seconds * 1000.0).round() / 1000.0),
        sample_rate: Some(spec.sample_rate),
        channels: Some(spec.channels),
    };
    // Data past the end of the file is a lie of the header: count what is there.
    let declared_bytes =
        frames * u64::from(spec.channels) * u64::from(spec.bits_per_sample.div_ceil(8));
    if declared_bytes > bytes.len() as u64 {
        return Err(invalid(
            file,
            format!(
                "the WAV header declares {declared_bytes} bytes of samples but the file has {}; it is cut short",
                bytes.len()
            ),
        ));
    }
    let keep = u64::from(MAX_AUDIO_SECONDS) * u64::from(spec.sample_rate);
    if frames <= keep && bytes.len() <= MAX_AUDIO_BYTES {
        return Ok(AgentAudio {
            info,
            bytes: Some(bytes.to_vec()),
            mime_type: "audio/wav".into(),
            notes: Vec::new(),
        });
    }
    // Cut to the first MAX_AUDIO_SECONDS (or fewer, to stay under MAX_AUDIO_BYTES).
    let frame_bytes = u64::from(spec.channels) * u64::from(spec.bits_per_sample.div_ceil(8));
    let keep = keep.min(MAX_AUDIO_BYTES as u64 / frame_bytes.max(1));
    let mut out = Vec::new();
    {
        let mut w = hound::WavWriter::new(Cursor::new(&mut out), spec)
            .map_err(|e| invalid(file, format!("re-writing the WAV failed: {e}")))?;
        let samples = keep * u64::from(spec.channels);
        match spec.sample_format {
            hound::SampleFormat::Float => {
                for s in r.samples::<f32>().take(samples as usize) {
                    let s = s.map_err(|e| invalid(file, format!("bad sample: {e}")))?;
                    w.write_sample(s)
                        .map_err(|e| invalid(file, e.to_string()))?;
                }
            }
            hound::SampleFormat::Int => {
                for s in r.samples::<i32>().take(samples as usize) {
                    let s = s.map_err(|e| invalid(file, format!("bad sample: {e}")))?;
                    w.write_sample(s)
                        .map_err(|e| invalid(file, e.to_string()))?;
                }
            }
        }
        w.finalize().map_err(|e| invalid(file, e.to_string()))?;
    }
    let kept = keep as f64 / f64::from(spec.sample_rate);
    Ok(AgentAudio {
        info,
        bytes: Some(out),
        mime_type: "audio/wav".into(),
        notes: vec![format!(
            "cut to its first {kept:.0} s of {seconds:.0} s (at most {MAX_AUDIO_SECONDS} s and {MAX_AUDIO_BYTES} bytes of audio are given)"
        )],
    })
}

/// The copy of the sound `bytes` (of type `t`) an agent hears.
pub fn for_agent(file: &str, bytes: &[u8], t: MediaType) -> Result<AgentAudio, MediaError> {
    if t == MediaType::Wav {
        return crate::isolated::decode(file, &file.to_string(), bytes, |f, b| {
            wav_in_process(f, b)
        });
    }
    let mut notes = Vec::new();
    let info = match crate::external::probe(file, bytes) {
        Ok(p) => AudioInfo {
            duration_seconds: p.duration_seconds,
            sample_rate: p.sample_rate,
            channels: p.channels,
        },
        Err(e) => {
            notes.push(format!("duration unknown: {e}"));
            AudioInfo {
                duration_seconds: None,
                sample_rate: None,
                channels: None,
            }
        }
    };
    if bytes.len() > MAX_AUDIO_BYTES {
        notes.push(format!(
            "the {} file is {} bytes, more than the {MAX_AUDIO_BYTES} given as audio, and a compressed file cannot be cut; ask for a shorter clip or a transcript",
            t.name(),
            bytes.len()
        ));
        return Ok(AgentAudio {
            info,
            bytes: None,
            mime_type: t.mime().into(),
            notes,
        });
    }
    Ok(AgentAudio {
        info,
        bytes: Some(bytes.to_vec()),
        mime_type: t.mime().into(),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wav(seconds: u32, rate: u32) -> Vec<u8> {
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: rate,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut out = Vec::new();
        let mut w = hound::WavWriter::new(Cursor::new(&mut out), spec).unwrap();
        for i in 0..seconds * rate {
            w.write_sample(((i % 100) as i16 - 50) * 100).unwrap();
        }
        w.finalize().unwrap();
        out
    }

    #[test]
    fn a_short_wav_passes_with_its_duration() {
        let b = wav(2, 8000);
        let a = for_agent("vm.wav", &b, MediaType::Wav).unwrap();
        assert_eq!(a.info.duration_seconds, Some(2.0));
        assert_eq!(a.bytes.as_deref(), Some(&b[..]));
        assert!(a.notes.is_empty());
    }

    #[test]
    fn a_long_wav_is_cut_to_its_start() {
        let b = wav(MAX_AUDIO_SECONDS + 20, 2000);
        let a = for_agent("long.wav", &b, MediaType::Wav).unwrap();
        assert_eq!(
            a.info.duration_seconds,
            Some(f64::from(MAX_AUDIO_SECONDS + 20))
        );
        let cut = a.bytes.unwrap();
        let r = hound::WavReader::new(Cursor::new(&cut)).unwrap();
        assert_eq!(r.duration(), MAX_AUDIO_SECONDS * 2000);
        assert!(a.notes[0].contains("cut to its first"), "{:?}", a.notes);
    }

    #[test]
    fn a_header_that_lies_about_its_length_is_an_error() {
        // A two-hour WAV header with one second of samples behind it.
        let mut b = wav(1, 8000);
        let declared: u32 = 2 * 3600 * 8000 * 2;
        b[40..44].copy_from_slice(&declared.to_le_bytes());
        let e = for_agent("lie.wav", &b, MediaType::Wav).unwrap_err();
        assert!(e.to_string().contains("lie.wav"), "{e}");
    }
}
