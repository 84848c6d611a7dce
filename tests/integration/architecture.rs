//! ARCHITECTURE.md's dependency table says which workspace crates each crate uses; this test
//! reads every `Cargo.toml` and compares, so that the table cannot drift from the code (a
//! review found the crate graph missing edges).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The `augur-*` names in the `[dependencies]` section of a manifest (dev-dependencies and
/// build-dependencies are other sections).
fn workspace_dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = fs::read_to_string(manifest).expect("reading a Cargo.toml");
    let mut in_deps = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
        } else if in_deps && line.starts_with("augur-") {
            let name = line
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .next()
                .unwrap_or_default();
            out.insert(name.to_string());
        }
    }
    out
}

/// The package name of a manifest (`name = "augur-check"`).
fn package_name(manifest: &Path) -> String {
    let text = fs::read_to_string(manifest).expect("reading a Cargo.toml");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("name ="))
        .expect("a package name");
    line.split('"').nth(1).expect("a quoted name").to_string()
}

/// The dependency table's rows: `| \`augur-x\` | \`augur-a\`, \`augur-b\` |` → x → {a, b}.
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    table("| crate | uses", |w| w.starts_with("augur-"))
}

/// The rows of ARCHITECTURE.md's table whose header starts with `header`: the first cell's
/// crate → the back-quoted names of the second cell that `keep` accepts.
fn table(header: &str, keep: fn(&str) -> bool) -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = fs::read_to_string(root.join("ARCHITECTURE.md")).expect("reading ARCHITECTURE.md");
    let mut rows = BTreeMap::new();
    let mut in_table = false;
    for line in text.lines() {
        if line.starts_with(header) {
            in_table = true;
            continue;
        }
        if !in_table || line.starts_with("|---") {
            continue;
        }
        let Some(rest) = line.strip_prefix("| `") else {
            if rows.is_empty() {
                continue;
            }
            break;
        };
        let (name, uses) = rest.split_once("` |").expect("a row `| `crate` | uses |`");
        let name = name
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        let uses = uses
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|w| keep(w))
            .map(str::to_string)
            .collect();
        rows.insert(name, uses);
    }
    rows
}

#[test]
fn the_dependency_table_matches_the_manifests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut actual = BTreeMap::new();
    actual.insert(
        package_name(&root.join("Cargo.toml")),
        workspace_dependencies(&root.join("Cargo.toml")),
    );
    for entry in fs::read_dir(root.join("crates")).expect("crates/") {
        let manifest = entry.expect("a crate folder").path().join("Cargo.toml");
        if manifest.exists() {
            actual.insert(package_name(&manifest), workspace_dependencies(&manifest));
        }
    }
    assert!(actual.len() > 10, "{actual:?}");
    assert_eq!(
        documented(),
        actual,
        "ARCHITECTURE.md's dependency table differs from the Cargo.toml files"
    );
}

/// `cargo metadata`'s resolve graph, read once per test binary.
fn metadata() -> &'static serde_json::Value {
    static META: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    META.get_or_init(|| {
        // The host's graph only: offline, `cargo metadata` without a platform filter needs
        // the manifests of every platform's crates (`android_system_properties`, ...), which a
        // fresh machine's build never downloads.
        let version = std::process::Command::new(env!("CARGO"))
            .arg("-vV")
            .output()
            .expect("running cargo -vV");
        let version = String::from_utf8_lossy(&version.stdout);
        let host = version
            .lines()
            .find_map(|l| l.strip_prefix("host: "))
            .expect("cargo -vV names the host");
        let out = std::process::Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--offline"])
            .args(["--filter-platform", host])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("running cargo metadata");
        assert!(
            out.status.success(),
            "cargo metadata: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("its JSON")
    })
}

