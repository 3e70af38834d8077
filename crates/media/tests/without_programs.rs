//! Without ffmpeg, tesseract and poppler on PATH (this test binary empties PATH, so it runs
//! alone in its process): media still come back, described, with one line naming what to
//! install; nothing fails silently.

use bureau_media::MediaError;

fn wav() -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 8000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut out = Vec::new();
    let mut w = hound::WavWriter::new(std::io::Cursor::new(&mut out), spec).unwrap();
    for i in 0..800i32 {
        w.write_sample((i % 20) as i16).unwrap();
    }
    w.finalize().unwrap();
    out
}

#[test]
fn missing_programs_are_named_with_their_package() {
    // SAFETY: the only test of this binary; no other thread reads the environment.
    unsafe { std::env::set_var("PATH", "") };

    // A video: described, with a note naming ffmpeg.
    let mp4 = b"\0\0\0\x20ftypisom\0\0\x02\0isomiso2mp41".to_vec();
    let p = bureau_media::present("clip.mp4", &mp4, None)
        .unwrap()
        .unwrap();
    assert!(p.media.is_empty());
    assert!(
        p.notes.iter().any(|n| n.contains("apt-get install ffmpeg")),
        "{:?}",
        p.notes
    );

    // A WAV needs no program at all.
    let p = bureau_media::present("vm.wav", &wav(), None)
        .unwrap()
        .unwrap();
    assert_eq!(p.media.len(), 1);

    // OCR: a clear error naming tesseract's package.
    let png = {
        let mut out = Vec::new();
        image::DynamicImage::ImageRgb8(image::RgbImage::new(8, 8))
            .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
            .unwrap();
        out
    };
    match bureau_media::ocr::ocr("note.png", &png, "eng") {
        Err(MediaError::Missing {
            program, install, ..
        }) => {
            assert_eq!(program, "tesseract");
            assert!(install.contains("tesseract-ocr"), "{install}");
        }
        other => panic!("{other:?}"),
    }
}
