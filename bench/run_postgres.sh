#!/usr/bin/env bash
# Storage-system row: Debian's PostgreSQL initialised, loaded and driven by pgbench, all under
# one traced command; prints the summary's PostgreSQL row (SYS/VFS/BLK ops and amplification).
#
# usage: sudo bash bench/run_postgres.sh [--write-doc] [SECONDS]
#
# SECONDS (default 10) is pgbench's run time. --write-doc also rewrites the PostgreSQL section
# of docs/storage-systems.md. A measurement, not a test: it exits non-zero only on errors.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

seconds=10
# shellcheck disable=SC2034 # parse_bench_args checks it; there is one run
rounds=1
parse_bench_args 8 seconds "$@"
require_tool_and_root
bin=""
for p in /usr/lib/postgresql/*/bin/pgbench; do [[ -x "$p" ]] && bin="$(dirname "$p")"; done
[[ -n "$bin" ]] || die "PostgreSQL is not installed (bash scripts/install-deps.sh)"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
data="$tmp/pg"
mkdir "$data" && chown postgres "$data"
pg="-h $data postgres"
cat >"$tmp/pg.sh" <<SH
set -e
$bin/initdb -D $data/db >/dev/null
$bin/pg_ctl -D $data/db -o "-k $data -c listen_addresses=''" -l $data/log -w start >/dev/null
$bin/pgbench -i -s 2 $pg >/dev/null 2>&1
$bin/pgbench -c 2 -T $seconds $pg >$data/bench.txt 2>&1
$bin/pg_ctl -D $data/db -w stop >/dev/null
SH
# The default probes, plus PostgreSQL's own USDT probes for transactions (its semaphores are
# counted up in the traced processes only).
cat >"$tmp/probes.yaml" <<YAML
capture_probes:
  - include: $repo/etc/datacrumbs/configs/default.yaml
  - {name: PG, probe: usdt, file: $bin/postgres, provider: postgresql, regex: "transaction__(start|commit|abort)"}
YAML
log "tracing initdb, pgbench -i -s 2, pgbench -c 2 -T $seconds"
"$dc" run --config "$tmp/probes.yaml" -o "$tmp/t.pfw.gz" --summary "$tmp/s.json" -- \
  setpriv --reuid=postgres --regid=postgres --init-groups sh "$tmp/pg.sh" 2>"$tmp/err" ||
  die "the traced run failed: $(tail -n3 "$tmp/err")"

python3 - "$tmp/s.json" "$data/bench.txt" "$seconds" >"$tmp/section.md" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1]))
bench = open(sys.argv[2]).read()
tx = re.search(r"number of transactions actually processed: (\d+)", bench)
tps = re.search(r"tps = ([\d.]+)", bench)
row = s["systems"]["PostgreSQL"]
amp = lambda v: "-" if v is None else f"{v:.3f}"
pc = s.get("page_cache", {})
print(f"pgbench -c 2 -T {sys.argv[3]}: {int(tx.group(1)):,} transactions, {float(tps.group(1)):,.0f} tps under "
      f"tracing. Trace: {s['events']['written']:,} events, {s['events']['lost']} lost, "
      f"{len(s['processes'])} processes (pgbench client included); page-cache hit ratio "
      f"{pc.get('hit_ratio') if pc.get('hit_ratio') is None else round(pc['hit_ratio'], 3)}.\n")
print("```")
print(f"{'SYSTEM':<12} {'SYS_R':>8} {'SYS_W':>8} {'VFS_R':>8} {'VFS_W':>8} {'BLK_R':>8} {'BLK_W':>8} {'R_AMP':>7} {'W_AMP':>7}")
print(f"{'PostgreSQL':<12} {row['SYS_R']:>8} {row['SYS_W']:>8} {row['VFS_R']:>8} {row['VFS_W']:>8} "
      f"{row['BLK_R']:>8} {row['BLK_W']:>8} {amp(row['R_AMP']):>7} {amp(row['W_AMP']):>7}")
print("```")
print(f"\nBytes: application read {row['app_read_bytes']:,} / wrote {row['app_write_bytes']:,}; "
      f"device read {row['device_read_bytes']:,} / wrote {row['device_write_bytes']:,}.")
pg = s["layers"].get("PG", {})
count = lambda n: pg.get(f"postgresql:transaction__{n}", {}).get("count", 0)
print(f"\nPostgreSQL's USDT probes (all its processes, initdb and pgbench -i included): "
      f"{count('start'):,} transactions started, {count('commit'):,} committed, {count('abort'):,} aborted; "
      f"pgbench counted {int(tx.group(1)):,} of its own.")
PY
cat "$tmp/section.md"
if ((write_doc)); then
  {
    echo "## PostgreSQL $("$bin/postgres" --version | grep -o '[0-9.]*' | head -n1) + pgbench ($(date -u '+%Y-%m-%d'), $(nproc) vCPUs, kernel $(uname -r))"
    echo
    echo "Reproduce (as root): \`bash bench/run_postgres.sh --write-doc $seconds\` (initdb, pg_ctl start,"
    echo "\`pgbench -i -s 2\`, \`pgbench -c 2 -T $seconds\`, pg_ctl stop, all under one \`datacrumbs run\`)."
    echo
    cat "$tmp/section.md"
  } >"$tmp/doc.md"
  write_doc_section postgres "$tmp/doc.md" "$repo/docs/storage-systems.md"
  log "wrote its section of docs/storage-systems.md"
fi
