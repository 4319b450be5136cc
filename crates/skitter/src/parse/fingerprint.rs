//! A page's near-duplicate fingerprint: a 64-bit simhash of the words of its
//! visible text, with every run of digits masked.
//!
//! The endless-pager trap rule (`base::trap`) compares the fingerprints of the
//! pages along a numeric chain: pages that are one template with another number
//! in it (`Results 41–50 of 0`, `Events on day 7`) fingerprint the same, pages
//! that list other items do not. Masking digits is what makes the number in the
//! text invisible; a simhash (rather than an exact hash) lets a page also differ
//! in a word or two, such as a timestamp's month, and still be a near-duplicate.
//!
//! The text is read with a scan that skips markup, comments, scripts and
//! styles: no second HTML parse, linear in the body, run where the body is
//! already being parsed (on the CPU pool for large bodies).
//!
//! Every word is hashed, but past the first 64 (`WORDS_IN_FULL`) words only one
//! in 4 (`SAMPLE`) (those whose hash says so) is added to the simhash: adding a
//! word's 64 signs was half of the fingerprint's cost, and the fingerprint
//! the largest cost a page's handling had gained (`skitter bench`, 20,000
//! pages, medians of 5 interleaved runs: 2.455 → 2.299 s of CPU, 13,325 →
//! 14,247 pages/s). The sample is chosen by content, so two
//! pages with the same words sample the same ones; the first words all count,
//! so a short page (a listing of a few items) is judged on all its words.
//!
//! A word is hashed as it is scanned, a byte at a time (FNV-1a, then
//! MurmurHash3's 64-bit finaliser to spread its bits over the simhash's
//! lanes): no word is copied or read twice. Copying each word and hashing it
//! with xxh3 afterwards was a third of a `skitter bench` crawl's instructions
//! (145 k a 4 KiB page; then about 40 k). The words' hashes are summed
//! bit-sliced (see `Weights`), which took the fingerprint of a bench page
//! from 106 k to 98 k instructions (callgrind); reading the words eight bytes
//! at a time was tried and cost more, words being short. The word hash is no stable format:
//! fingerprints saved by an older version (`--state`, Redis) differ from
//! this one's, so a numeric chain that crosses such an upgrade is judged
//! anew from its next page.

/// The simhash of `html`'s visible words, digits masked; `0` for a page
/// without words.
pub fn text_simhash(html: &str) -> u64 {
    let mut weights = Weights::new();
    let mut word = Word::new();
    for text in VisibleText(html) {
        add_words(text, &mut word, &mut weights);
    }
    weights.simhash()
}

/// Adds the words of one stretch of text: runs of letters and digits,
/// lowercased, each run of digits one `0`. A word does not run on into the
/// next stretch (`a<b>b</b>` is two words).
fn add_words(text: &str, word: &mut Word, weights: &mut Weights) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match CLASS[usize::from(bytes[i])] {
            LOWER => {
                // Most bytes of most pages: a tight loop over the slice (no
                // bounds checks), the hash kept in a register.
                let run = bytes[i..]
                    .iter()
                    .take_while(|&&b| CLASS[usize::from(b)] == LOWER);
                let mut hash = word.hash;
                let mut len = 0;
                for &b in run {
                    hash = (hash ^ u64::from(b)).wrapping_mul(FNV_PRIME);
                    len += 1;
                }
                word.hash = hash;
                word.empty = false;
                word.digits = false;
                i += len;
            }
            UPPER => {
                word.push(bytes[i].to_ascii_lowercase());
                word.digits = false;
                i += 1;
            }
            DIGIT => {
                // One `0` for the whole run: `9` and `10` are the same word.
                if !word.digits {
                    word.push(b'0');
                    word.digits = true;
                }
                i += 1;
            }
            OTHER => {
                word.end(weights);
                i += 1;
            }
            _ => {
                let c = text[i..]
                    .chars()
                    .next()
                    .unwrap_or(char::REPLACEMENT_CHARACTER);
                if c.is_alphanumeric() {
                    let mut buf = [0u8; 4];
                    for lower in c.to_lowercase() {
                        for &b in lower.encode_utf8(&mut buf).as_bytes() {
                            word.push(b);
                        }
                    }
                    word.digits = false;
                } else {
                    word.end(weights);
                }
                i += c.len_utf8();
            }
        }
    }
    word.end(weights);
}

