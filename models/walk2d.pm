dtmc
const int N = 700;
module walker
  x : [0..N] init floor(N/2);
  y : [0..N] init floor(N/2);
  [move] x>0 & x<N & y>0 & y<N -> 0.3 : (x'=x+1) + 0.22 : (x'=x-1) + 0.26 : (y'=y+1) + 0.22 : (y'=y-1);
  [stay] x=0 | x=N | y=0 | y=N -> true;
endmodule
label "exit_east" = x=N;
