//! Property tests: random DTMCs round-trip through every format; every built or read row sums
//! to 1.

use crate::explicit::tests::assert_same;
use crate::*;
use augur_dtmc::*;
use augur_expr::{Type, Value};
use proptest::prelude::*;
use std::io::Cursor;
use std::path::Path;

#[derive(Debug, Clone)]
struct Spec {
    n: usize,
    rows: Vec<Vec<(u32, u32)>>, // (target, weight); empty = deadlock (fixed)
    initial: Vec<u32>,
    labels: Vec<Vec<u32>>,
    state_rewards: Option<Vec<u32>>,
    trans_rewards: Option<Vec<u32>>,
    named: bool,
    valuations: bool,
}

fn spec() -> impl Strategy<Value = Spec> {
    (1usize..25).prop_flat_map(|n| {
        let row = prop::collection::vec((0..n as u32, 1u32..20), 0..5);
        (
            Just(n),
            prop::collection::vec(row, n),
            prop::collection::vec(0..n as u32, 1..3),
            prop::collection::vec(prop::collection::vec(0..n as u32, 0..6), 0..4),
            prop::option::of(prop::collection::vec(0u32..10, n)),
            prop::option::of(prop::collection::vec(0u32..10, 0..40)),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(n, rows, initial, labels, state_rewards, trans_rewards, named, valuations)| {
                    Spec {
                        n,
                        rows,
                        initial,
                        labels,
                        state_rewards,
                        trans_rewards,
                        named,
                        valuations,
                    }
                },
            )
    })
}

fn build(spec: &Spec) -> (Dtmc, BuildReport) {
    let n = spec.n;
    let mut b = DtmcBuilder::new(n);
    b.fix_deadlocks(true);
    for (s, row) in spec.rows.iter().enumerate() {
        let total: u32 = row.iter().map(|r| r.1).sum();
        for &(t, w) in row {
            // Duplicated targets are merged by the builder.
            b.add_transition(s as u32, t, f64::from(w) / f64::from(total))
                .unwrap();
        }
    }
    for &s in &spec.initial {
        b.add_initial(s).unwrap();
    }
    for (i, l) in spec.labels.iter().enumerate() {
        let name = format!("l{i}");
        b.label_index(&name);
        for &s in l {
            b.add_label_state(&name, s).unwrap();
        }
    }
    if spec.state_rewards.is_some() || spec.trans_rewards.is_some() {
        let r = b.add_reward_structure(spec.named.then_some("rew"));
        if let Some(v) = &spec.state_rewards {
            b.declare_state_rewards(r).unwrap();
            for (s, &x) in v.iter().enumerate() {
                b.add_state_reward(r, s as u32, f64::from(x) / 3.0).unwrap();
            }
        }
        if let Some(v) = &spec.trans_rewards {
            b.declare_transition_rewards(r).unwrap();
            // Rewards on existing transitions only (cycled over the rows' entries).
            let all: Vec<(u32, u32)> = spec
                .rows
                .iter()
                .enumerate()
                .flat_map(|(s, row)| row.iter().map(move |&(t, _)| (s as u32, t)))
                .collect();
            if !all.is_empty() {
                for (i, &x) in v.iter().enumerate() {
                    let (s, t) = all[i % all.len()];
                    b.add_transition_reward(r, s, t, f64::from(x) * 0.7)
                        .unwrap();
                }
            }
        }
    }
    if spec.valuations {
        b.set_valuations(Valuations::new(
            vec!["x".into(), "b".into(), "d".into()],
            vec![Type::Int, Type::Bool, Type::Double],
            (0..n)
                .flat_map(|s| {
                    [
                        Value::Int(s as i64 - 3),
                        Value::Bool(s % 3 == 0),
                        Value::Double(s as f64 / 7.0),
                    ]
                })
                .collect(),
        ));
    }
    b.build().unwrap()
}

fn rows_sum_to_one(d: &Dtmc) {
    d.validate().unwrap();
    for s in 0..d.num_states() {
        let sum: f64 = d.successors(s).map(|(_, p)| p).sum();
        assert!((sum - 1.0).abs() <= 1e-9, "row {s} sums to {sum}");
    }
}

fn read_tra_strings(files: &[(String, Vec<u8>)]) -> Dtmc {
    let get = |ext: &str| files.iter().find(|(e, _)| e == ext).map(|(_, b)| b.clone());
    let tra = get("tra").unwrap();
    let mut t = Cursor::new(tra);
    let mut rs: Vec<Option<Cursor<Vec<u8>>>> = ["lab", "srew", "trew", "sta"]
        .iter()
        .map(|e| get(e).map(Cursor::new))
        .collect();
    let mut it = rs.iter_mut();
    let mut next = |name: &'static str| {
        it.next()
            .and_then(|r| r.as_mut())
            .map(|r| (Path::new(name), r as &mut dyn std::io::BufRead))
    };
    let lab = next("m.lab");
    let srew = next("m.srew");
    let trew = next("m.trew");
    let sta = next("m.sta");
    explicit::read_prism_explicit_from(
        explicit::ExplicitInputs {
            tra: (Path::new("m.tra"), &mut t),
            lab,
            srew,
            trew,
            sta,
        },
        &ReadOptions::default(),
    )
    .unwrap()
    .0
}

