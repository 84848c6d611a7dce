dtmc

module m
  x : [0..3] init 0;
  [step] x<3 -> (x+1)/2:(x'=x+1) + (1-(x+1)/2):(x'=x);
  [] x=3 -> true;
endmodule
