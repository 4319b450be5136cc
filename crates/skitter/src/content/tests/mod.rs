//! Tests of the content layer: Markdown conversion, main-content choice,
//! metadata, and hostile input.

mod convert;
