//! Bounded access to the zip container of .docx/.pptx files and a depth-capped XML reader.
//!
//! A zip bomb is stopped three ways: the number of entries ([`MAX_ZIP_ENTRIES`]), the size an
//! entry declares and the bytes it actually inflates to ([`MAX_ENTRY_BYTES`], counted while
//! reading, so a lying header does not help), and the compression ratio ([`MAX_RATIO`]).
//! The total inflated across one document is capped by [`MAX_TOTAL_BYTES`].

use std::cell::Cell;
use std::io::{Cursor, Read};

use quick_xml::events::Event;

use super::{MAX_ENTRY_BYTES, MAX_RATIO, MAX_TOTAL_BYTES, MAX_XML_DEPTH, MAX_ZIP_ENTRIES, invalid};
use crate::FormatError;

/// An opened office zip container.
pub(crate) struct Archive<'a> {
    file: String,
    zip: zip::ZipArchive<Cursor<&'a [u8]>>,
    inflated: Cell<u64>,
}

impl<'a> Archive<'a> {
    /// Open `bytes` as a zip archive, refusing archives with too many entries.
    pub(crate) fn open(file: &str, bytes: &'a [u8], kind: &str) -> Result<Self, FormatError> {
        if !bytes.starts_with(b"PK") {
            return Err(invalid(
                file,
                format!(
                    "not a {kind} file (a {kind} is a zip archive and this is not one); check the file or its extension"
                ),
            ));
        }
        let zip = crate::error::guard("zip reader", || zip::ZipArchive::new(Cursor::new(bytes)))?
            .map_err(|e| {
                invalid(
                    file,
                    format!("the {kind} archive is corrupt or truncated ({e}); ask for a fresh copy of the file"),
                )
            })?;
        if zip.len() > MAX_ZIP_ENTRIES {
            return Err(invalid(
                file,
                format!(
                    "the archive has {} entries, more than the {MAX_ZIP_ENTRIES} a document may have; refusing it as a possible zip bomb",
                    zip.len()
                ),
            ));
        }
        Ok(Archive {
            file: file.to_string(),
            zip,
            inflated: Cell::new(0),
        })
    }

    /// Names of the entries, in archive order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.zip.file_names().map(str::to_string).collect()
    }

    /// Whether an entry exists.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.zip.index_for_name(name).is_some()
    }

    /// Read one entry fully, within the size, ratio and total caps. `Ok(None)` if absent.
    pub(crate) fn read(&mut self, name: &str) -> Result<Option<Vec<u8>>, FormatError> {
        let Some(index) = self.zip.index_for_name(name) else {
            return Ok(None);
        };
        let file = self.file.clone();
        let total_before = self.inflated.get();
        let result = crate::error::guard("zip reader", || -> Result<Vec<u8>, FormatError> {
            let entry = self.zip.by_index(index).map_err(|e| {
                invalid(&file, format!("cannot open {name} inside the archive ({e}); the file is corrupt or encrypted"))
            })?;
            if entry.encrypted() {
                return Err(invalid(
                    &file,
                    format!("{name} is encrypted inside the archive; ask for an unprotected copy"),
                ));
            }
            let declared = entry.size();
            let compressed = entry.compressed_size().max(1);
            if declared > MAX_ENTRY_BYTES {
                return Err(bomb(&file, name, declared));
            }
            let limit = MAX_ENTRY_BYTES.min(MAX_TOTAL_BYTES.saturating_sub(total_before));
            let mut out = Vec::with_capacity(declared.min(1 << 20) as usize);
            let mut limited = entry.take(limit + 1);
            limited.read_to_end(&mut out).map_err(|e| {
                invalid(&file, format!("{name} inside the archive is corrupt or truncated ({e}); ask for a fresh copy"))
            })?;
            let actual = out.len() as u64;
            if actual > limit {
                return Err(bomb(&file, name, actual));
            }
            if actual > (1 << 20) && actual / compressed > MAX_RATIO {
                return Err(invalid(
                    &file,
                    format!(
                        "{name} expands {}x when unpacked (more than {MAX_RATIO}x); refusing it as a possible zip bomb",
                        actual / compressed
                    ),
                ));
            }
            Ok(out)
        })??;
        self.inflated.set(total_before + result.len() as u64);
        Ok(Some(result))
    }

    /// Read an entry that must exist.
    pub(crate) fn require(&mut self, name: &str, kind: &str) -> Result<Vec<u8>, FormatError> {
        match self.read(name)? {
            Some(b) => Ok(b),
            None => Err(invalid(
                &self.file,
                format!(
                    "not a valid {kind}: the archive has no {name}; the file is damaged or of another type"
                ),
            )),
        }
    }
}

/// `bytes` (a zip archive already opened with [`Archive::open`]) with the entries named in
/// `replaced` given new contents (deflated, keeping their timestamps) and every other entry
/// copied raw: same compressed bytes, same CRC, same metadata, same order.
pub(crate) fn rewrite(
    file: &str,
    bytes: &[u8],
    replaced: &std::collections::BTreeMap<String, Vec<u8>>,
) -> Result<Vec<u8>, FormatError> {
    rewrite_without(file, bytes, replaced, &[])
}

