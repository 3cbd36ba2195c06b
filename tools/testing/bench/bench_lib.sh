# shellcheck shell=bash
# What the in-guest parts of the bench runners share; sourced, not run.
#
#   row FIELD...       one tab-separated result line, "row" first: the
#                      host side keeps these lines as the run's TSV
#   verdict MET TEXT   a goal's line, "met" if MET is 1, else "MISSED"

row() {
	local IFS=$'\t'

	echo "row${IFS}$*"
}

verdict() {
	if [ "$1" = 1 ]; then echo "  met    $2"; else echo "  MISSED $2"; fi
}
