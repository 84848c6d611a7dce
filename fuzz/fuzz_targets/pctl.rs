//! PCTL properties files: parse, resolve against a small model with labels, rewards and
//! valuations, and check (within a time limit).
#![no_main]
use augur_check::{CheckOptions, Constants, Format, Model, Properties, CheckSession};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const MODEL: &str = "dtmc
const int N = 3;
formula near = x >= N - 1;
module m
  x : [0..N] init 0;
  b : bool init false;
  [] x < N -> 0.6 : (x'=x+1) + 0.4 : (x'=max(0, x-1)) & (b'=!b);
  [] x = N -> true;
endmodule
rewards \"steps\" x < N : 1; endrewards
rewards \"b\" b : 2.5; [] x=0 : 1; endrewards
label \"goal\" = x = N;
";

fn model() -> &'static Model {
    static M: OnceLock<Model> = OnceLock::new();
    M.get_or_init(|| {
        Model::from_text("m.pm", MODEL, Format::Prism, &augur_fuzz::load_options())
            .expect("the fixed model loads")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let props = match Properties::parse_file("p.props", text) {
        Ok(p) => p,
        Err(e) => {
            augur_fuzz::assert_no_debug_text(&e.diagnostic().to_string(), text);
            return;
        }
    };
    let compiled = match props.compile(model(), &Constants::default()) {
        Ok(c) => c,
        Err(e) => {
            augur_fuzz::assert_no_debug_text(&e.diagnostic().to_string(), text);
            return;
        }
    };
    let options = CheckOptions {
        limits: augur_fuzz::load_options().limits,
        ..CheckOptions::default()
    };
    let mut session = CheckSession::new(model(), options);
    for r in session.check_all(&compiled) {
        if let Err(e) = r {
            augur_fuzz::assert_no_debug_text(&e.diagnostic().to_string(), text);
        }
    }
});
