// A sender with three tries over a lossy channel, parametric (augur check --param p,q;
// docs/parametric.md): each try is lost with probability p; a message that arrives makes the
// receiver crash with probability q.
dtmc

const double p; // a try is lost
const double q; // the receiver crashes on a message

module sender
  tries : [0..3] init 0;
  // 0 sending, 1 delivered, 2 given up, 3 receiver crashed
  s : [0..3] init 0;
  [] s=0 & tries<3 -> (1-p)*(1-q) : (s'=1) + p : (tries'=tries+1) + (1-p)*q : (s'=3);
  [] s=0 & tries=3 -> (s'=2);
  [] s>0 -> true;
endmodule

label "delivered" = s=1;
label "failed" = s=2 | s=3;

rewards "tries"
  s=0 & tries<3 : 1;
endrewards
