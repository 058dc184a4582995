//! Progress bars for long work (self-play, training, tournaments, benchmarks): one look for
//! the whole program, drawn on stderr so stdout stays for results.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` units labelled `unit` (`games`, `steps`, ...), with the elapsed time and a
/// free message; hidden (but still counting) unless `visible`.
pub fn bar(len: u64, unit: &str, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let template = format!("{{elapsed_precise}} [{{bar:30}}] {{pos}}/{{len}} {unit}  {{msg}}");
    let style = ProgressStyle::with_template(&template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    ProgressBar::new(len).with_style(style)
}

/// A spinner for work of unknown length, counting `unit`s (`positions`, ...), with the
/// elapsed time and a free message; hidden (but still counting) unless `visible`.
pub fn spinner(unit: &str, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let template = format!("{{elapsed_precise}} {{spinner}} {{pos}} {unit}  {{msg}}");
    let style = ProgressStyle::with_template(&template)
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    ProgressBar::new_spinner().with_style(style)
}
