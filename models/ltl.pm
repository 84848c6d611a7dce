// The formulas of docs/ltl.md on one small chain (models/ltl.props, values derived by hand).
//
//   0 --1/2--> 1,  0 --1/4--> 4,  0 --1/4--> 6
//   1 --1/2--> 2,  1 --1/2--> 3
//   2 --1/2--> 1,  2 --1/4--> 3,  2 --1/4--> 7
//   3 and 7 absorbing; 4 and 5 a cycle (4 -> 5 -> 4)
//   6 --3/4--> 7,  6 --1/4--> 3
//
// From 1, the chain reaches 3 with probability x1 and 7 with 1 - x1, where
// x1 = 1/2 x2 + 1/2 and x2 = 1/2 x1 + 1/4 (x2 from 2): x1 = 5/6, x2 = 2/3.
// So from 0: P(reach 3) = 1/2 * 5/6 + 1/4 * 1/4 = 23/48, P(reach 7) = 1/2 * 1/6 + 1/4 * 3/4
// = 13/48, P(reach the cycle {4, 5}) = 1/4 (23/48 + 13/48 + 12/48 = 1).
dtmc

module chain
	s : [0..7] init 0;
	[] s=0 -> 1/2 : (s'=1) + 1/4 : (s'=4) + 1/4 : (s'=6);
	[] s=1 -> 1/2 : (s'=2) + 1/2 : (s'=3);
	[] s=2 -> 1/2 : (s'=1) + 1/4 : (s'=3) + 1/4 : (s'=7);
	[] s=3 -> (s'=3);
	[] s=4 -> (s'=5);
	[] s=5 -> (s'=4);
	[] s=6 -> 3/4 : (s'=7) + 1/4 : (s'=3);
	[] s=7 -> (s'=7);
endmodule

label "a" = s=0 | s=4 | s=6 | s=7;
label "b" = s=1 | s=2;
label "c" = s=3 | s=5;
label "goal" = s=7;
