//! Printing: tables and colour on a terminal, plain tab-separated lines otherwise (and no
//! colour when `NO_COLOR` is set or output is piped: `anstream` strips it).

use anstream::println;
use std::io::IsTerminal;

use anstyle::{AnsiColor, Style};

const BOLD: Style = Style::new().bold();
const RED: Style = AnsiColor::Red.on_default().bold();
const GREEN: Style = AnsiColor::Green.on_default();
const YELLOW: Style = AnsiColor::Yellow.on_default();

/// Whether stdout is a terminal (tables) or a pipe (tab-separated lines).
pub fn terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// Rows as an aligned table with a bold header on a terminal, or as tab-separated lines
/// without a header otherwise.
pub fn table(headers: &[&str], rows: &[Vec<String>]) {
    if !terminal() {
        for row in rows {
            anstream::println!("{}", row.join("\t"));
        }
        return;
    }
    let mut widths: Vec<usize> = headers.iter().map(|header| visible(header)).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(visible(cell));
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell}{}", " ".repeat(width - visible(cell))))
            .collect();
        padded.join("  ").trim_end().to_owned()
    };
    let header = line(headers.iter().map(|header| header.to_string()).collect());
    anstream::println!("{BOLD}{header}{BOLD:#}");
    for row in rows {
        anstream::println!("{}", line(row.clone()));
    }
}

/// The width of a cell as shown (colour codes take no room).
fn visible(text: &str) -> usize {
    anstream::adapter::strip_str(text)
        .to_string()
        .chars()
        .count()
}

/// `error: message`, "error" in red on a terminal.
pub fn error_line(message: &str) -> String {
    let line = format!("{RED}error:{RED:#} {message}");
    if std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        line
    } else {
        format!("error: {message}")
    }
}

/// A heading or a key, bold on a terminal.
pub fn bold(text: &str) -> String {
    format!("{BOLD}{text}{BOLD:#}")
}

/// Something that went well, green on a terminal.
pub fn good(text: &str) -> String {
    format!("{GREEN}{text}{GREEN:#}")
}

/// Something to look at, yellow on a terminal.
pub fn warn(text: &str) -> String {
    format!("{YELLOW}{text}{YELLOW:#}")
}

/// Prints a JSON value, pretty.
pub fn json(value: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}
