//! A large generated chain through the .tra reader and writer (ignored by default: run with
//! `cargo test -p augur-dtmc --release --test large -- --ignored --nocapture`).

use augur_dtmc::DtmcBuilder;
use augur_formats::{read_model, write_model_to_path, Format, ReadOptions};
use std::time::Instant;

#[test]
#[ignore = "slow: a million-state chain; run in release with --ignored (see the top of this file)"]
fn million_state_chain_round_trips() {
    let n: u32 = 1_000_000;
    let mut b = DtmcBuilder::with_capacity(n as usize, 2 * n as usize);
    for s in 0..n - 1 {
        b.add_row(s, [(s + 1, 0.75), (0, 0.25)]).unwrap();
    }
    b.add_row(n - 1, [(n - 1, 1.0)]).unwrap();
    b.add_initial(0).unwrap();
    b.add_label_state("goal", n - 1).unwrap();
    let t = Instant::now();
    let (d, _) = b.build().unwrap();
    eprintln!("build: {:?}", t.elapsed());
    let dir = tempfile::tempdir().unwrap();
    for f in [Format::Tra, Format::Drn, Format::Json] {
        let p = dir.path().join(format!("big.{}", f.extension()));
        let t = Instant::now();
        write_model_to_path(&d, f, &p).unwrap();
        let w = t.elapsed();
        let t = Instant::now();
        let (back, _) = read_model(&p, &ReadOptions::default()).unwrap();
        eprintln!("{f}: write {w:?}, read {:?}", t.elapsed());
        assert_eq!(back.matrix, d.matrix);
    }
    let t = Instant::now();
    let tr = d.transpose();
    eprintln!("transpose: {:?}", t.elapsed());
    assert_eq!(tr.nnz(), d.num_transitions());
}
