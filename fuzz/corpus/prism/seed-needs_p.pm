dtmc

const double p;

module m
  x : [0..2] init 0;
  [] x<2 -> p:(x'=x+1) + (1-p):(x'=x);
  [] x=2 -> true;
endmodule