/// [`rewrite`], leaving out the entries named in `removed`.
pub(crate) fn rewrite_without(
    file: &str,
    bytes: &[u8],
    replaced: &std::collections::BTreeMap<String, Vec<u8>>,
    removed: &[&str],
) -> Result<Vec<u8>, FormatError> {
    use std::io::Write;
    let fail = |e: &dyn std::fmt::Display| {
        invalid(
            file,
            format!(
                "the archive cannot be rewritten ({e}); the file is damaged, ask for a fresh copy"
            ),
        )
    };
    crate::error::guard("zip writer", || -> Result<Vec<u8>, FormatError> {
        let mut zin = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| fail(&e))?;
        let mut zout = zip::ZipWriter::new(Cursor::new(Vec::with_capacity(bytes.len() + 4096)));
        for i in 0..zin.len() {
            let entry = zin.by_index_raw(i).map_err(|e| fail(&e))?;
            if removed.contains(&entry.name()) {
                continue;
            }
            match replaced.get(entry.name()) {
                Some(new) => {
                    let name = entry.name().to_string();
                    // The entry's own timestamp, else 1980-01-01: never the clock, so the
                    // same edit gives the same bytes.
                    let opts = zip::write::SimpleFileOptions::default()
                        .compression_method(zip::CompressionMethod::Deflated)
                        .last_modified_time(entry.last_modified().unwrap_or_default());
                    drop(entry);
                    zout.start_file(name, opts).map_err(|e| fail(&e))?;
                    zout.write_all(new).map_err(|e| fail(&e))?;
                }
                None => zout.raw_copy_file(entry).map_err(|e| fail(&e))?,
            }
        }
        Ok(zout.finish().map_err(|e| fail(&e))?.into_inner())
    })?
}

fn bomb(file: &str, name: &str, size: u64) -> FormatError {
    invalid(
        file,
        format!(
            "{name} unpacks to {size} bytes or more, over the limit of {MAX_ENTRY_BYTES} bytes per part ({MAX_TOTAL_BYTES} per document); refusing it as a possible zip bomb"
        ),
    )
}

/// One XML event, with names reduced to their local part (no namespace prefix).
#[derive(Debug)]
pub(crate) enum Xml {
    Start {
        name: Vec<u8>,
        attrs: Vec<(Vec<u8>, String)>,
    },
    /// An empty element `<x/>`: a start immediately followed by its end.
    Empty {
        name: Vec<u8>,
        attrs: Vec<(Vec<u8>, String)>,
    },
    End {
        name: Vec<u8>,
    },
    Text(String),
}

/// Stream the events of an XML part to `f`, failing on malformed XML or nesting deeper than
/// [`MAX_XML_DEPTH`].
pub(crate) fn walk_xml(
    file: &str,
    part: &str,
    xml: &[u8],
    mut f: impl FnMut(Xml),
) -> Result<(), FormatError> {
    let mut reader = quick_xml::Reader::from_reader(xml);
    reader.config_mut().trim_text(false);
    reader.config_mut().expand_empty_elements = false;
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let bad = |e: &dyn std::fmt::Display| {
        invalid(
            file,
            format!("{part} is not well-formed XML ({e}); the document is corrupt"),
        )
    };
    loop {
        buf.clear();
        let ev = reader.read_event_into(&mut buf).map_err(|e| bad(&e))?;
        match ev {
            Event::Start(e) => {
                depth += 1;
                if depth > MAX_XML_DEPTH {
                    return Err(invalid(
                        file,
                        format!(
                            "{part} nests elements more than {MAX_XML_DEPTH} deep; refusing it as hostile or broken"
                        ),
                    ));
                }
                f(Xml::Start {
                    name: e.local_name().as_ref().to_vec(),
                    attrs: attrs(&e, reader.decoder()),
                });
            }
            Event::Empty(e) => f(Xml::Empty {
                name: e.local_name().as_ref().to_vec(),
                attrs: attrs(&e, reader.decoder()),
            }),
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                f(Xml::End {
                    name: e.local_name().as_ref().to_vec(),
                });
            }
            Event::Text(t) => {
                let s = t.decode().map_err(|e| bad(&e))?;
                let s = quick_xml::escape::unescape(&s).map_err(|e| bad(&e))?;
                f(Xml::Text(s.into_owned()));
            }
            Event::CData(t) => f(Xml::Text(String::from_utf8_lossy(&t).into_owned())),
            Event::GeneralRef(r) => {
                let name = String::from_utf8_lossy(&r).into_owned();
                let text = match name.as_str() {
                    "amp" => "&".to_string(),
                    "lt" => "<".to_string(),
                    "gt" => ">".to_string(),
                    "quot" => "\"".to_string(),
                    "apos" => "'".to_string(),
                    _ => match r.resolve_char_ref() {
                        Ok(Some(c)) => c.to_string(),
                        _ => String::new(),
                    },
                };
                f(Xml::Text(text));
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

fn attrs(
    e: &quick_xml::events::BytesStart<'_>,
    decoder: quick_xml::encoding::Decoder,
) -> Vec<(Vec<u8>, String)> {
    e.attributes()
        .flatten()
        .map(|a| {
            let value = a
                .decoded_and_normalized_value(quick_xml::XmlVersion::Implicit1_0, decoder)
                .map(|v| v.into_owned())
                .unwrap_or_else(|_| String::from_utf8_lossy(&a.value).into_owned());
            (a.key.local_name().as_ref().to_vec(), value)
        })
        .collect()
}

/// The value of attribute `key` (local name).
pub(crate) fn attr<'v>(attrs: &'v [(Vec<u8>, String)], key: &[u8]) -> Option<&'v str> {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}