/// The crates `cargo metadata` says `package` needs to build (its normal and build
/// dependencies, transitively; dev-dependencies only build its tests).
fn build_closure(package: &str) -> BTreeSet<String> {
    let meta = metadata();
    let name_of = |id: &str| -> String {
        meta["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id)
            .map(|p| p["name"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    let nodes = meta["resolve"]["nodes"]
        .as_array()
        .expect("a resolve graph");
    let start = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == package)
        .map(|p| p["id"].as_str().unwrap().to_string())
        .unwrap_or_else(|| panic!("no package {package}"));
    let mut seen = BTreeSet::from([start.clone()]);
    let mut todo = vec![start];
    while let Some(id) = todo.pop() {
        let node = nodes
            .iter()
            .find(|n| n["id"] == id.as_str())
            .expect("a node");
        for dep in node["deps"].as_array().unwrap() {
            let building = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].is_null() || k["kind"] == "build");
            let pkg = dep["pkg"].as_str().unwrap().to_string();
            if building && seen.insert(pkg.clone()) {
                todo.push(pkg);
            }
        }
    }
    seen.iter().map(|id| name_of(id)).collect()
}

/// ARCHITECTURE.md's "never depends on" rules hold for every build path, and the table names
/// every library crate of the workspace's lower layers it promises something about.
#[test]
fn no_crate_reaches_what_it_must_never_depend_on() {
    let rules = table("| crate | never depends on", |_| true);
    assert!(rules.len() >= 10, "{rules:?}");
    let mut broken = Vec::new();
    for (krate, never) in &rules {
        let closure = build_closure(krate);
        for name in never {
            assert!(
                metadata()["packages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["name"] == name.as_str()),
                "ARCHITECTURE.md names `{name}`, which is no package of the build"
            );
            if closure.contains(name) {
                broken.push(format!("{krate} reaches {name}"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "ARCHITECTURE.md's rules broken: {broken:?}"
    );
    // The rules can fail: the offline monitor does reach the checker, the learner `rand`.
    assert!(build_closure("augur-monitor").contains("augur-check"));
    assert!(build_closure("augur-learn").contains("rand"));
}

/// The gate runs inside every agent call: building it (`cargo build -p augur-gate`) compiles
/// no checker, solver, model reader, learner or plotting crate (ARCHITECTURE.md's crate map).
#[test]
fn the_gate_builds_without_the_checker() {
    let closure = build_closure("augur-gate");
    let allowed_augur = [
        "augur-gate",
        "augur-source",
        "augur-expr",
        "augur-abstraction",
    ];
    let forbidden: Vec<&String> = closure
        .iter()
        .filter(|n| {
            (n.starts_with("augur") && !allowed_augur.contains(&n.as_str()))
                || n.starts_with("plotters")
                || ["sprs", "nalgebra", "faer", "petgraph"].contains(&n.as_str())
        })
        .collect();
    assert!(
        forbidden.is_empty(),
        "augur-gate's build closure reaches {forbidden:?}"
    );
    // The test can fail: the offline monitor does reach the checker.
    assert!(build_closure("augur-monitor").contains("augur-check"));
}

/// The crates whose integration tests are one binary (`autotests = false`, issue 42, item 4)
/// build only the test files a manifest names: a new file under `crates/*/tests/` must be a
/// test target of its own or a module of one (`mod name;` in its `main.rs`), never a file
/// that no test build reads.
#[test]
fn every_test_file_is_built() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut built = BTreeSet::new();
    // The workspace's own packages (a registry package has a `source`; its test files are
    // not shipped).
    let members = metadata()["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|p| p["source"].is_null());
    for package in members {
        for target in package["targets"].as_array().expect("targets") {
            let kinds = target["kind"].as_array().expect("kind");
            if !kinds.iter().any(|k| k == "test") {
                continue;
            }
            let src = Path::new(target["src_path"].as_str().expect("src_path")).to_path_buf();
            let text = fs::read_to_string(&src).expect("reading a test target");
            for line in text.lines() {
                if let Some(name) = line
                    .trim()
                    .strip_prefix("mod ")
                    .and_then(|r| r.strip_suffix(';'))
                {
                    built.insert(src.with_file_name(format!("{name}.rs")));
                }
            }
            built.insert(src);
        }
    }
    let mut unbuilt = Vec::new();
    for dir in fs::read_dir(root.join("crates")).expect("crates/") {
        let tests = dir.expect("an entry").path().join("tests");
        let Ok(files) = fs::read_dir(&tests) else {
            continue;
        };
        for f in files {
            let f = f.expect("an entry").path();
            if f.extension().is_some_and(|e| e == "rs") && !built.contains(&f) {
                unbuilt.push(f);
            }
        }
    }
    assert!(
        unbuilt.is_empty(),
        "test files no test target builds (add `mod NAME;` to the crate's tests/main.rs, or a \
         [[test]] to its Cargo.toml): {unbuilt:?}"
    );
    // The test can fail: a module of a merged binary counts through its `mod` line only.
    assert!(built.contains(&root.join("crates/gate/tests/adaptive.rs")));
}

/// The line count ARCHITECTURE.md's rule reads: a file's lines before its inline test module
/// (`#[cfg(test)]` then `mod name {`), or all of them.
fn product_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .windows(2)
        .position(|w| {
            w[0].trim() == "#[cfg(test)]"
                && w[1]
                    .trim_start()
                    .trim_start_matches("pub(crate) ")
                    .starts_with("mod ")
                && w[1].trim_end().ends_with('{')
        })
        .unwrap_or(lines.len())
}

/// Every `.rs` file under `dir`, with the files that are test modules (`#[cfg(test)] mod
/// name;` in the file that declares them) set apart.
fn source_files(
    dir: &Path,
    files: &mut Vec<std::path::PathBuf>,
    tests: &mut BTreeSet<std::path::PathBuf>,
) {
    for entry in fs::read_dir(dir).expect("a source folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            source_files(&path, files, tests);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = fs::read_to_string(&path).expect("a source file");
        let lines: Vec<&str> = text.lines().collect();
        // `mod c;` in `a/b.rs` is `a/b/c.rs`; in `a/mod.rs` or `a/lib.rs`, `a/c.rs`.
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let base = if matches!(stem, "mod" | "lib" | "main") {
            path.parent().expect("a folder").to_path_buf()
        } else {
            path.with_extension("")
        };
        for w in lines.windows(2) {
            let decl = w[1].trim().trim_start_matches("pub(crate) ");
            if w[0].trim() == "#[cfg(test)]" {
                if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                    tests.insert(base.join(format!("{name}.rs")));
                    tests.insert(base.join(name).join("mod.rs"));
                }
            }
        }
        files.push(path);
    }
}

/// ARCHITECTURE.md's rule (issue 37): no product file over 1,200 lines, inline test modules
/// and test-only files aside.
#[test]
fn no_product_file_is_over_1200_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut files, mut tests) = (Vec::new(), BTreeSet::new());
    for dir in fs::read_dir(root.join("crates")).expect("crates/") {
        let src = dir.expect("an entry").path().join("src");
        if src.is_dir() {
            source_files(&src, &mut files, &mut tests);
        }
    }
    let mut long: Vec<(usize, String)> = files
        .iter()
        .filter(|f| !tests.contains(*f))
        .filter_map(|f| {
            let n = product_lines(&fs::read_to_string(f).expect("a source file"));
            (n > 1200).then(|| (n, f.strip_prefix(root).unwrap_or(f).display().to_string()))
        })
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "product files over 1,200 lines (split them by job): {long:?}"
    );
    // The test can fail: the test-only files it sets apart are long ones.
    assert!(tests.contains(&root.join("crates/pctl/src/tests.rs")));
    let long_test = fs::read_to_string(root.join("crates/pctl/src/tests.rs")).expect("pctl tests");
    assert!(
        product_lines(&long_test) > 1200,
        "the exemption is exercised"
    );
    assert_eq!(product_lines("a\n#[cfg(test)]\nmod tests {\n}\n"), 1);
}

/// `scripts/run-tests` (what `scripts/test` runs the test binaries with) reports every test
/// binary that fails, by exit code or by signal, after running the others: a runner that
/// missed one would let CI pass on a failing test.
#[test]
fn the_test_runner_reports_every_failing_binary() {
    let script = r#"
import importlib.machinery, importlib.util, os, sys
loader = importlib.machinery.SourceFileLoader("run_tests", sys.argv[1])
spec = importlib.util.spec_from_loader("run_tests", loader)
runner = importlib.util.module_from_spec(spec)
loader.exec_module(runner)
def job(label, shell, cwd):
    env = dict(os.environ, CARGO_PKG_NAME=label)
    return {"name": label, "label": label, "cmd": ["sh", "-c", shell], "cwd": cwd, "env": env,
            "exe": "sh"}
failed = runner.run([
    job("passes", 'test "$(pwd)" = / && echo "ran in $(pwd) as $CARGO_PKG_NAME"', "/"),
    job("exits-3", "echo boom >&2; exit 3", "/"),
    job("segfaults", "kill -SEGV $$", "/"),
    job("passes-too", "true", "/"),
], 2)
print("failed:", sorted(j["label"] for j in failed))
"#;
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/run-tests"))
        .output()
        .expect("python3 runs (a requirement of the test command)");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("failed: ['exits-3', 'segfaults']"), "{text}");
    assert!(text.contains("ran in / as passes"), "{text}");
    assert!(
        text.contains("boom"),
        "the failing binary's output is shown: {text}"
    );
    assert!(text.contains("exits-3 (sh)  FAILED (exit 3)"), "{text}");
    assert!(text.contains("segfaults (sh)  FAILED (exit -11)"), "{text}");
}
