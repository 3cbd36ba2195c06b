# shellcheck shell=bash disable=SC2154  # moddir and ptlctl: the caller's
# The transport a two-guest suite runs over; sourced, not run.
#
# PTL_TRANSPORT=rtscts (the default): ptl_rtscts.ko, raw Ethernet frames
# on the netdev. PTL_TRANSPORT=rdma: ptl_rdma.ko over kernel verbs on a
# Soft-RoCE device (rxe0) made over the same netdev; the nid is still the
# netdev's IPv4 address. The caller sets moddir and ptlctl.
#
# transport_up NETDEV PEER_TIMEOUT_MS: loads the transport's module
# (ptl_rtscts with peer_timeout_ms; ptl_rdma with it if modinfo lists
# that parameter) and binds
# interface 0 to NETDEV. transport_down: unbinds interface 0 and unloads
# the transport's module (the rxe device stays: it belongs to the guest).
# transport_mod: the module's name (ptl_rtscts, ptl_rdma), for messages
# and rmmod.
# PTL_AUTH=1 (rtscts): interface 0 is bound with a key, the same fixed one
# on every node (ptlctl iface bind ... key FILE): every frame authenticated.

transport=${PTL_TRANSPORT:-rtscts}
case $transport in
rtscts | rdma) ;;
*)
	echo "PTL_TRANSPORT=$transport: expected rtscts or rdma" >&2
	exit 2
	;;
esac
transport_mod=ptl_$transport

# shellcheck source-path=SCRIPTDIR source=rdma_lib.sh
[ "$transport" = rdma ] && . "$(dirname "${BASH_SOURCE[0]}")/rdma_lib.sh"

transport_up() {
	local netdev=$1 timeout_ms=$2 ko=$moddir/$transport_mod.ko
	local params=() bind=(iface bind 0 dev "$netdev")

	if [ "$transport" = rdma ]; then
		[ -e "$ko" ] || { echo "# no $ko: is the rdma transport built?" >&2; return 1; }
		rdma_rxe_up "$netdev" || return 1
		bind+=(transport rdma)
	fi
	if [ "${PTL_AUTH:-0}" = 1 ]; then
		local key=/tmp/ptl-auth-key
		(umask 077 && echo "5ca1ab1e0ddba11c0ffee0000000000000000000000000000000000000002026" >$key)
		bind+=(key "$key")
	fi
	if [ "$transport" = rtscts ] ||
		modinfo -F parm "$ko" 2>/dev/null | grep -q '^peer_timeout_ms:'; then
		params+=(peer_timeout_ms="$timeout_ms")
	fi
	# PTL_RDMA_SRQ_BUFFERS: ptl_rdma's srq_buffers (rdma_two_guests.sh).
	if [ "$transport" = rdma ] && [ -n "${PTL_RDMA_SRQ_BUFFERS:-}" ]; then
		params+=(srq_buffers="$PTL_RDMA_SRQ_BUFFERS")
	fi
	insmod "$ko" "${params[@]}" && "$ptlctl" "${bind[@]}"
}

# transport_rnr LABEL: with rdma, a comment line with the RNR NAKs rxe0
# sent and received (a receive found no buffer posted: with a small
# srq_buffers, under load).
transport_rnr() {
	[ "$transport" = rdma ] || return 0
	echo "# $1: rxe0 $(rdma statistic show link rxe0/1 2>/dev/null |
		tr -s ' ' '\n' | awk 'prev ~ /rnr/ { printf "%s %s ", prev, $0 } { prev = $0 }')"
}

transport_down() {
	"$ptlctl" iface unbind 0 && rmmod "$transport_mod"
}

# peer_tell PORT [WORD]: connects to the peer node's (PEER_IP) TCP PORT,
# where the peer waits in `busybox nc -l -p PORT`, retrying for up to
# 120 s while the peer gets there, and sends WORD if given: how two
# guests wait for each other.
peer_tell() {
	local port=$1 i
	for ((i = 0; i < 600; i++)); do
		if exec 3<>"/dev/tcp/$PEER_IP/$port"; then
			[ $# -lt 2 ] || echo "$2" >&3
			exec 3>&-
			return 0
		fi 2>/dev/null
		sleep 0.2
	done
	return 1
}
