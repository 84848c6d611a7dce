dtmc

module m
  x : [0..2] init 0;
  [] x<2 -> 0.5:(x'=x+1) + ;
endmodule
