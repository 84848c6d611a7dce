//! End-to-end tests of `augur parse`, running the built binary.

use crate::util::{self, augur, stderr, stdout};

#[test]
fn props_print_in_canonical_form() {
    let o = augur(&[
        "parse",
        "--prop",
        "P>=0.9 [F<=5 \"goal\"]",
        "--prop",
        "\"safe\": P<=0.01[F \"crash\"]",
        "--prop",
        "R{\"cost\"}=?[C{discount=0.9}<=k]",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "P>=0.9 [ F<=5 \"goal\" ]\n\"safe\": P<=0.01 [ F \"crash\" ]\nR{\"cost\"}=? [ C{discount=0.9}<=k ]\n"
    );
    assert!(stderr(&o).is_empty());
}

#[test]
fn file_prints_one_property_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.props");
    std::fs::write(
        &path,
        "// comment\nconst int T = 5;\nlabel \"done\" = s=3;\n\t\"a\": P=? [ F<=T \"done\" ];\nS=?[ s=0|s=1 ]\nfilter(max, R=? [ F \"stable\" ], \"init\")\n",
    )
    .unwrap();
    let o = augur(&["parse", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "\"a\": P=? [ F<=T \"done\" ]\nS=? [ s=0 | s=1 ]\nfilter(max, R=? [ F \"stable\" ], \"init\")\n"
    );
    // The printed properties parse again to the same text.
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    let mut args = vec!["parse".to_string()];
    for l in &lines {
        args.push("--prop".into());
        args.push(l.clone());
    }
    let again = augur(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(stdout(&again), stdout(&o));
}

#[test]
fn json_output() {
    let o = augur(&[
        "parse",
        "--json",
        "--prop",
        "\"n\": P>=0.5 [ \"a\" U<=3 x>1 ]",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let p = &v["properties"][0];
    assert_eq!(p["name"], "n");
    assert_eq!(p["canonical"], "P>=0.5 [ \"a\" U<=3 x>1 ]");
    let prob = &p["formula"]["prob"];
    assert_eq!(prob["bound"]["compare"][0], ">=");
    assert_eq!(prob["bound"]["compare"][1]["double"], 0.5);
    let until = &prob["path"]["until"];
    assert_eq!(until[0]["label"], "a");
    assert_eq!(until[2]["le"]["int"], 3);
    assert_eq!(v["constants"].as_array().unwrap().len(), 0);
    // The JSON is the serde form of the AST: it deserialises back to the parsed formula.
    let formula: augur_pctl::StateFormula = serde_json::from_value(p["formula"].clone()).unwrap();
    assert_eq!(
        formula,
        augur_pctl::parse_property("P>=0.5 [ \"a\" U<=3 x>1 ]")
            .unwrap()
            .formula
    );
}

#[test]
fn bad_property_exits_1_with_located_error() {
    let o = augur(&["parse", "--prop", "P=? [ F<0 \"a\" ]"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).is_empty());
    let err = stderr(&o);
    assert!(err.contains("--> --prop:1:8"), "{err}");
    assert!(
        err.contains("1 | P=? [ F<0 \"a\" ]\n  |        ^^"),
        "{err}"
    );

    let o = augur(&[
        "parse",
        "--prop",
        "P=? [ F \"a\" ]",
        "--prop",
        "P>=0.5 [ a U ]",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).is_empty(),
        "nothing is printed when an input fails"
    );
    let err = stderr(&o);
    assert!(err.contains("--> --prop #2:1:14"), "{err}");
    assert!(err.contains("expected"), "{err}");
}

#[test]
fn bad_file_exits_1_with_line_column_and_caret() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.props");
    std::fs::write(&path, "P=? [ F s=2 ]\n\nS=? [ F \"up\" ]\n").unwrap();
    let o = augur(&["parse", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("--> {}:3:7", path.display())),
        "{err}"
    );
    assert!(err.contains("S[...] takes a state formula"), "{err}");
    assert!(err.contains("3 | S=? [ F \"up\" ]\n  |       ^"), "{err}");

    let o = augur(&["parse", dir.path().join("missing.props").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot read"));

    let o = augur(&["parse"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("nothing to parse"));
}

#[test]
fn example_property_files_parse() {
    // Every properties file shipped in models/ parses, and its canonical form parses again.
    let dir = util::root().join("models");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("props") {
            continue;
        }
        seen += 1;
        let o = augur(&["parse", path.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            stderr(&o)
        );
        let text = stdout(&o);
        assert!(!text.is_empty(), "{}", path.display());
        let file = augur_pctl::parse_properties(&text).unwrap_or_else(|e| {
            panic!(
                "{}: {}",
                path.display(),
                e.diagnostic(&augur_source::SourceFile::new("output", text.as_str()))
            )
        });
        assert_eq!(file.properties.len(), text.lines().count());
    }
    assert!(seen > 0, "no .props files in {}", dir.display());
}
