// Module renaming, formulas and several enabled choices.
//
// Three copies of one process (two by renaming). Each process with a<2 has an enabled
// unlabelled command; in a state where k processes are active, each of the k choices is taken
// with probability 1/k (PRISM's rule for DTMCs, reported as a warning), and the chosen
// process advances with probability 1/2. The state with all three at 2 is a deadlock.
dtmc

module p1
	a1 : [0..2] init 0;
	[] a1<2 -> 0.5 : (a1'=a1+1) + 0.5 : (a1'=a1);
endmodule

module p2 = p1 [a1=a2] endmodule
module p3 = p1 [a1=a3] endmodule

formula total = a1 + a2 + a3;

label "done" = total=6;

rewards "work"
	total<6 : 1;
endrewards
