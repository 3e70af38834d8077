//! Bodies to bytes, per file type. Office formats go through `bureau_formats` writers;
//! images and archives through their crates; text formats are written here.

use std::io::Write;

use bureau_formats::mail::{Address, OutgoingMail, build_eml};
use bureau_formats::office::{self, WriteBlock};
use bureau_formats::sheet::{self, Cell, CellRef, CellValue, Workbook};
use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};

use crate::GenError;
use crate::company::{Company, ascii_slug, thousands};
use crate::content::{Block, Body, Doc, Event, Mail, Table, Val, long_date, md_table};
use crate::filler;
use crate::rng::Rng;
use crate::types::FileType;

mod archives;
mod documents;
mod images;
mod mail;
mod media;
mod tables;

use archives::*;
use documents::*;
pub(crate) use documents::{tex_table, xml_escape};
use images::*;
use mail::*;
use media::*;
use tables::*;

/// What a renderer knows about the file besides its body.
pub(crate) struct FileCtx<'a> {
    pub path: &'a str,
    pub stem: &'a str,
    pub date: NaiveDate,
}

fn fail(path: &str, what: impl std::fmt::Display) -> GenError {
    GenError::Render {
        path: path.to_string(),
        reason: what.to_string(),
    }
}

pub(crate) fn at(d: NaiveDate, h: u32, m: u32) -> NaiveDateTime {
    d.and_time(NaiveTime::from_hms_opt(h, m, 0).unwrap_or(NaiveTime::MIN))
}

/// Render `body` as a file of type `ty`.
pub(crate) fn render(
    ty: &FileType,
    body: &Body,
    c: &Company,
    f: &FileCtx,
    rng: &mut Rng,
) -> Result<Vec<u8>, GenError> {
    let id = ty.id;
    match body {
        Body::Text(t) => Ok(t.clone().into_bytes()),
        Body::CopyOf(_) => Err(fail(f.path, "copies are resolved after rendering")),
        Body::Doc(d) => doc_as(id, d, c, f, rng),
        Body::Table(t) => table_as(id, t, c, f, rng),
        Body::Mail(m) => mail_as(id, m, c, f),
        Body::Events(e) => Ok(ics(e, c).into_bytes()),
        Body::Contacts(p) => Ok(vcf(p, c).into_bytes()),
        Body::Filler => filler_as(ty, c, f, rng),
        Body::Media(m) => media_as(id, m, f, rng),
    }
}

fn filler_as(ty: &FileType, c: &Company, f: &FileCtx, rng: &mut Rng) -> Result<Vec<u8>, GenError> {
    use crate::types::Category;
    match ty.id {
        "docx" | "pdf" | "md" | "txt" | "rst" | "tex" | "rtf" | "html" | "pptx" => {
            doc_as(ty.id, &filler::doc(c, f, rng), c, f, rng)
        }
        "xlsx" | "csv" | "tsv" | "jsonl" | "sql" | "arff" | "dat" | "xml" => {
            table_as(ty.id, &filler::table(c, f, rng), c, f, rng)
        }
        "json" if rng.chance(0.6) => table_as("json", &filler::table(c, f, rng), c, f, rng),
        "eml" | "mbox" => {
            let n = if ty.id == "mbox" { 2 + rng.below(6) } else { 1 };
            let mails = filler::mails(c, f, rng, n);
            mail_as(ty.id, &mails, c, f)
        }
        "ics" => Ok(ics(&filler::events(c, f, rng), c).into_bytes()),
        "vcf" => {
            let mut idx: Vec<usize> = (0..c.people.len()).collect();
            rng.shuffle(&mut idx);
            idx.truncate(3 + rng.below(8));
            idx.sort_unstable();
            Ok(vcf(&idx, c).into_bytes())
        }
        "png" | "jpg" | "gif" | "svg" => {
            let t = filler::table(c, f, rng);
            image(ty.id, &t, f, rng)
        }
        "zip" | "tar" | "tar.gz" | "gz" => archive(ty.id, c, f, rng),
        _ if ty.category == Category::Image => Err(fail(f.path, "no image renderer")),
        _ => Ok(filler::text(ty.id, c, f, rng).into_bytes()),
    }
}
