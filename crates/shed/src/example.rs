//! The run club example (`examples/run-club`), built into the binary so
//! `shed up` can deploy it from any folder.

use std::collections::BTreeMap;

macro_rules! example_file {
    ($name:literal) => {
        (
            $name,
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../examples/run-club/",
                $name
            ))
            .as_slice(),
        )
    };
}

/// The run club's files, by path.
const RUN_CLUB: [(&str, &[u8]); 5] = [
    example_file!("vocab.json"),
    example_file!("tools.json"),
    example_file!("index.html"),
    example_file!("leaderboard.html"),
    example_file!("style.css"),
];

/// The run club's files, as a deploy takes them.
pub fn run_club() -> BTreeMap<String, Vec<u8>> {
    RUN_CLUB
        .iter()
        .map(|(path, bytes)| (path.to_string(), bytes.to_vec()))
        .collect()
}
