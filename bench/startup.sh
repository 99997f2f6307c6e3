# The fixed cost of a run, for bench/run_overhead.sh (sourced; uses its $dc, $tmp, $darshan,
# $startup_runs): `datacrumbs run -- /bin/date +%s.%N`, whose output is the moment the command
# ran. Start-up: from launching datacrumbs to that moment; end: from that moment to datacrumbs'
# exit (the command's own exit, the detach, the drain and the summary). Interleaved with the
# untraced command, with it under Darshan, and with it started by `datacrumbs_wrap` while the
# daemon (README, Deployment) runs: loaded and verified once for every command; medians and
# ranges. Each datacrumbs config runs twice in a row: first loading its object (every keeper is
# stopped before it, since each configuration keeps its own: probe/keeper_sockets.h), then taking
# the object the first run kept (probe/object_keeper.h); the summary's `bpf_object` says which
# each run did.
# shellcheck shell=bash disable=SC2154,SC2034 # $tmp, $dc, $darshan, $failed: the sourcing script's

# startup_run CONFIG: one run; appends "CONFIG TOTAL START END" (seconds) to $tmp/startup.
startup_run() {
  local cmd=(/bin/date +%s.%N) dc_run=("$dc" run --summary "$tmp/st.json" -o "$tmp/st.pfw.gz")
  case "${1%-kept}" in
    untraced) ;;
    darshan) darshan_command "$darshan" "$tmp/dlog" 0 "${cmd[@]}" && cmd=("${darshan_cmd[@]}") ;;
    dc-default) cmd=("${dc_run[@]}" -- "${cmd[@]}") ;;
    dc-syscall) cmd=("${dc_run[@]}" --layers syscall -- "${cmd[@]}") ;;
    dc-profile) cmd=("${dc_run[@]}" --mode profile -- "${cmd[@]}") ;;
    dc-daemon) cmd=(env "${daemon_env[@]}" "$(dirname "$dc")/datacrumbs_wrap" "${cmd[@]}") ;;
  esac
  local t0 t1 ran want
  rm -f "$tmp/st.json"
  if [[ "$1" == dc-* && "$1" != *-kept && "$1" != dc-daemon ]]; then
    # No kept object of this config: its keeper goes, and the kernel frees that object first.
    pkill -x dc-keeper 2>/dev/null || true
    sleep 0.3
  fi
  t0="$EPOCHREALTIME"
  ran="$("${cmd[@]}" 2>"$tmp/st.err")" || { log "start-up run $1 failed: $(tail -n1 "$tmp/st.err")"; return 1; }
  t1="$EPOCHREALTIME"
  case "$1" in
    dc-daemon | untraced | darshan) want= ;;
    *-kept) want="taken from a keeper" ;;
    *) want=loaded ;;
  esac
  if [[ -n "$want" ]] && ! grep -q "\"bpf_object\": \"$want\"" "$tmp/st.json"; then
    log "start-up run $1: its BPF object was not $want"
    return 1
  fi
  echo "$1 $t0 $ran $t1" | awk '{printf "%s %.6f %.6f %.6f\n", $1, $4 - $2, $3 - $2, $4 - $3}' >>"$tmp/startup"
}

# The daemon for the dc-daemon config: root's processes, the default config, a private secret,
# run and trace directory. startup_daemon_stop ends it and checks its trace holds every command.
daemon_env=()
daemon_pid=
startup_daemon_start() {
  local d="$tmp/daemon" bin i
  bin="$(dirname "$dc")"
  mkdir -p "$d/run" "$d/traces"
  daemon_env=("DATACRUMBS_SECRET_FILE=$d/secret.key" "DATACRUMBS_RUN_DIR=$d/run" "DATACRUMBS_TRACE_DIR=$d/traces")
  env "${daemon_env[@]}" "$bin/datacrumbs_probe_configurator" --user 0 "$repo/etc/datacrumbs/configs/default.yaml" \
    "$d/probes.json.gz" >"$d/log" 2>&1 || { log "daemon: $(tail -n1 "$d/log")"; return 1; }
  env "${daemon_env[@]}" "$dc" "$d/probes.json.gz" startup >>"$d/log" 2>&1 &
  daemon_pid=$!
  for ((i = 0; i < 300; i++)); do
    [[ -f "$d/run/datacrumbs-startup.ready" ]] && return 0
    kill -0 "$daemon_pid" 2>/dev/null || break
    sleep 0.1
  done
  log "daemon: not ready: $(tail -n1 "$d/log")"
  startup_daemon_stop
  return 1
}

