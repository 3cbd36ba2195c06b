#!/bin/bash
# mpirun's remote-shell agent for the MPI suites (mpi_test.sh,
# mpi_two_guests.sh), given as `--mca plm_rsh_agent` with a hostfile of
# made-up host names. Open MPI's rsh launcher runs `AGENT HOST COMMAND...`
# to start its daemon (orted) on HOST, as it would run ssh; the test
# guests have no ssh, and their "hosts" are network namespaces or the
# other guest, so the host name says where COMMAND runs:
#
#   netns-NAME      in network namespace NAME (ip netns exec NAME);
#                   netns-default: in the agent's own namespace
#   peer-A-B-C-D    on the guest at A.B.C.D (dashes: Open MPI cuts a
#                   host name at its first dot), whose agent serves requests
#                   (`mpi_rsh_agent.sh --serve`, with busybox nc) on TCP
#                   port MPI_RSH_PORT (7777): the host name and command go
#                   base64-encoded on one line, COMMAND's output comes
#                   back, and its exit status last (so mpirun sees a
#                   daemon's failure as it would through ssh)
#
# Either way COMMAND (as ssh does: the arguments joined by spaces, run by
# a shell) runs in a UTS namespace of its own whose host name is HOST, so
# that each daemon's gethostname() is the name mpirun gave its node: the
# namespaces of one guest otherwise share one host name, and both guests
# have the same one.
#
# Why an agent: the daemons then start as Open MPI starts them anywhere
# (the same orted command line, its stdio and exit status relayed), and
# mpirun, Open MPI and the MPI programs stay unmodified. Starting
# orteds by hand would need the HNP's URI and Open MPI's internal
# options; `ip netns exec mpirun ...` could not put ranks in two
# namespaces at once.
#
#   mpi_rsh_agent.sh HOST COMMAND...   (mpirun calls this)
#   mpi_rsh_agent.sh --serve [PORT]    serve peer- requests until --stop
#   mpi_rsh_agent.sh --stop A.B.C.D    end the serving agent there
set -u

port=${MPI_RSH_PORT:-7777}
self=$(readlink -f "${BASH_SOURCE[0]}")
stopfile=/tmp/mpi-rsh-agent.stop

# run_as HOST COMMAND: COMMAND by bash in a UTS namespace named HOST.
run_as() {
	exec unshare --uts bash -c 'hostname "$1" && exec bash -c "$2"' mpi-rsh "$1" "$2"
}

case ${1:-} in
--serve)
	port=${2:-$port}
	rm -f "$stopfile"
	busybox nc -ll -p "$port" -e "$self" --handle &
	server=$!
	while [ ! -e "$stopfile" ] && kill -0 "$server" 2>/dev/null; do
		sleep 0.2
	done
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
	exit 0
	;;
--handle)
	# One request on stdin (the connection): "HOST|COMMAND", base64.
	IFS= read -r line || exit 1
	req=$(printf '%s' "$line" | base64 -d) || exit 1
	host=${req%%|*}
	cmd=${req#*|}
	if [ "$cmd" = __stop__ ]; then
		touch "$stopfile"
		echo "mpi-rsh-exit 0"
		exit 0
	fi
	(run_as "$host" "$cmd") </dev/null 2>&1
	echo "mpi-rsh-exit $?"
	exit 0
	;;
--stop)
	set -- "peer-${2//./-}" __stop__
	;;
esac

# Options before the host name (none expected from Open MPI; ssh's would
# be): skipped.
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
	shift
done
[ $# -ge 2 ] || { echo "usage: ${0##*/} HOST COMMAND..." >&2; exit 255; }
host=$1
shift
cmd="$*"

case $host in
netns-default)
	run_as "$host" "$cmd"
	;;
netns-*)
	ns=${host#netns-}
	[ -e "/run/netns/$ns" ] || { echo "${0##*/}: no network namespace $ns" >&2; exit 255; }
	exec ip netns exec "$ns" unshare --uts bash -c 'hostname "$1" && exec bash -c "$2"' \
		mpi-rsh "$host" "$cmd"
	;;
peer-*)
	ip=${host#peer-}
	ip=${ip//-/.}
	exec 3<>"/dev/tcp/$ip/$port" || { echo "${0##*/}: cannot reach $ip:$port" >&2; exit 255; }
	printf '%s\n' "$(printf '%s|%s' "$host" "$cmd" | base64 -w0)" >&3
	rc=255
	while IFS= read -r line <&3; do
		case $line in
		"mpi-rsh-exit "*) rc=${line#mpi-rsh-exit } ;;
		*) printf '%s\n' "$line" ;;
		esac
	done
	exit "$rc"
	;;
*)
	echo "${0##*/}: host $host: expected netns-NAME or peer-A-B-C-D" >&2
	exit 255
	;;
esac
