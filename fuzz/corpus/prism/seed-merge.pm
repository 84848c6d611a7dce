// Transition rewards of both kinds ([] / [a]) with state rewards, and merging of two choices
// that lead to the same successor.
//
// In s=0 two choices are enabled, [a] and [b], each taken with probability 1/2: [a] goes to
// s=1 or s=2 with 1/2 each, [b] goes to s=1. The successor s=1 is reached by both (1/4 + 1/2
// = 3/4): its transition reward is the probability-weighted mean (1/4*4 + 1/2*10)/(3/4) = 8,
// so the expected one-step reward stays 1/2*4 + 1/2*10 = 7.
dtmc

module m
	s : [0..2] init 0;
	[a] s=0 -> 0.5 : (s'=1) + 0.5 : (s'=2);
	[b] s=0 -> (s'=1);
	[] s>0 -> true;
endmodule

rewards "cost"
	s=0 : 1;
	[a] s=0 : 4;
	[b] s=0 : 10;
	[] s=1 : 100;
endrewards
