//! Archives: .zip, .tar, .tar.gz, .gz with fixed timestamps.

use super::*;

pub(super) fn archive(
    id: &str,
    c: &Company,
    f: &FileCtx,
    rng: &mut Rng,
) -> Result<Vec<u8>, GenError> {
    // Two to four small members: a table, a note, a log.
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    let n = 2 + rng.below(3);
    for i in 0..n {
        let t = filler::table(c, f, rng);
        let (name, bytes) = match i % 3 {
            0 => (
                format!("{}_{i}.csv", ascii_slug(&t.name)),
                table_as("csv", &t, c, f, rng)?,
            ),
            1 => (
                format!("notes_{i}.txt"),
                filler::doc(c, f, rng).to_plain().into_bytes(),
            ),
            _ => (
                format!("run_{i}.log"),
                filler::text("log", c, f, rng).into_bytes(),
            ),
        };
        members.push((name, bytes));
    }
    let mtime = at(f.date, 9, 0).and_utc().timestamp().max(0) as u64;
    match id {
        "zip" => {
            let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
            let dt = zip::DateTime::from_date_and_time(
                f.date.format("%Y").to_string().parse().unwrap_or(2024),
                f.date.format("%m").to_string().parse().unwrap_or(1),
                f.date.format("%d").to_string().parse().unwrap_or(1),
                9,
                0,
                0,
            )
            .unwrap_or_default();
            let opt = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .last_modified_time(dt)
                .unix_permissions(0o644);
            for (name, bytes) in &members {
                z.start_file(format!("{}/{name}", f.stem), opt)
                    .map_err(|e| fail(f.path, e))?;
                z.write_all(bytes).map_err(|e| fail(f.path, e))?;
            }
            Ok(z.finish().map_err(|e| fail(f.path, e))?.into_inner())
        }
        "tar" | "tar.gz" => {
            let mut b = tar::Builder::new(Vec::new());
            b.mode(tar::HeaderMode::Deterministic);
            for (name, bytes) in &members {
                let mut hd = tar::Header::new_ustar();
                hd.set_size(bytes.len() as u64);
                hd.set_mode(0o644);
                hd.set_mtime(mtime);
                hd.set_uid(0);
                hd.set_gid(0);
                hd.set_entry_type(tar::EntryType::Regular);
                b.append_data(&mut hd, format!("{}/{name}", f.stem), bytes.as_slice())
                    .map_err(|e| fail(f.path, e))?;
            }
            let tarred = b.into_inner().map_err(|e| fail(f.path, e))?;
            if id == "tar" {
                Ok(tarred)
            } else {
                gzip(&tarred, f)
            }
        }
        _ => {
            let inner = members.into_iter().next().map(|m| m.1).unwrap_or_default();
            gzip(&inner, f)
        }
    }
}

pub(super) fn gzip(bytes: &[u8], f: &FileCtx) -> Result<Vec<u8>, GenError> {
    // GzBuilder without a file name or mtime: the header is fixed.
    let mut enc = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).map_err(|e| fail(f.path, e))?;
    enc.finish().map_err(|e| fail(f.path, e))
}
