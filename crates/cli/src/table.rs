//! Every table the CLI prints goes through one builder (comfy-table, without its terminal
//! feature: no width detection, no colours, so the output is the same in a terminal, a pipe
//! and a test): columns padded to their widest cell whatever the length of a state name,
//! numeric columns right-aligned, two spaces between columns, no borders, a header line.

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};

/// A table with `header`; the columns whose index is in `right` are right-aligned.
pub fn new(header: &[&str], right: &[usize]) -> Table {
    let mut t = Table::new();
    t.load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.iter().copied());
    // Two spaces between columns, none before the first.
    for i in 0..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_padding((if i == 0 { 0 } else { 2 }, 0));
            if right.contains(&i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    t
}

/// The table's lines, each indented by `indent` and without trailing spaces.
pub fn render(t: &Table, indent: &str) -> String {
    let mut s = String::new();
    for line in t.lines() {
        s.push_str(indent);
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_align_with_long_names() {
        let mut t = super::new(&["state", "n"], &[1]);
        t.add_row(vec!["a", "1"]);
        t.add_row(vec!["{fork_inside,open,a_much_longer_name}", "12345"]);
        let s = super::render(&t, "  ");
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 3);
        // Every line ends in the right-aligned column at the same place.
        let ends: Vec<usize> = lines.iter().map(|l| l.len()).collect();
        assert!(ends.iter().all(|&e| e == ends[0]), "{s}");
    }
}
