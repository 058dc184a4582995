//! Input echoed back in error messages: cut to a short prefix and with control characters
//! escaped, so that a 10 MB line or an escape sequence in what a user sent cannot flood or
//! rewrite a terminal, a log or a line protocol.

/// Most characters of one piece of input an error quotes back.
pub const QUOTE_CHARS: usize = 40;

/// Most characters of a whole error message built from input (a parser's message that may
/// hold what it was given).
pub const MESSAGE_CHARS: usize = 400;

/// At most [`QUOTE_CHARS`] characters of `text`, control characters escaped, marked `...` when
/// cut: the form every error quotes user input in.
pub fn quote(text: &str) -> String {
    clip(text, QUOTE_CHARS)
}

/// At most `max` characters of `text` (escapes counted as the one character they stand for),
/// control characters escaped, marked `...` when cut.
pub fn clip(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max * 2));
    for (n, c) in text.chars().enumerate() {
        if n == max {
            out.push_str("...");
            break;
        }
        push_escaped(&mut out, c);
    }
    out
}

/// `text` as one CSV field (RFC 4180): in double quotes, its quotes doubled, when it holds a
/// comma, a quote or a line break; as it is otherwise.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// `text` with every control character (and the invisible characters that reorder or hide
/// text) written as an escape such as `\u{1b}`, `\0` or `\n`; nothing is cut.
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    out
}

fn push_escaped(out: &mut String, c: char) {
    let invisible = matches!(c,
        '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}');
    if c.is_control() {
        out.extend(c.escape_debug());
    } else if invisible {
        out.push_str(&format!("\\u{{{:x}}}", c as u32));
    } else {
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_quote_only_what_needs_it() {
        assert_eq!(
            csv_field("net:m.safetensors:ms=200"),
            "net:m.safetensors:ms=200"
        );
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn quotes_are_short_and_escaped() {
        assert_eq!(quote("abc"), "abc");
        assert_eq!(quote("a\u{1b}[31mb\u{7}\0\n"), "a\\u{1b}[31mb\\u{7}\\0\\n");
        assert_eq!(
            quote(&"x".repeat(1000)),
            format!("{}...", "x".repeat(QUOTE_CHARS))
        );
        assert_eq!(escape_controls("é\u{202e}z"), "é\\u{202e}z");
        assert_eq!(clip("abcdef", 3), "abc...");
        assert_eq!(clip("abc", 3), "abc");
    }
}
