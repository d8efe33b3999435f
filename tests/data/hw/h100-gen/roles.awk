# The litmus role functions (ptxmc_tNNNN_Pn) of `cuobjdump -sass` dumps, one
# instruction a line, without encodings, runs of blanks, or the NOP padding
# after a function's last instruction.
function flush_pad() { for (i = 0; i < npad; i++) print pad[i]; npad = 0 }
FNR == 1 { npad = 0; print "// " FILENAME }
/Function :/ { npad = 0; keep = ($3 ~ /^ptxmc_t/); if (keep) print "\tFunction : " $3; next }
keep && /^ *\/\*[0-9a-f]+\*\// {
  sub(/ *\/\* 0x.*$/, ""); gsub(/ +/, " "); sub(/^ /, "  ")
  if ($2 == "NOP;") { pad[npad++] = $0; next }
  flush_pad(); print
}
