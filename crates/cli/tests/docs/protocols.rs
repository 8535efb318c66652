//! The protocol table in docs/attack.md is the protocol table's rows
//! (`iolab_model::protocol::markdown`), between two markers invisible on
//! GitHub. When they disagree the test prints the table as made: paste it.

use std::fs;

use super::root;

const BEGIN: &str = "<!-- generated from the protocol table -->";
const END: &str = "<!-- end generated -->";

#[test]
fn the_protocol_table_in_the_docs_is_the_registry() {
    let page = root().join("docs/attack.md");
    let text = fs::read_to_string(&page).expect("docs/attack.md reads");
    let (_, after) = text
        .split_once(BEGIN)
        .unwrap_or_else(|| panic!("docs/attack.md has no `{BEGIN}`"));
    let (table, _) = after
        .split_once(END)
        .unwrap_or_else(|| panic!("docs/attack.md has no `{END}` after `{BEGIN}`"));
    let made = iolab_model::protocol::markdown();
    assert_eq!(
        table.trim(),
        made.trim(),
        "docs/attack.md's protocol table is not the registry's; paste:\n{made}"
    );
}
