#!/usr/bin/env bash
# Cold `bureau validate --no-cache` per bundled suite, two binaries side by side
# (docs/BENCHMARKS.md, "`bureau validate` per suite").
#
#   scripts/bench-validate.sh BEFORE_BINARY AFTER_BINARY [ROUNDS] [TMPDIRS...]
#
# For each round, suite and temporary directory (default: the system's, then /dev/shm), runs
# both binaries one after the other, 2 s apart, and prints one line per run:
#   <round> <suite> <tmpdir> <before|after> <seconds> <last line of the output>
# then the median per suite, directory and binary, and the ratio after/before.
set -euo pipefail
before=${1:?the binary to compare against}
after=${2:?the binary to measure}
rounds=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=("${TMPDIR:-/tmp}" /dev/shm)
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for round in $(seq "$rounds"); do
  for suite in starter workspace scenarios evidence history living intranet; do
    for dir in "${dirs[@]}"; do
      for which in before after; do
        bin=$before; [ "$which" = after ] && bin=$after
        sleep 2
        start=$(date +%s.%N)
        last=$(TMPDIR=$dir "$bin" validate --no-cache "suites/$suite" 2>&1 | tail -1)
        end=$(date +%s.%N)
        line="$round $suite $dir $which $(echo "$end - $start" | bc) $last"
        echo "$line"
        echo "$line" >>"$out"
      done
    done
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split()
    runs[(p[1], p[2], p[3])].append(float(p[4]))
print("\nsuite | tmpdir | before (median) | after (median) | after/before")
for (suite, d, which) in sorted({(s, d, w) for (s, d, w) in runs if w == "before"}):
    b = statistics.median(runs[(suite, d, "before")])
    a = statistics.median(runs[(suite, d, "after")])
    print(f"{suite} | {d} | {b:.2f} s | {a:.2f} s | {a / b:.2f}x")
PY