/// Parses the commands of the PRISM export back into (src, dst, prob) triples (a deadlock
/// state, written without a command, is the self-loop a reader gives it).
fn parse_prism_commands(text: &str) -> Vec<(u32, u32, f64)> {
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.trim().strip_prefix("// _s=") {
            if let Some(s) = rest.strip_suffix(": a deadlock state (no command)") {
                let s: u32 = s.parse().unwrap();
                out.push((s, s, 1.0));
                continue;
            }
        }
        let Some(rest) = line.trim().strip_prefix("[] _s=") else {
            continue;
        };
        let Some((src, updates)) = rest.split_once(" -> ") else {
            continue;
        };
        let src: u32 = src.parse().unwrap();
        for u in updates.trim_end_matches(';').split(" + ") {
            let (p, t) = u.split_once(":(_s'=").unwrap();
            out.push((
                src,
                t.trim_end_matches(')').parse().unwrap(),
                p.parse().unwrap(),
            ));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_format_round_trips(spec in spec()) {
        let (d, report) = build(&spec);
        rows_sum_to_one(&d);
        let expected_deadlocks: Vec<u32> = spec
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_empty())
            .map(|(s, _)| s as u32)
            .collect();
        prop_assert_eq!(&report.deadlocks_fixed, &expected_deadlocks);

        // JSON: everything.
        let mut buf = Vec::new();
        write_model(&d, Format::Json, &mut buf).unwrap();
        let (j, _) = json::read_json(Cursor::new(buf), Path::new("m.json"), &ReadOptions::default()).unwrap();
        rows_sum_to_one(&j);
        assert_same(&d, &j);

        // PRISM explicit: everything (one reward structure).
        let mut files = Vec::new();
        let mut w = Vec::new();
        explicit::write_tra(&d, &mut w).unwrap();
        files.push(("tra".to_string(), std::mem::take(&mut w)));
        explicit::write_lab(&d, &mut w).unwrap();
        files.push(("lab".to_string(), std::mem::take(&mut w)));
        if let Some(v) = &d.valuations {
            explicit::write_sta(v, &mut w).unwrap();
            files.push(("sta".to_string(), std::mem::take(&mut w)));
        }
        if let Some(r) = d.rewards.first() {
            if r.state.is_some() {
                explicit::write_srew(&d, r, &mut w).unwrap();
                files.push(("srew".to_string(), std::mem::take(&mut w)));
            }
            if r.transition.is_some() {
                explicit::write_trew(&d, r, &mut w).unwrap();
                files.push(("trew".to_string(), std::mem::take(&mut w)));
            }
        }
        let t = read_tra_strings(&files);
        rows_sum_to_one(&t);
        assert_same(&d, &t);

        // DRN: structure, labels and the expected one-step rewards (no valuations in DRN).
        let mut buf = Vec::new();
        write_model(&d, Format::Drn, &mut buf).unwrap();
        let (r, _) = drn::read_drn(Cursor::new(buf), Path::new("m.drn"), &ReadOptions::default()).unwrap();
        rows_sum_to_one(&r);
        prop_assert_eq!(&r.matrix, &d.matrix);
        prop_assert_eq!(&r.initial, &d.initial);
        prop_assert_eq!(&r.labels, &d.labels);
        prop_assert_eq!(r.rewards.len(), d.rewards.len());
        for (a, b) in d.rewards.iter().zip(&r.rewards) {
            let zeros = vec![0.0; d.num_states()];
            prop_assert_eq!(a.state.as_deref().unwrap_or(&zeros), b.state.as_deref().unwrap_or(&zeros));
            for (x, y) in d.expected_one_step_rewards(a).iter().zip(r.expected_one_step_rewards(b)) {
                prop_assert!((x - y).abs() <= 1e-12 * x.abs().max(1.0), "{} vs {}", x, y);
            }
        }

        // PRISM language (by state index: without valuations): the commands give back
        // exactly the same matrix.
        let mut by_index = d.clone();
        by_index.valuations = None;
        let mut buf = Vec::new();
        write_model(&by_index, Format::Prism, &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let triples = parse_prism_commands(&text);
        let mine: Vec<(u32, u32, f64)> = (0..d.num_states())
            .flat_map(|s| d.successors(s).map(move |(t, p)| (s as u32, t, p)))
            .collect();
        prop_assert_eq!(triples, mine);

        // DOT: one edge line per transition.
        let mut buf = Vec::new();
        write_model(&d, Format::Dot, &mut buf).unwrap();
        let dot = String::from_utf8(buf).unwrap();
        prop_assert_eq!(dot.matches("\"];\n").count() >= d.num_transitions(), true);
    }

    #[test]
    fn transpose_is_the_transpose(spec in spec()) {
        let (d, _) = build(&spec);
        let t = d.transpose();
        let tt = transpose_csr(&t);
        prop_assert_eq!(&tt, &d.matrix);
        for s in 0..d.num_states() {
            for (x, p) in d.successors(s) {
                let row = t.outer_view(x as usize).unwrap();
                prop_assert_eq!(row.get(s), Some(&p));
            }
        }
    }
}
