//! Pictures of a rendered page (`--screenshots`), taken on its tab once it
//! settled: the whole page as a PNG and a 640×360 JPEG thumbnail of its top,
//! the two pictures Browsertrix stores as `urn:fullPage:` and
//! `urn:thumbnail:` resource records (`src/util/screenshots.ts` there: a
//! 16:9 thumbnail, JPEG, 640×360).
//!
//! Chromium encodes both (`Page.captureScreenshot`): the thumbnail is the
//! viewport-wide 16:9 strip at the top, scaled down by the capture itself, so
//! no image is decoded or resized in skitter. The full page is captured
//! beyond the viewport, at the viewport's width, down to [`MAX_HEIGHT`] CSS
//! pixels: a page that scrolls forever (or claims a height of millions of
//! pixels) gives its first `MAX_HEIGHT` pixels, not an image that exhausts
//! the browser's memory.

use bytes::Bytes;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, Viewport,
};
use data_encoding::BASE64;

use super::RenderError;

/// The tallest full-page picture, in CSS pixels; a longer page is cut here.
/// 16,384 is also the largest texture many GPUs (and Chromium's software
/// compositor tiles) handle in one piece.
pub const MAX_HEIGHT: u32 = 16_384;

/// The thumbnail's size, Browsertrix's.
pub const THUMBNAIL: (u32, u32) = (640, 360);

/// JPEG quality of the thumbnail (sharp's default, which Browsertrix uses).
const THUMBNAIL_QUALITY: i64 = 80;

/// The pictures of one rendered page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Screenshots {
    /// The whole page (at most [`MAX_HEIGHT`] pixels tall), PNG.
    pub page_png: Bytes,
    /// Its width and height in pixels.
    pub page_size: (u32, u32),
    /// The top of the page scaled to [`THUMBNAIL`], JPEG.
    pub thumbnail_jpeg: Bytes,
}

/// Takes the pictures of the page on `tab`.
pub(super) async fn take(tab: &Page) -> Result<Screenshots, RenderError> {
    let fail = |e: chromiumoxide::error::CdpError| RenderError::Browser(format!("screenshot: {e}"));
    let metrics = tab.layout_metrics().await.map_err(fail)?;
    let width = metrics.css_layout_viewport.client_width.max(1) as f64;
    let height = metrics
        .css_content_size
        .height
        .clamp(1.0, f64::from(MAX_HEIGHT))
        .floor();
    let capture = |format, quality, clip| {
        let mut params = CaptureScreenshotParams::builder()
            .format(format)
            .clip(clip)
            .capture_beyond_viewport(true)
            .build();
        params.quality = quality;
        async move {
            let shot = tab.execute(params).await.map_err(fail)?;
            BASE64
                .decode(AsRef::<[u8]>::as_ref(&shot.result.data))
                .map(Bytes::from)
                .map_err(|e| RenderError::Browser(format!("screenshot: {e}")))
        }
    };
    let page_png = capture(
        CaptureScreenshotFormat::Png,
        None,
        Viewport {
            x: 0.0,
            y: 0.0,
            width,
            height,
            scale: 1.0,
        },
    )
    .await?;
    let (thumb_w, thumb_h) = THUMBNAIL;
    let thumbnail_jpeg = capture(
        CaptureScreenshotFormat::Jpeg,
        Some(THUMBNAIL_QUALITY),
        Viewport {
            x: 0.0,
            y: 0.0,
            width,
            height: width * f64::from(thumb_h) / f64::from(thumb_w),
            scale: f64::from(thumb_w) / width,
        },
    )
    .await?;
    let page_size = png_size(&page_png).unwrap_or((width as u32, height as u32));
    Ok(Screenshots {
        page_png,
        page_size,
        thumbnail_jpeg,
    })
}

/// The width and height a PNG's header gives.
pub(crate) fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if png.len() < 24 || !png.starts_with(SIGNATURE) || &png[12..16] != b"IHDR" {
        return None;
    }
    let word = |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
    Some((word(16), word(20)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_sizes_come_from_the_header() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend_from_slice(&800u32.to_be_bytes());
        png.extend_from_slice(&16_384u32.to_be_bytes());
        assert_eq!(png_size(&png), Some((800, 16_384)));
        assert_eq!(png_size(&png[..20]), None);
        assert_eq!(png_size(b"GIF89a and then some more bytes"), None);
    }
}
