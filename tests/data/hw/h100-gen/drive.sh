#!/usr/bin/env bash
# The device side of the generated H100 campaign (docs/hardware-results.md):
#   drive.sh SECS STOP_S, run in the root of a checkout whose .hwstage/hw is
#   the harness (`ptxmc hw gen ... -o .hwstage/hw`). Builds the harness once into
#   /tmp/hw (kept while the machine stays warm), runs bundles in order, starting
#   none after STOP_S seconds, and packs everything into $OUT.
set -u
secs=$1; stop=$2
t0=$(date +%s)
st=$PWD/.hwstage
H=/tmp/hw; R=/tmp/res
mkdir -p $R/h
if [ ! -f $H/.built ]; then
  rm -rf $H; cp -r $st/hw $H
  b0=$(date +%s)
  JOBS=16 $H/build.sh > $R/build.txt 2>&1
  echo "build: $(( $(date +%s)-b0 )) s" | tee -a $R/times.txt
  grep -c '^built' $R/build.txt
  touch $H/.built
  (cd $H && tar czf $OUT/sass.tar.gz bundle*.sass bundle*.log)
fi
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version; } > $R/env.txt
for src in $H/bundle*.cu; do
  b=${src%.cu}; n=$(basename $b)
  [ -f $R/$n.done ] && continue
  if [ $(( $(date +%s) - t0 )) -ge $stop ]; then echo "stopped before $n"; break; fi
  r0=$(date +%s)
  for try in 1 2 3 4 5 6 7 8; do
    timeout -s KILL 90 $b --out $R/h --seconds $secs --resume --seed 1 >> $R/run.txt 2>&1 && break
    echo "$n failed (try $try)" | tee -a $R/times.txt
  done
  echo "$n: $(( $(date +%s)-r0 )) s" >> $R/times.txt
  touch $R/$n.done
done
echo "done: $(ls $R/*.done | wc -l) bundles, $(ls $R/h/*.json | wc -l) histograms, $(ls $R/h/ | grep -c failed) failed, elapsed $(( $(date +%s)-t0 )) s"
tail -3 $R/times.txt
tar czf $OUT/res.tar.gz -C /tmp res
