// Synchronisation across three modules, an undefined constant, blocking, deadlocks.
// Check with: augur check models/sync3.pm models/sync3.props --const p=0.2
//
// Every module has `step` in its alphabet, so a step happens only when all three have an
// enabled [step] command: a and b flip their coins (a with probability p, b with 1/2) and c
// counts. c has no [step] command once n=3, which blocks `step` for everyone: the 4 states
// with n=3 are deadlocks (given a self-loop, with a warning).
dtmc

const double p; // probability that a's coin comes up in one step (from --const)

module a
	x : [0..1] init 0;
	[step] x=0 -> p : (x'=1) + (1-p) : (x'=0);
	[step] x=1 -> (x'=1);
endmodule

module b
	y : [0..1] init 0;
	[step] y=0 -> 0.5 : (y'=1) + 0.5 : (y'=0);
	[step] y=1 -> true;
endmodule

module c
	n : [0..3] init 0;
	[step] n<3 -> (n'=n+1);
endmodule

label "both" = x=1 & y=1;

rewards "steps"
	[step] true : 1;
endrewards
