// A four-state agent (docs/robust.md, "Learning with a guarantee"): from the start it
// works (0.7), retries (0.2) or does something unsafe (0.1); while working it finishes (0.6),
// goes back to the start (0.3) or does something unsafe (0.1). Unsafe and done are final.
// P(F "unsafe") from the start solves x0 = 0.1 + 0.2·x0 + 0.7·x1, x1 = 0.1 + 0.3·x0:
// x0 = 17/59 = 0.2881355...
dtmc

module agent
  work : bool init false;
  unsafe : bool init false;
  done : bool init false;
  [] !work & !unsafe & !done -> 0.2 : true + 0.7 : (work'=true) + 0.1 : (unsafe'=true);
  [] work -> 0.3 : (work'=false) + 0.1 : (work'=false) & (unsafe'=true)
          + 0.6 : (work'=false) & (done'=true);
  [] unsafe | done -> true;
endmodule

label "unsafe" = unsafe;
label "done" = done;