/// A word being hashed as its bytes come.
struct Word {
    hash: u64,
    empty: bool,
    /// The last thing added was a run of digits (its `0`).
    digits: bool,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

impl Word {
    fn new() -> Word {
        Word {
            hash: FNV_OFFSET,
            empty: true,
            digits: false,
        }
    }

    fn push(&mut self, b: u8) {
        self.hash = (self.hash ^ u64::from(b)).wrapping_mul(FNV_PRIME);
        self.empty = false;
    }

    /// Adds the word, if any, and starts the next.
    fn end(&mut self, weights: &mut Weights) {
        if !self.empty {
            weights.add(finish(self.hash));
        }
        *self = Word::new();
    }
}

/// The hash of a word's bytes, as [`Word`] computes it byte by byte.
#[cfg(test)]
fn word_hash(word: &[u8]) -> u64 {
    let mut w = Word::new();
    for &b in word {
        w.push(b);
    }
    finish(w.hash)
}

/// MurmurHash3's 64-bit finaliser: every input bit flips each output bit
/// with probability about 1/2, which FNV alone does not give the high bits.
fn finish(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// What a byte is to [`add_words`]: one table lookup instead of a chain of
/// range tests per byte.
const LOWER: u8 = 0;
const UPPER: u8 = 1;
const DIGIT: u8 = 2;
/// ASCII that is neither letter nor digit: it ends a word.
const OTHER: u8 = 3;
/// A byte of a non-ASCII character.
const WIDE: u8 = 4;

static CLASS: [u8; 256] = {
    let mut table = [OTHER; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            b'a'..=b'z' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'0'..=b'9' => DIGIT,
            0x80.. => WIDE,
            _ => OTHER,
        };
        b += 1;
    }
    table
};

/// Words added to the simhash before sampling starts.
const WORDS_IN_FULL: u32 = 64;

/// One word in this many is added past the first [`WORDS_IN_FULL`].
const SAMPLE: u64 = 4;

/// Bits of the lanes' counts held bit-sliced in [`Weights::planes`]: up to
/// 2^`PLANES` − 1 words are counted there before they are carried over.
const PLANES: usize = 8;

/// A simhash being summed. A lane's sum of +1 (its bit set in a word's hash)
/// and −1 (not set) is 2 × (words with the bit set) − (words added), so it is
/// enough to count, per lane, the words with its bit set. They are counted
/// bit-sliced: plane `k` holds bit `k` of all 64 lanes' counts, so adding a
/// word is a ripple-carry add of its hash into the planes, a few 64-bit
/// operations for all lanes at once. Adding 64 signed lanes per word (eight
/// table rows) was 40% of the fingerprint's instructions (`skitter bench`,
/// callgrind).
struct Weights {
    /// The low [`PLANES`] bits of each lane's count since the last carry.
    planes: [u64; PLANES],
    /// Words counted in `planes` since the last carry.
    pending: u32,
    /// Each lane's count carried out of the planes.
    ones: [u64; 64],
    /// Words added to the simhash.
    added: u64,
    /// Words seen, added or not.
    words: u32,
}

impl Weights {
    fn new() -> Weights {
        Weights {
            planes: [0; PLANES],
            pending: 0,
            ones: [0; 64],
            added: 0,
            words: 0,
        }
    }

    /// The simhash: a bit set for each lane whose sum is positive, i.e. set in
    /// more than half the words added.
    fn simhash(&self) -> u64 {
        (0..64).fold(0, |hash, lane| {
            let ones = self.ones[lane] + self.pending_count(lane);
            if 2 * ones > self.added {
                hash | 1 << lane
            } else {
                hash
            }
        })
    }

    /// Lane `lane`'s count in the planes.
    fn pending_count(&self, lane: usize) -> u64 {
        self.planes
            .iter()
            .enumerate()
            .map(|(k, plane)| (plane >> lane & 1) << k)
            .sum()
    }

    /// Adds a word's hash `h` if it is among the first words or in the
    /// sample.
    fn add(&mut self, h: u64) {
        self.words = self.words.saturating_add(1);
        if self.words > WORDS_IN_FULL && !h.is_multiple_of(SAMPLE) {
            return;
        }
        let mut carry = h;
        for plane in &mut self.planes {
            let sum = *plane ^ carry;
            carry &= *plane;
            *plane = sum;
            if carry == 0 {
                break;
            }
        }
        self.added += 1;
        self.pending += 1;
        // A lane's count in the planes is at most `pending`: carried over
        // before it could need a ninth bit.
        if self.pending == (1 << PLANES) - 1 {
            for lane in 0..64 {
                self.ones[lane] += self.pending_count(lane);
            }
            self.planes = [0; PLANES];
            self.pending = 0;
        }
    }
}

/// The stretches of an HTML text between tags, without comments and the
/// contents of `script` and `style`.
struct VisibleText<'a>(&'a str);

