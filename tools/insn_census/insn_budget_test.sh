#!/bin/bash
# insn_budget_test.sh INSN_BUDGET: insn_budget's arithmetic and naming
# on made-up snapshots; user addresses are named from insn_budget's own
# symbols (its `main`, through a made-up /proc/PID/maps line).
set -euo pipefail
budget=$1 elf=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
expect() { # WHAT OUTPUT LINE
	if grep -qxF -- "$3" <<<"$2"; then
		echo "ok - $1"
	else
		echo "not ok - $1: no line '$3' in:"
		awk '{ print "#   " $0 }' <<<"$2"
		fail=1
	fi
}

cat >"$dir/kallsyms" <<'K'
ffffffff81000000 T alpha
ffffffff81000100 t beta
ffffffff81000200 D some_data
ffffffffc0000000 t ptlc_put	[ptl]
K
# alpha: two instructions; beta one; ptlc_put one; some_data is not code,
# so its address counts as beta's (the last function before it).
cat >"$dir/s.0" <<'S'
ffffffff81000000 a
ffffffff81000004 a
ffffffff81000100 5
S
cat >"$dir/s.1" <<'S'
ffffffff81000000 14
ffffffff81000004 14
ffffffff81000100 5
ffffffff81000200 2
ffffffffc0000010 64
S
# Per 10: alpha (2 x 10) / 10 = 2, beta 2 / 10, ptlc_put 100 / 10.
out=$("$budget" --kallsyms "$dir/kallsyms" --per 10 "$dir/s.0" "$dir/s.1")
expect "one pair: per-function difference" "$out" $'2.0\talpha\tvmlinux'
expect "one pair: non-code symbols fold into the function before" "$out" $'0.2\tbeta\tvmlinux'
expect "one pair: module functions carry their module" "$out" $'10.0\tptlc_put\t[ptl]'
expect "one pair: total" "$out" $'12.2\ttotal\t'

# Two pairs: alpha ran 20 in the first, 60 in the second, per address
# pair; some_data's 2 in each cancels; ptlc_put ran only in the first.
cat >"$dir/s.2" <<'S'
ffffffff81000000 14
ffffffff81000004 14
ffffffff81000100 5
ffffffff81000200 2
ffffffffc0000010 64
S
cat >"$dir/s.3" <<'S'
ffffffff81000000 32
ffffffff81000004 32
ffffffff81000100 5
ffffffff81000200 4
ffffffffc0000010 64
S
out=$("$budget" --kallsyms "$dir/kallsyms" --per 10 "$dir/s.0" "$dir/s.1" "$dir/s.2" "$dir/s.3")
expect "two pairs: the difference of the differences" "$out" $'4.0\talpha\tvmlinux'
expect "two pairs: what only the first run did is negative" "$out" $'-10.0\tptlc_put\t[ptl]'
if grep -q beta <<<"$out"; then
	echo "not ok - two pairs: what both runs did cancels"
	fail=1
else
	echo "ok - two pairs: what both runs did cancels"
fi

# User addresses through a maps line and the ELF's symbols.
main=$(nm --defined-only "$elf" | awk '$3 == "main" { print $1 }')
base=555555554000
# The whole file mapped from offset 0 (a PIE's text: vaddr == file offset).
printf '%s-%s r-xp 00000000 00:00 0 %s\n' 555555554000 555555d54000 "$(realpath "$elf")" >"$dir/maps"
printf '%x 0\n' $((0x$base + 0x$main)) >"$dir/u.0"
printf '%x 7\n' $((0x$base + 0x$main)) >"$dir/u.1"
printf '%x 3\n' 0x7fff00000000 >>"$dir/u.1"
out=$("$budget" --kallsyms "$dir/kallsyms" --maps "$dir/maps" --per 1 "$dir/u.0" "$dir/u.1")
expect "user: named from the mapped file's symbols" "$out" $'7.0\tmain\t'"$(basename "$elf")"
expect "user: outside every mapping" "$out" $'3.0\t?user\t'

# Usage errors.
if "$budget" --kallsyms "$dir/kallsyms" "$dir/s.0" 2>/dev/null; then
	echo "not ok - one snapshot is refused"
	fail=1
else
	echo "ok - one snapshot is refused"
fi
exit $fail
