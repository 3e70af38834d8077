//! The bounds on media shown to an agent. Every one is stated in the note of a result it cut.

/// Largest file read as media (bytes). Larger files are described from their header only.
pub const MAX_INPUT_BYTES: usize = 64 * 1024 * 1024;
/// Most pixels an image may declare before it is decoded (a decompression bomb declares
/// billions in a few hundred bytes).
pub const MAX_DECODE_PIXELS: u64 = 64_000_000;
/// Longest side of an image given to an agent; larger images are scaled down (vision APIs
/// downscale past about this size anyway).
pub const MAX_AGENT_SIDE: u32 = 1568;
/// Largest encoded image given to an agent; larger ones are re-encoded as JPEG.
pub const MAX_AGENT_IMAGE_BYTES: usize = 1_500_000;
/// Most media parts in one tool result (pages of a scan, key frames of a video).
pub const MAX_PARTS: usize = 8;
/// Most media bytes in one tool result, all parts together.
pub const MAX_RESULT_BYTES: usize = 8 * 1024 * 1024;
/// Pages of a scanned PDF examined for a text layer, and so the most pages a PDF may have
/// to be shown as images at all beyond the first [`MAX_PARTS`].
pub const MAX_SCAN_PAGES_LOOKED_AT: usize = 200;
/// Longest audio given to an agent (seconds); a longer WAV is cut to its start.
pub const MAX_AUDIO_SECONDS: u32 = 180;
/// Largest audio file given to an agent as it is (compressed formats cannot be cut).
pub const MAX_AUDIO_BYTES: usize = 12 * 1024 * 1024;
/// Key frames taken from a video.
pub const VIDEO_FRAMES: usize = 4;
/// Longest side of a video key frame.
pub const VIDEO_FRAME_SIDE: u32 = 960;
/// Wall-clock seconds one decode (in its isolated child) or one external program may take.
pub const SECONDS: u64 = 30;
/// Memory one decode or one external program may use (bytes).
pub const MEMORY_BYTES: u64 = 2 << 30;
