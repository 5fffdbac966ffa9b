#!/bin/sh
# symmetry.sh: the symmetry check (e2e/symmetry_test.go, issue 22) with
# every motion count and every program's run multiplied by SCALE (default
# 12: over 1000 motions for each program and optimization level), then
# how many motions were compared.
#
#	bench/symmetry.sh [SCALE]
set -u
scale=${1:-12}
top=$(cd "$(dirname "$0")/.." && pwd)
export PATH="/usr/local/go/bin:$PATH"
cd "$top" || exit 1
REWIND_SYMMETRY_SCALE=$scale go test -count=1 -timeout 120m -run 'TestSymmetry' -v ./e2e/ 2>&1 |
	grep -E '^\s*--- (PASS|FAIL)|lands at|differ|^(ok|FAIL)'
