#!/usr/bin/env bash
# The twins run of the generated H100 campaign (docs/hardware-results.md):
# run in the root of a checkout whose .hwstage/hw2 is the harness.
# Twin tests with identical role-function SASS, one in a cluster launch
# (a .cluster-scoped instruction), one not: SECS seconds each.
set -u
secs=$1
H=/tmp/hw2; R=/tmp/res2
rm -rf $H $R; cp -r .hwstage/hw2 $H; mkdir -p $R/h
t0=$(date +%s); JOBS=16 $H/build.sh > $R/build.txt 2>&1; echo "build: $(( $(date +%s)-t0 )) s"
(cd $H && tar czf $OUT/sass2.tar.gz bundle*.sass)
t0=$(date +%s)
timeout -s KILL 300 $H/bundle00 --out $R/h --seconds $secs --seed 2 2>&1 | tee $R/run.txt
echo "run: $(( $(date +%s)-t0 )) s"
tar czf $OUT/res2.tar.gz -C /tmp res2