startup_daemon_stop() {
  [[ -n "$daemon_pid" ]] || return 0
  kill -TERM "$daemon_pid" 2>/dev/null || true
  wait "$daemon_pid" || { log "daemon: exited with failure: $(tail -n1 "$tmp/daemon/log")"; failed=1; }
  daemon_pid=
  local traced
  traced="$(find "$tmp/daemon/traces" -name '*.pfw.gz' -exec zcat {} + 2>/dev/null |
    grep -c '"name":"process_name".*"args":{[^}]*"name":"date"' || true)"
  daemon_traced="$traced"
}

startup_section() {
  local configs=(untraced dc-default dc-default-kept dc-syscall dc-syscall-kept dc-profile dc-profile-kept) i c
  [[ -z "$darshan" ]] || configs+=(darshan)
  : >"$tmp/startup"
  for ((i = 0; i < startup_runs; i++)); do
    for c in "${configs[@]}"; do startup_run "$c" || failed=1; done
  done
  # Then with the daemon attached (its hooks would tax the other configs' runs too).
  daemon_traced=
  if startup_daemon_start; then
    for ((i = 0; i < startup_runs; i++)); do startup_run dc-daemon || failed=1; done
    startup_daemon_stop
  else
    failed=1
  fi
  if [[ -n "$daemon_traced" && "$daemon_traced" != "$startup_runs" ]]; then
    log "daemon: its trace holds $daemon_traced processes named date, not $startup_runs"
    failed=1
  fi
  python3 - "$tmp/startup" "$startup_runs" "${daemon_traced:-}" <<'PY'
import statistics as st, sys
runs = {}
for line in open(sys.argv[1]):
    c, total, start, end = line.split()
    runs.setdefault(c, []).append((float(total), float(start), float(end)))
def cell(v, i):
    xs = [r[i] * 1000 for r in v]
    return f"{st.median(xs):.0f} ({min(xs):.0f}–{max(xs):.0f})"
print("## Fixed cost of a run (`bench/run_overhead.sh`)")
print()
print(f"`CMD run -- /bin/date +%s.%N`, {sys.argv[2]} interleaved runs per config, medians (range) in ms. "
      "Start-up: from launching the tool to the moment `date` printed; end: from that moment to the "
      "tool's exit (the command's exit, detaching, draining the ring, the summary).")
print()
print("| config | whole run | start-up | end |")
print("|---|---:|---:|---:|")
names = {"untraced": "`/bin/date` alone", "dc-default": "datacrumbs, default layers, object loaded",
         "dc-syscall": "datacrumbs `--layers syscall`, object loaded",
         "dc-profile": "datacrumbs `--mode profile`, object loaded",
         "dc-default-kept": "datacrumbs, default layers, kept object taken",
         "dc-syscall-kept": "datacrumbs `--layers syscall`, kept object taken",
         "dc-profile-kept": "datacrumbs `--mode profile`, kept object taken",
         "darshan": "Darshan (LD_PRELOAD)",
         "dc-daemon": "`datacrumbs_wrap`, the daemon running (default config)"}
for c, v in runs.items():
    print(f"| {names.get(c, c)} | {cell(v, 0)} | {cell(v, 1)} | {cell(v, 2)} |")
print()
d, k = runs.get("dc-default"), runs.get("dc-default-kept")
if d:
    total = st.median(r[0] for r in d)
    kept = st.median(r[0] for r in k) if k else None
    end = max(st.median(r[2] for r in runs[c]) for c in runs if c.startswith("dc-"))
    print(f"- Target: `datacrumbs run -- /bin/true`-sized run ≤ 150 ms with the default layers: "
          f"{total * 1000:.0f} ms when it loads the object ({'met' if total <= 0.15 else 'MISSED'})" +
          (f"; {kept * 1000:.0f} ms when it takes the object the run before kept "
           f"({'met' if kept <= 0.15 else 'MISSED'})." if kept is not None else "."))
    print(f"- Target: end of a run ≤ 100 ms after the command exits (empty ring), worst median of the "
          f"datacrumbs configs: {end * 1000:.0f} ms, {'met' if end <= 0.1 else 'MISSED'}.")
w = runs.get("dc-daemon")
if w:
    print(f"- With the daemon running (started once, its programs loaded and verified once), a command "
          f"started by `datacrumbs_wrap` took {st.median(r[0] for r in w) * 1000:.0f} ms in all; its trace "
          f"held {sys.argv[3] or '?'} of the {len(w)} `date` processes. Those runs came after the others, "
          "with the daemon's hooks attached.")
PY
}
