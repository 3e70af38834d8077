//! Office documents: read .docx, .pptx, .pdf and other office files to text for agents,
//! typed views for checks, and writers for tools. Every reader is bounded (size, zip entries,
//! XML depth) and never panics.
