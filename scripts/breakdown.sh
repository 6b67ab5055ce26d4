b=build/gpu/gcvm
for gc in gpu-bfs gpu-dfs; do for plan in marksweep generational; do
$b run workloads/gcbench.gasm --gc=$gc --device=cuda:0 --plan=$plan --stats=json -- 0 2>/tmp/s.json >/dev/null
printf "%s %s:" $gc $plan
for k in sync_full sync_bytes sync_ms root_upload_ms kernel_ms mark_download_ms fallback_ms mark_ms sweep_ms pause_ms; do
  v=$(grep -o "\"$k\":[0-9.e+-]*" /tmp/s.json | cut -d: -f2 | head -n -1 | awk '{s+=$1} END {printf "%.1f", s}')
  [ $k = pause_ms ] || [ $k = mark_ms ] || [ $k = sweep_ms ] || v=$(grep -o "\"$k\":[0-9.e+-]*" /tmp/s.json | cut -d: -f2 | awk '{s+=$1} END {printf "%.1f", s}')
  printf " %s=%s" $k $v
done; echo; done; done