impl<'a> Iterator for VisibleText<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        loop {
            if self.0.is_empty() {
                return None;
            }
            // memchr's vector search; `str::find` with a `char` was a
            // measured share of the fingerprint.
            let Some(open) = memchr::memchr(b'<', self.0.as_bytes()) else {
                return Some(std::mem::take(&mut self.0));
            };
            let (text, rest) = self.0.split_at(open);
            self.0 = skip_markup(rest);
            if !text.is_empty() {
                return Some(text);
            }
        }
    }
}

/// `s` starts with `<`: what follows the tag, comment, script or style there.
///
/// Byte searches only, and no allocation: this runs once per tag of every
/// page, and a per-tag `String` for the name was a measured share of a crawl's
/// CPU on real documentation pages (thousands of tags each).
fn skip_markup(s: &str) -> &str {
    if let Some(comment) = s.strip_prefix("<!--") {
        return after(comment, b"-->");
    }
    let rest = after(&s[1..], b">");
    let name = s.as_bytes()[1..]
        .iter()
        .take_while(|b| b.is_ascii_alphabetic())
        .take(7);
    let mut len = 0;
    let mut lower = [0u8; 7];
    for (slot, b) in lower.iter_mut().zip(name) {
        *slot = b.to_ascii_lowercase();
        len += 1;
    }
    let close: &[u8] = match &lower[..len] {
        b"script" => b"</script",
        b"style" => b"</style",
        _ => return rest,
    };
    match find_ascii_ci(rest, close) {
        Some(i) => after(&rest[i..], b">"),
        None => "",
    }
}

/// What follows the first `end` in `s`; nothing if there is none.
fn after<'a>(s: &'a str, end: &[u8]) -> &'a str {
    // `end` is ASCII, so a match ends on a character boundary.
    let found = match end {
        [byte] => memchr::memchr(*byte, s.as_bytes()),
        _ => memchr::memmem::find(s.as_bytes(), end),
    };
    found.map_or("", |i| &s[i + end.len()..])
}

