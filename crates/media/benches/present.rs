//! What showing a file to an agent as media costs (`bureau_media::present`): a phone photo
//! passed as it is, a large photo scaled down, a scanned PDF page taken from the file, and a
//! WAV — beside the cost of reading the same number of bytes of text as text would be
//! (`String::from_utf8_lossy`), the comparison the table in docs/BENCHMARKS.md gives.

use std::io::Cursor;

use criterion::{Criterion, criterion_group, criterion_main};

fn photo(w: u32, h: u32) -> Vec<u8> {
    // A noisy gradient: JPEG keeps it at a photo's size, not a flat image's.
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        let n = ((x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503)) >> 13) as u8 & 31;
        image::Rgb([(x * 255 / w) as u8 ^ n, (y * 255 / h) as u8, 128 ^ n])
    });
    let mut out = Vec::new();
    let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85);
    image::DynamicImage::ImageRgb8(img)
        .write_with_encoder(enc)
        .unwrap();
    out
}

fn wav(seconds: u32) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut out = Vec::new();
    let mut w = hound::WavWriter::new(Cursor::new(&mut out), spec).unwrap();
    for i in 0..seconds * 16000 {
        w.write_sample(((i % 64) as i16 - 32) * 200).unwrap();
    }
    w.finalize().unwrap();
    out
}

fn bench(c: &mut Criterion) {
    // Measure the readers, not the outcomes they gave before (bureau_isolate::run_on_bytes_memo).
    bureau_isolate::set_memo(false);
    let small = photo(1200, 900);
    let large = photo(4000, 3000);
    let page = photo(1240, 1754);
    let scan = bureau_formats::office::image_to_pdf("page.jpg", &page).unwrap();
    let pages = vec![String::new()];
    let voicemail = wav(30);
    let mut g = c.benchmark_group("present");
    g.sample_size(10);
    g.bench_function("photo 1200x900 jpeg, passed as it is", |b| {
        b.iter(|| {
            bureau_media::present("r.jpg", &small, None)
                .unwrap()
                .unwrap()
        })
    });
    g.bench_function("photo 4000x3000 jpeg, scaled to 1568", |b| {
        b.iter(|| {
            bureau_media::present("p.jpg", &large, None)
                .unwrap()
                .unwrap()
        })
    });
    g.bench_function("scanned pdf page 1240x1754, taken from the file", |b| {
        b.iter(|| {
            bureau_media::present("s.pdf", &scan, Some(&pages))
                .unwrap()
                .unwrap()
        })
    });
    g.bench_function("wav 30 s", |b| {
        b.iter(|| {
            bureau_media::present("v.wav", &voicemail, None)
                .unwrap()
                .unwrap()
        })
    });
    g.bench_function("text of the small photo's size, as text", |b| {
        let text = "x".repeat(small.len());
        b.iter(|| String::from_utf8_lossy(text.as_bytes()).into_owned())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
