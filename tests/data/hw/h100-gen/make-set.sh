#!/usr/bin/env bash
# Regenerate the litmus tests of the generated H100 campaign
# (docs/hardware-results.md, "Generated campaign") into DIR:
#   tests/data/hw/h100-gen/make-set.sh PTXMC DIR
# Deterministic: the same ptxmc gives the same files (tests/hw.rs checks
# that the recorded set is exactly what this script writes).
set -eu
ptxmc=${1:?usage: make-set.sh PTXMC DIR}
out=${2:?usage: make-set.sh PTXMC DIR}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
# 1. Every critical and coherence cycle of up to 4 edges of the default
#    vocabulary: two threads; .cta/.cluster/.gpu scopes; same CTA, same
#    cluster, different clusters; release/acquire, fence.acq_rel, fence.sc.
"$ptxmc" gen --size 4 --no-classify -o "$out/default" > /dev/null
# 2. The same shapes at .sys scope (sys.vocab).
"$ptxmc" gen --size 4 --vocab "$here/sys.vocab" --no-classify -o "$out/sys" > /dev/null
# 3. Aliases: every cycle of up to 3 edges (coherence through two virtual
#    addresses) and a quarter (shard 1/4) of those of 4 edges.
"$ptxmc" gen --size 3 --vocab alias --no-classify -o "$out/alias" > /dev/null
"$ptxmc" gen --size 4 --vocab alias --shard 1/4 --no-classify -o "$tmp/alias4" > /dev/null
for f in "$tmp"/alias4/*.litmus; do
  # Two tests of the alias vocabulary use no alias; they are in part 1.
  [ -e "$out/default/$(basename "$f")" ] || cp -n "$f" "$out/alias/"
done
# 4. Three and four threads: the named families (WRC, RWC, ISA2, IRIW, 3.SB,
#    3.LB, 3.2W) among one hundredth (shard 1/100) of the default cycles of
#    up to 6 edges.
"$ptxmc" gen --size 6 --shard 1/100 --no-classify -o "$tmp/six" > /dev/null
mkdir -p "$out/threads3-4"
for f in "$tmp"/six/*.litmus; do
  case $(basename "$f") in
    WRC+* | RWC+* | ISA2+* | IRIW+* | 3.SB+* | 3.LB+* | 3.2W+*) cp "$f" "$out/threads3-4/" ;;
  esac
done
