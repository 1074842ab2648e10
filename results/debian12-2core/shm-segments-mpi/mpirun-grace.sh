#!/bin/bash
r=$OMPI_COMM_WORLD_RANK
log=/tmp/rlog.$r; : > $log
case $r in
0) sleep 1; echo "$(date +%s.%N) rank0 exits 3" >> $log; exit 3;;
1) trap 'echo "$(date +%s.%N) rank1 TERM, exits" >> '$log'; exit 0' TERM; while :; do sleep 0.01; done;;
2) trap 'echo "$(date +%s.%N) rank2 TERM, works 0.5 s" >> '$log'; sleep 0.5; echo "$(date +%s.%N) rank2 done" >> '$log'; exit 0' TERM; while :; do sleep 0.01; done;;
esac