/// The first position of `needle` (ASCII, lowercase, starting with `<`) in
/// `hay`, ignoring case.
fn find_ascii_ci(hay: &str, needle: &[u8]) -> Option<usize> {
    let hay = hay.as_bytes();
    memchr::memchr_iter(b'<', hay).find(|&i| {
        hay.get(i..i + needle.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(needle))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `skip_markup` as first written (a `String` per tag name, `str`
    /// searches), the reference for the byte-searching one.
    fn skip_markup_reference(s: &str) -> &str {
        fn after<'a>(s: &'a str, end: &str) -> &'a str {
            s.find(end).map_or("", |i| &s[i + end.len()..])
        }
        if let Some(comment) = s.strip_prefix("<!--") {
            return after(comment, "-->");
        }
        let rest = after(&s[1..], ">");
        let name: String = s[1..]
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .take(7)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match name.as_str() {
            "script" | "style" => {
                let close = format!("</{name}");
                let at = rest
                    .as_bytes()
                    .windows(close.len())
                    .position(|w| w.eq_ignore_ascii_case(close.as_bytes()));
                match at {
                    Some(i) => after(&rest[i..], ">"),
                    None => "",
                }
            }
            _ => rest,
        }
    }

    /// A simhash summed as first written: a signed sum per lane, +1 for
    /// each word with the lane's bit set and -1 for each without; the
    /// reference for the bit-sliced count.
    #[derive(Default)]
    struct LaneSums {
        lanes: Vec<i64>,
        words: u32,
    }

    impl LaneSums {
        /// Adds `h` if it is among the first words or in the sample.
        fn add(&mut self, h: u64) {
            self.words = self.words.saturating_add(1);
            if self.words > WORDS_IN_FULL && !h.is_multiple_of(SAMPLE) {
                return;
            }
            self.push(h);
        }

        /// Adds `h`, sampled or not.
        fn push(&mut self, h: u64) {
            self.lanes.resize(64, 0);
            for (bit, lane) in self.lanes.iter_mut().enumerate() {
                *lane += if h >> bit & 1 == 1 { 1 } else { -1 };
            }
        }

        fn simhash(&self) -> u64 {
            self.lanes
                .iter()
                .enumerate()
                .filter(|(_, w)| **w > 0)
                .fold(0, |hash, (bit, _)| hash | 1 << bit)
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(52),
            ..ProptestConfig::default()
        })]
        /// The bit-sliced count gives the signed sums' simhash, past several
        /// carries out of the planes, on hashes biased to few bits set and to
        /// many (so lanes sit at and near a tie).
        #[test]
        fn the_bit_sliced_count_matches_the_lane_sums(
            hashes in proptest::collection::vec(
                prop_oneof![
                    any::<u64>(),
                    any::<u64>().prop_map(|h| h & h >> 7 & h >> 13),
                    any::<u64>().prop_map(|h| h | h >> 5 | h >> 11),
                    Just(0u64),
                    Just(u64::MAX),
                ],
                0..3000,
            )
        ) {
            let mut sliced = Weights::new();
            let mut sums = LaneSums::default();
            for &h in &hashes {
                sliced.add(h);
                sums.add(h);
            }
            prop_assert_eq!(sliced.simhash(), sums.simhash());
        }
    }

    /// Lanes whose bit is set in every word for longer than the planes can
    /// count are carried over without losing a word: one word more with each
    /// bit set than without is a full simhash, one fewer an empty one.
    #[test]
    fn long_runs_of_one_hash_are_counted_whole() {
        // A multiple of SAMPLE, so always added; its two low bits unset.
        let h = u64::MAX - 3;
        for (set, unset, full) in [(1000, 999, true), (999, 1000, false), (256, 255, true)] {
            let mut w = Weights::new();
            w.words = WORDS_IN_FULL; // past the first words: sample by hash
            for _ in 0..set {
                w.add(h);
            }
            for _ in 0..unset {
                w.add(0);
            }
            let expected = if full { h } else { 0 };
            assert_eq!(w.simhash(), expected, "{set} set, {unset} unset");
        }
    }

    /// The words of `html` as first read (a decoded character at a time,
    /// each pushed into a `String`), each hashed whole: the reference for
    /// the scan that hashes as it reads.
    fn text_simhash_reference(html: &str) -> u64 {
        let mut weights = LaneSums::default();
        let mut word = String::new();
        for text in VisibleText(html) {
            for c in text.chars() {
                if c.is_alphanumeric() {
                    if c.is_ascii_digit() {
                        if !word.ends_with('0') {
                            word.push('0');
                        }
                    } else {
                        word.extend(c.to_lowercase());
                    }
                } else if !word.is_empty() {
                    weights.add(word_hash(word.as_bytes()));
                    word.clear();
                }
            }
            if !word.is_empty() {
                weights.add(word_hash(word.as_bytes()));
                word.clear();
            }
        }
        weights.simhash()
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 1024,
            rng_seed: proptest::test_runner::RngSeed::Fixed(36),
            ..ProptestConfig::default()
        })]
        /// The byte scan hashes the words the character scan hashes, on text
        /// mixing the cases that take each path: lowercase runs, capitals,
        /// digits, letters and digits of other scripts, punctuation, markup,
        /// and more than the 64 words that are always added.
        #[test]
        fn the_byte_scan_matches_the_reference(
            pieces in proptest::collection::vec(
                prop_oneof![
                    Just("the"), Just("quick"), Just("Fox"), Just("ÉTÉ"), Just("été"),
                    Just("42"), Just("x9y"), Just("٣"), Just("İ"), Just("ß"), Just("日本"),
                    Just(" "), Just(", "), Just("-"), Just("\n"), Just("’"), Just("<b>"),
                    Just("</p>"), Just("<script>x</script>"), Just("a"), Just("Z"),
                ],
                0..300,
            )
        ) {
            let html: String = pieces.concat();
            prop_assert_eq!(text_simhash(&html), text_simhash_reference(&html));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 512,
            rng_seed: proptest::test_runner::RngSeed::Fixed(35),
            ..ProptestConfig::default()
        })]
        /// The byte scan skips exactly what the reference skips, on markup
        /// made of the pieces that matter (tags, comments, scripts and styles
        /// in any case, unclosed ones, multi-byte text).
        #[test]
        fn skipping_markup_matches_the_reference(
            pieces in proptest::collection::vec(
                prop_oneof![
                    Just("<"), Just(">"), Just("<!--"), Just("-->"), Just("<script"),
                    Just("</SCRIPT"), Just("<Style>"), Just("</style>"), Just("<scripts>"),
                    Just("<p class=x>"), Just("é"), Just("text 42 "), Just("-"),
                ],
                0..24,
            )
        ) {
            let html: String = pieces.concat();
            let mut at = html.as_str();
            while let Some(open) = at.find('<') {
                let tag = &at[open..];
                prop_assert_eq!(skip_markup(tag), skip_markup_reference(tag));
                at = &at[open + 1..];
            }
        }
    }

    #[test]
    fn ascii_and_unicode_words_are_read_alike() {
        assert_eq!(
            text_simhash("<p>Hello World 42</p>"),
            text_simhash("<p>hello world 7</p>")
        );
        assert_ne!(text_simhash("<p>Grüße aus Köln</p>"), 0);
    }

    fn bits_apart(a: &str, b: &str) -> u32 {
        (text_simhash(a) ^ text_simhash(b)).count_ones()
    }

    #[test]
    fn same_template_other_number_is_the_same() {
        let page = |n: u32| {
            format!(
                "<html><head><title>Results page {n}</title><script>var p={n};</script></head>\
                 <body><!-- page {n} --><h1>Page {n}</h1><p>No results on this page.</p>\
                 <a href=\"/pager/{}\">next</a></body></html>",
                n + 1
            )
        };
        assert_eq!(bits_apart(&page(7), &page(12345)), 0);
    }

    #[test]
    fn pages_listing_other_items_differ() {
        let a = "<ul><li>Blue heron</li><li>Red kite</li><li>Grey wagtail</li></ul><p>Page 1</p>";
        let b = "<ul><li>Barn owl</li><li>Song thrush</li><li>Great tit</li></ul><p>Page 2</p>";
        assert!(bits_apart(a, b) > 3, "{}", bits_apart(a, b));
    }

    #[test]
    fn markup_and_case_do_not_count() {
        assert_eq!(
            text_simhash("<p class=x>Hello <b>World</b></p><STYLE>p{color:red}</style>"),
            text_simhash("hello world")
        );
        assert_eq!(text_simhash("<html><body></body></html>"), 0);
        // Unclosed markup ends the text without a panic.
        assert_eq!(
            text_simhash("words <script>never closed"),
            text_simhash("words")
        );
        assert_eq!(
            text_simhash("words <!-- never closed"),
            text_simhash("words")
        );
        assert_eq!(text_simhash("words <a href"), text_simhash("words"));
    }

    /// The simhash of `words`, every one of them added.
    fn unsampled(words: &[&str]) -> u64 {
        let mut sums = LaneSums::default();
        for w in words {
            sums.push(word_hash(w.as_bytes()));
        }
        sums.simhash()
    }

    /// A short page counts every word, whichever words the sample of a long
    /// page would have kept.
    #[test]
    fn a_short_page_is_judged_on_all_its_words() {
        let page = "<p>Item 7: Apple</p><p>Price 12, in stock</p>";
        let words = ["item", "0", "apple", "price", "0", "in", "stock"];
        assert_eq!(text_simhash(page), unsampled(&words));
    }

    /// Past the first words only the sample counts, chosen by each word's
    /// hash: the same words sample the same way on every page.
    #[test]
    fn a_long_page_is_sampled_by_content() {
        let words: Vec<String> = (0..400)
            .map(|i| format!("word{}", char::from(b'a' + (i % 26) as u8)).repeat(1 + i / 26))
            .collect();
        let text = words.join(" ");
        let all: Vec<&str> = words.iter().map(String::as_str).collect();
        let kept: Vec<&str> = all
            .iter()
            .enumerate()
            .filter(|(i, w)| {
                *i < WORDS_IN_FULL as usize || word_hash(w.as_bytes()).is_multiple_of(SAMPLE)
            })
            .map(|(_, w)| *w)
            .collect();
        assert!(
            kept.len() < all.len() / 2,
            "{} of {}",
            kept.len(),
            all.len()
        );
        let fingerprint = text_simhash(&format!("<p>{text}</p>"));
        assert_eq!(fingerprint, unsampled(&kept));
        assert_ne!(fingerprint, unsampled(&all), "the input does not tell");
    }
}
